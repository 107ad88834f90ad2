import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Copies an entry, or every entry under a folder; refuses to replace existing ones without --force.
    struct Cp: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cp",
            abstract: "Copy an entry (value and fields), or every entry under a folder.",
            discussion: """
                The copies are new entries (created now). SOURCE ending in '/' (or naming no entry but entries \
                under SOURCE/) is a folder: 'cp prod/ qa/' copies prod/db to qa/db and so on. DESTINATION \
                ending in '/' copies an entry into that folder. --dry-run prints what would be copied and \
                changes nothing.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry to copy, or a folder such as prod/.") var source: String
        @Argument(help: "The new name, or a folder such as qa/.") var destination: String
        @Flag(name: .customLong("force"), help: "Replace existing entries with the new names.") var force = false
        @Flag(name: .customLong("dry-run"), help: "Print what would be copied; change nothing.") var dryRun = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        func validate() throws {
            let checked = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
            do { _ = try EntryName.validate(checked) } catch { throw ValidationError(error.description) }
        }

        func run() throws {
            if dryRun {
                var vault = try unlock.open().vault
                try ChangeReport.would("copy", try copy(in: &vault))
                return
            }
            var isFolder = false
            let copied = try unlock.update { unlocked in
                isFolder = Mv.isFolder(source, in: unlocked.vault)
                return try copy(in: &unlocked.vault)
            }
            if isFolder {
                Messages.info("copied \(ChangeReport.entries(copied.count)) from \(Vault.folder(source)) to \(Vault.folder(destination))")
            } else if let copy = copied.first {
                // One entry too: the new name is not always the one typed (DESTINATION/ takes the source's last part).
                Messages.info("copied \(copy.source) to \(copy.destination)\(copy.replaces ? " (replacing the entry there)" : "")")
            }
        }

        /// Copies what the command line names and returns what was copied where.
        private func copy(in vault: inout Vault) throws -> [Relocation] {
            try Self.apply(to: &vault, source: source, destination: destination, force: force,
                           allowFormatCharacters: formatCharacters.allowFormatCharacters)
        }

        /// Copies `source` (an entry or a folder) to `destination` and returns what was copied
        /// where: the one copy of `cp` and of a batch's `cp` line. A new name with format
        /// characters is refused as `mv` refuses it (nothing is written).
        static func apply(to vault: inout Vault, source: String, destination: String, force: Bool,
                          allowFormatCharacters allow: Bool) throws -> [Relocation] {
            if Mv.isFolder(source, in: vault) {
                // Checked before the copy: afterwards every new name exists and would pass.
                for step in try vault.folderPlan(from: source, to: destination, overwrite: force, moving: false) {
                    try vault.checkNewName(step.destination, allowingFormatCharacters: allow)
                }
                let copied = try vault.copyFolder(source, to: destination, overwrite: force)
                // Twins are looked for among the copies too (an error here still writes nothing).
                for relocation in copied { try Self.refuseTwin(of: relocation.destination, in: vault) }
                return copied
            }
            let target = Mv.destination(of: source, to: destination)
            try vault.checkNewName(target, allowingFormatCharacters: allow)
            try Self.refuseTwin(of: target, in: vault)
            return [try vault.copy(source, to: target, overwrite: force)]
        }

        /// Refuses `name` when another entry is the same name in another Unicode form, as set and mv do.
        private static func refuseTwin(of name: String, in vault: Vault) throws {
            if let twin = vault.canonicalTwin(of: name) { throw VaultError.nameTwin(name: name, existing: twin) }
        }
    }
}
