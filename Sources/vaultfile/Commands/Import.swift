import ArgumentParser
import SecureMemory
import VaultInterchange
import VaultModel
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
                Reads FILE (or stdin) in the format --format names, checks all of it, then stores every \
                entry in one change, or none:
                  json            vaultfile's 'export --format json': values, fields, times
                  dotenv          KEY=value lines; each KEY is an entry name as it is
                  csv             a header line: name, value, then one column per field
                  keepassxc-csv   'keepassxc-cli export --format csv'; name: group/title
                  bitwarden-json  Bitwarden's unencrypted JSON export; name: folder/item
                  pass            a pass/gopass store folder (default ~/.password-store), each .gpg file \
                decrypted by your own gpg
                  passage         a passage store folder, each .age file decrypted by age with \
                PASSAGE_IDENTITIES_FILE (default ~/.passage/identities)
                  ansible-vault   an ansible-vault file, or a YAML file's !vault values; its password from \
                --source-password-file/-fd/-command or a prompt
                  sops            a sops YAML or JSON file encrypted to an age key (SOPS_AGE_KEY_FILE)
                Details and samples of each: docs/INTERCHANGE.md.

                Clashes: when a name in the file is already an entry of the vault, nothing is imported and \
                the command lists those names (exit 2); with --overwrite each such entry is replaced whole \
                (value and fields), and the others are added. A name that is an existing entry's name in \
                another Unicode form is refused (exit 2) whatever the options.

                Names are stored in Unicode NFC. Titles from keepassxc-csv and bitwarden-json are cleaned \
                ('/' in a title becomes '-'), and a title that repeats within its folder is numbered \
                ('db01 (2)'). Each name stored differently from the file is printed on stderr, and listed \
                by --json (docs/JSON.md).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("format"), help: "The file's format: json, dotenv, csv, keepassxc-csv or bitwarden-json (see above).") var format: InterchangeFormat
        @Argument(help: "The file to import (default: stdin).", completion: .file()) var file: String?
        @Flag(name: .customLong("overwrite"), help: "Replace entries whose names exist already (without it, such a clash imports nothing).") var overwrite = false
        @Flag(name: .customLong("json"), help: "Print a summary as JSON on stdout, renamed entries included (docs/JSON.md).") var json = false
        @OptionGroup var formatCharacters: FormatCharacterOption
        @OptionGroup(title: "The imported file's own password (ansible-vault)") var sourcePassword: SourcePasswordOptions

        func validate() throws {
            if sourcePassword.isGiven && format != .ansibleVault {
                throw ValidationError("--source-password-file, --source-password-fd and --source-password-command go with --format ansible-vault")
            }
        }

        func run() throws {
            let imported: ImportedEntries
            if CryptImport.handles(format) {
                // pass, passage, ansible-vault, sops: decrypted here (gpg, age, the file's password), built by the one builder.
                let foreign = try CryptImport.read(format: format, path: file, sourcePassword: sourcePassword)
                imported = try foreign.entries(now: currentTimeMilliseconds(), options: ForeignBuildOptions())
                // Until the builder reports losses itself (issue 44's framework part): each one said.
                for (what, count) in foreign.notKept.sorted(by: { $0.key < $1.key }) {
                    Messages.warning("not imported: \(what) (\(count))")
                }
            } else {
                var bytes = try file.map(Input.readFile) ?? Input.readAll(STDIN_FILENO, what: "standard input")
                defer { wipe(&bytes) }
                imported = try Interchange.read(bytes, format: format)
            }
            let (added, replaced) = try unlock.update { unlocked -> (Int, Int) in
                // The names as strings only where a check needs them: an import into an empty vault
                // of ASCII names needs none (the entries may be records, ImportRecords.swift).
                let names = unlocked.vault.count == 0 && !imported.hasNonASCIIName ? [] : imported.names
                let existing = unlocked.vault.count == 0 ? [] : names.filter { unlocked.vault.contains($0) }
                if !existing.isEmpty && !overwrite {
                    let shown = existing.prefix(5).map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ")
                    throw CLIError.refused("\(ChangeReport.entries(existing.count)) \(existing.count == 1 ? "exists" : "exist") already (\(shown)\(existing.count > 5 ? ", …" : "")); nothing was imported",
                                           hint: existing.count == 1 ? "pass --overwrite to replace it" : "pass --overwrite to replace them")
                }
                // Every name passed the rules of all names (Interchange.read); what is left is the
                // format characters of new names, which an ASCII name cannot hold.
                for name in names where name.utf8.contains(where: { $0 >= 0x80 }) {
                    try unlocked.vault.checkNewName(name, allowingFormatCharacters: formatCharacters.allowFormatCharacters)
                }
                // An empty vault has no twin of any name.
                if unlocked.vault.count > 0, let twin = unlocked.vault.canonicalTwins(of: names).first {
                    throw VaultError.nameTwin(name: twin.name, existing: twin.existing)
                }
                if imported.history != nil && !unlocked.vault.keepsHistory {
                    throw CLIError.refused("the file holds earlier versions (an export made with --with-history), and \(unlock.location.path) keeps no history; nothing was imported",
                                           hint: "turn history on with 'vaultfile history --enable' first (older releases then cannot read the vault), or export again without --with-history")
                }
                try unlocked.vault.put(contentsOf: imported)
                for (name, versions) in imported.history ?? [] { try unlocked.vault.importHistory(versions, for: name) }
                return (imported.count - existing.count, existing.count)
            }
            for renaming in imported.renamings {
                Messages.info("vaultfile: renamed '\(renaming.original)' to '\(renaming.name)' (\(renaming.reasons.map(\.explanation).joined(separator: "; ")))")
            }
            for warning in imported.warnings { Messages.warning(warning.description) }
            Messages.info("imported \(ChangeReport.entries(imported.count)) from \(file ?? "stdin") (\(added) new, \(replaced) replaced)")
            if json {
                try StandardOutput.line(JSON.object([
                    ("source", file.map(JSON.string) ?? .null),
                    ("format", .string(format.rawValue)),
                    ("imported", .int(Int64(imported.count))),
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
