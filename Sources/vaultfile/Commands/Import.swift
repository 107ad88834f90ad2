import ArgumentParser
import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

extension InterchangeFormat: ExpressibleByArgument {}

extension VaultfileCommand {
    /// Brings entries in from vaultfile JSON, dotenv, CSV, KeePassXC CSV or Bitwarden JSON; all or nothing.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import entries from json, dotenv, csv, keepassxc-csv or bitwarden-json; all or nothing.",
            discussion: """
                The file (or stdin) is read and checked completely first. Existing entries are not replaced \
                unless --overwrite is given; then nothing is written at all. Formats: docs/INTERCHANGE.md.

                Names are stored in Unicode NFC; titles of other tools' exports are cleaned ('/' becomes '-') \
                and numbered when taken (' (2)'). Each name that is not what the file held is printed on \
                stderr, and listed by --json (docs/JSON.md). A name that is an existing entry's in another \
                Unicode form is refused.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("format"), help: "json, dotenv, csv, keepassxc-csv or bitwarden-json.") var format: InterchangeFormat
        @Argument(help: "The file to import (default: stdin).", completion: .file()) var file: String?
        @Flag(name: .customLong("overwrite"), help: "Replace entries that exist already.") var overwrite = false
        @Flag(name: .customLong("json"), help: "Print a summary as JSON on stdout, renamed entries included (docs/JSON.md).") var json = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        func run() throws {
            var bytes = try file.map(Input.readFile) ?? Input.readAll(STDIN_FILENO, what: "standard input")
            defer { wipe(&bytes) }
            let imported = try Interchange.read(bytes, format: format)
            let entries = imported.entries
            let (added, replaced) = try unlock.update { unlocked -> (Int, Int) in
                let existing = entries.filter { unlocked.vault.contains($0.name) }.map(\.name)
                if !existing.isEmpty && !overwrite {
                    let shown = existing.prefix(5).map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ")
                    throw CLIError.refused("\(existing.count) entries exist already (\(shown)\(existing.count > 5 ? ", …" : "")); nothing was imported",
                                           hint: "pass --overwrite to replace them")
                }
                for (name, _) in entries {
                    try unlocked.vault.checkNewName(name, allowingFormatCharacters: formatCharacters.allowFormatCharacters)
                }
                if let twin = unlocked.vault.canonicalTwins(of: entries.map(\.name)).first {
                    throw VaultError.nameTwin(name: twin.name, existing: twin.existing)
                }
                for (name, entry) in entries { try unlocked.vault.put(entry, as: name) }
                return (entries.count - existing.count, existing.count)
            }
            for renaming in imported.renamings {
                Messages.info("vaultfile: renamed '\(renaming.original)' to '\(renaming.name)' (\(renaming.reasons.map(\.explanation).joined(separator: "; ")))")
            }
            for warning in imported.warnings { Messages.warning(warning.description) }
            Messages.info("imported \(entries.count) entries from \(file ?? "stdin") (\(added) new, \(replaced) replaced)")
            if json {
                try StandardOutput.line(JSON.object([
                    ("source", file.map(JSON.string) ?? .null),
                    ("format", .string(format.rawValue)),
                    ("imported", .int(Int64(entries.count))),
                    ("added", .int(Int64(added))),
                    ("replaced", .int(Int64(replaced))),
                    ("renamed", .array(imported.renamings.map { renaming in
                        .object([("from", .string(renaming.original)), ("to", .string(renaming.name)),
                                 ("reasons", .array(renaming.reasons.map { .string($0.name) }))])
                    })),
                ]).text)
            }
        }
    }
}
