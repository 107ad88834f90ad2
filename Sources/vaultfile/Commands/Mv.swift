import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Renames an entry, or every entry under a folder; refuses to replace existing ones without --force.
    struct Mv: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mv",
            abstract: "Rename an entry, or every entry under a folder.",
            discussion: """
                OLD ending in '/' (or naming no entry but entries under OLD/) is a folder: 'mv prod/ live/' \
                renames prod/db to live/db and so on. NEW ending in '/' moves an entry into that folder. \
                --dry-run prints what would move and changes nothing.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The current name, or a folder such as prod/.", completion: EntryCompletion.names) var old: String
        @Argument(help: "The new name, or a folder such as live/.") var new: String
        @Flag(name: Table.force.long, help: "Replace existing entries with the new names.") var force = false
        @Flag(name: Table.dryRun.long, help: "Print what would move; change nothing.") var dryRun = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        func validate() throws {
            // A folder is checked as the name it is without its '/'.
            let checked = new.hasSuffix("/") ? String(new.dropLast()) : new
            do { _ = try EntryName.validate(checked) } catch { throw ValidationError(error.description) }
        }

        func run() throws {
            if dryRun {
                var vault = try unlock.open().vault
                try ChangeReport.would("move", try move(in: &vault))
                return
            }
            var isFolder = false
            let moved = try unlock.update { unlocked in
                isFolder = Self.isFolder(old, in: unlocked.vault)
                return try move(in: &unlocked.vault)
            }
            if isFolder { Messages.info("moved \(ChangeReport.entries(moved.count)) from \(Vault.folder(old)) to \(Vault.folder(new))") }
        }

        /// Moves what the command line names and returns what moved where.
        private func move(in vault: inout Vault) throws -> [Relocation] {
            let allow = formatCharacters.allowFormatCharacters
            if Self.isFolder(old, in: vault) {
                // Every new name is checked against the vault before the move: afterwards each exists and would pass.
                for step in try vault.folderPlan(from: old, to: new, overwrite: force, moving: true) {
                    try vault.checkNewName(step.destination, allowingFormatCharacters: allow)
                }
                return try vault.moveFolder(old, to: new, overwrite: force)
            }
            let target = Self.destination(of: old, to: new)
            let replaces = target != old && vault.contains(target)
            try Self.apply(to: &vault, old: old, new: target, force: force, allowFormatCharacters: allow)
            return [Relocation(source: old, destination: target, replaces: replaces)]
        }

        /// Whether `name` means a folder: it ends with '/', or names no entry but has entries under `name/`.
        static func isFolder(_ name: String, in vault: Vault) -> Bool {
            name.hasSuffix("/") || (!vault.contains(name) && !vault.names(under: name).isEmpty)
        }

        /// The new name of the entry `source`: `destination`, or inside it when it ends with '/' (as mv(1) moves into a folder).
        static func destination(of source: String, to destination: String) -> String {
            guard destination.hasSuffix("/") else { return destination }
            return destination + (source.split(separator: "/").last.map(String.init) ?? source)
        }

        /// Renames `old` to `new`, over an existing entry only with `force`; the one path of `mv`, on the command line and in `batch`.
        static func apply(to vault: inout Vault, old: String, new: String, force: Bool, allowFormatCharacters: Bool) throws {
            try vault.checkNewName(new, allowingFormatCharacters: allowFormatCharacters)
            try vault.rename(old, to: new, overwrite: force)
        }
    }
}

// MARK: - The option table

extension VaultfileCommand.Mv {
    /// `mv`'s own options (its groups have their own tables): named by the declarations above and
    /// by `batch`'s mv lines.
    enum Table: String, OptionTable {
        case force, dryRun = "dry-run"

        var kind: OptionKind { .flag }
    }
}
