import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Removes an entry, or one field of it, or with -r every entry under a folder.
    struct Rm: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove an entry (or one of its fields), or with -r every entry under a folder.",
            discussion: """
                A name ending in '/' (or a name that is no entry but has entries under NAME/) is a folder: \
                it is removed only with -r, which removes every entry under it (and, for NAME without '/', \
                the entry NAME too). --dry-run prints what would be removed and changes nothing.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name, or with -r a folder such as prod/.", completion: EntryCompletion.names) var name: String
        @Option(name: Table.field.long, help: ArgumentHelp("Remove only this field.", valueName: "field"))
        var field: String?
        @Flag(name: [.customShort("r"), .customLong(Table.recursive.rawValue)], help: "Remove every entry under the folder NAME/.")
        var recursive = false
        @Flag(name: Table.dryRun.long, help: "Print what would be removed; change nothing.") var dryRun = false

        func validate() throws {
            if recursive && field != nil { throw ValidationError("-r removes whole entries; it cannot be combined with --field") }
        }

        func run() throws {
            if dryRun {
                var vault = try unlock.open().vault
                try ChangeReport.wouldRemove(try remove(from: &vault))
                return
            }
            let removed = try unlock.update { unlocked in try remove(from: &unlocked.vault) }
            if recursive {
                let folder = Vault.folder(name)
                let which = removed.first == name ? "\(name) and those under \(folder)" : "under \(folder)"
                Messages.info("removed \(ChangeReport.entries(removed.count)) \(which)")
            }
        }

        /// Removes what the command line names from `vault` and returns it (`NAME#FIELD` for a field).
        ///
        /// The entry NAME is looked up as every lookup is: its exact bytes, then its NFC form
        /// (EntryName+Normalization.swift), so a name typed decomposed removes the entry stored composed.
        private func remove(from vault: inout Vault) throws -> [String] {
            let folder = Vault.folder(name)
            let stored = name.hasSuffix("/") ? nil : vault.existingName(for: name)
            if recursive {
                var removed: [String] = []
                if let stored {
                    try vault.remove(stored)
                    removed.append(stored)
                    if vault.names(under: folder).isEmpty { return removed }
                }
                if vault.names(under: folder).isEmpty {
                    _ = try EntryName.validate(String(folder.dropLast()))  // a malformed name is a usage error first
                    throw CLIError.nothingUnder(folder: folder, entry: name.hasSuffix("/") ? nil : name)
                }
                return removed + (try vault.removeFolder(folder))
            }
            if name.hasSuffix("/") || (field == nil && stored == nil) {
                let count = vault.names(under: folder).count
                guard count > 0 else {
                    if name.hasSuffix("/") { throw CLIError.nothingUnder(folder: folder, entry: nil) }
                    throw VaultError.entryNotFound(name)
                }
                throw CLIError.refused("'\(folder)' is a folder of \(ChangeReport.entries(count)); rm without -r removes one entry",
                                       hint: "pass -r to remove every entry under \(folder)")
            }
            let part = EntryPart(field: field)
            try Self.apply(to: &vault, name: name, part: part)
            return [part.reference(to: name)]
        }

        /// Removes `part` of `name` (the value: the whole entry); the one path of `rm`, on the command line and in `batch`.
        static func apply(to vault: inout Vault, name: String, part: EntryPart) throws {
            try vault.removeValue(for: name, part: part)
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Rm {
    /// `rm`'s own long options (the unlock options have their own tables): named by the
    /// declarations above, by its quick reading and by `batch`'s rm lines. `-r` is a short option,
    /// which ArgumentParser reads (`--recursive` is read here).
    enum Table: String, QuickOptionTable {
        case field, recursive, dryRun = "dry-run"

        var kind: OptionKind {
            switch self {
            case .recursive, .dryRun: .flag
            case .field: .option
            }
        }

        func read(from arguments: inout QuickArguments, into rm: inout VaultfileCommand.Rm) {
            switch self {
            case .field: rm.field = arguments.string(self)
            case .recursive: rm.recursive = arguments.flag(self)
            case .dryRun: rm.dryRun = arguments.flag(self)
            }
        }
    }

    /// What `rm` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, positionals: 1).adding(UnlockOptions.quickGrammar)

    /// `rm` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var rm = Self()
            rm.unlock = try UnlockOptions.quick(&arguments)
            rm.name = try arguments.positional()
            try arguments.read(Table.self, into: &rm)
            return rm
        }
    }
}
