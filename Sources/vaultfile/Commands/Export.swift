import ArgumentParser
import SecureMemory
import VaultInterchange

extension VaultfileCommand {
    /// Writes the vault out as vaultfile JSON, dotenv, CSV, a KeePass database (KDBX 4), KeePass XML,
    /// Bitwarden JSON, or a pass store.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export the vault as json (lossless), dotenv, csv, keepass-xml or bitwarden-json (secrets in plain text), as a KeePass database (kdbx), or as a pass store (pass).",
            discussion: """
                To a terminal only with --force. --out files are written 0600, atomically; an existing file is \
                replaced only with --overwrite, and a symbolic link there is replaced itself, never followed. \
                Never over a vault or a path git treats as a vault, nor in a folder every user may write to \
                without the sticky bit. --out - is standard output. dotenv leaves out an entry whose value is \
                binary (not UTF-8 text, or a NUL), with a warning naming it; json carries it.

                kdbx writes a KDBX 4 database (Argon2id, ChaCha20) to --out, under a new password \
                (--new-password-file or -fd, else asked twice) and/or a key file (--new-keyfile); its KDF is \
                vaultfile's default Argon2id (64 MiB, t=3, p=4) unless --kdf-memory/--kdf-iterations/\
                --kdf-parallelism/--kdf-time say otherwise. Folders become groups, fields KeePass's strings \
                (totp: KeePassXC's otp), attachment.NAME fields attachments, earlier versions the history.

                keepass-xml writes KeePass 2's XML (what 'keepassxc-cli import' and KeePass's XML import \
                read), the same document as inside a kdbx export, protected values in plain text. \
                bitwarden-json writes Bitwarden's unencrypted JSON export (folders; logins, secure notes, \
                cards, identities; custom fields; password history). pass writes a pass store folder at \
                --out DIR: one file per entry, each encrypted by your own gpg to --gpg-id (repeatable; else \
                the store's .gpg-id), written beside DIR and renamed into place; DIR must not exist or be \
                empty, or be a pass store that --overwrite replaces (its .git is kept). Whatever a format \
                cannot carry (attachments, binary data, history, times…) is named in a warning with its \
                count; docs/INTERCHANGE.md says what maps where.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("format"), help: ArgumentHelp("json, dotenv, csv, kdbx, keepass-xml, bitwarden-json or pass.", valueName: "format"))
        var choice: ExportFormatChoice
        /// The format of one file `--format` names; nil for `pass`, a store folder.
        private var format: InterchangeFormat? { choice.format }
        @Option(name: .customLong("out"), help: ArgumentHelp("Write here (mode 0600, atomically) instead of stdout; - is stdout; pass: the store folder.",
                                                            valueName: "file"), completion: .file())
        var output: String?
        @Option(name: [.customLong("gpg-id"), .customLong("recipient")],
                help: ArgumentHelp("pass: encrypt to this gpg key id (repeatable; default: the store's .gpg-id).", valueName: "id"))
        var gpgIDs: [String] = []
        @Option(name: .customLong("prefix"), help: ArgumentHelp("Only entries under this prefix.", valueName: "prefix")) var prefix: String?
        @Flag(name: .customLong("force"), help: "Print to a terminal.") var force = false
        @Flag(name: .customLong("overwrite"), help: "Replace an existing --out file (never a vault).") var overwrite = false
        @Flag(name: .customLong("json"), help: "With --out: print a summary as JSON on stdout (docs/JSON.md).") var json = false
        @Flag(name: .customLong("with-history"), help: "With --format json: also every earlier version and the trash (export version 2).")
        var withHistory = false
        @Option(name: .customLong("new-password-file"), help: ArgumentHelp("kdbx: read the database's new password from this file.", valueName: "file"),
                completion: .file()) var newPasswordFile: String?
        @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("kdbx: read the database's new password from this descriptor.", valueName: "n"))
        var newPasswordFD: Int32?
        @Option(name: .customLong("new-keyfile"), help: ArgumentHelp("kdbx: protect the database with this key file too (KeePass's key file forms).", valueName: "file"),
                completion: .file()) var newKeyFile: String?
        @Flag(name: .customLong("no-new-password"), help: "kdbx: no password, the key file alone (--new-keyfile) opens the database.")
        var noNewPassword = false
        @OptionGroup(title: "The KeePass database's key derivation (kdbx; default Argon2id 64M, t=3, p=4)") var kdf: KDFOptions

        /// The file `--out` names: none for `-`, which means standard output, as for most tools
        /// (a file named `-` is `--out ./-`).
        private var file: String? { output == "-" ? nil : output }

        func validate() throws {
            if choice.isPassStore { return try validatePassStore() }
            guard let format, format.canExport else {
                throw ValidationError("\(choice.name) is an import format only; export writes \(ExportFormatChoice.writtenList)")
            }
            if !gpgIDs.isEmpty { throw ValidationError("--gpg-id goes with --format pass") }
            let kdbxOnly = newPasswordFile != nil || newPasswordFD != nil || newKeyFile != nil || noNewPassword || kdf.isSpecified
            if kdbxOnly && format != .kdbx {
                throw ValidationError("--new-password-file, --new-password-fd, --new-keyfile, --no-new-password and the --kdf options go with --format kdbx")
            }
            if format == .kdbx {
                guard file != nil else { throw ValidationError("--format kdbx writes a database file: give --out FILE") }
                if newPasswordFile != nil && newPasswordFD != nil { throw ValidationError("give at most one of --new-password-file and --new-password-fd") }
                if noNewPassword && (newKeyFile == nil || newPasswordFile != nil || newPasswordFD != nil) {
                    throw ValidationError("--no-new-password needs --new-keyfile and no new password option")
                }
            }
            if json && file == nil {
                throw ValidationError("--json prints a summary of an --out export; without --out, standard output holds the export itself")
            }
            if withHistory && format != .json { throw ValidationError("--with-history goes with --format json, the one format that carries history") }
        }

        func run() throws {
            if file == nil && StandardOutput.isTerminal && !force {
                throw CLIError.refused("refusing to print every secret to the terminal", hint: "redirect the output, use --out FILE, or pass --force")
            }
            guard let format else { return try exportPassStore(to: output ?? "") }
            let target = try file.map { try PlaintextOutput($0, vault: unlock.location.path, overwrite: overwrite) }
            if format == .kdbx, let file, let target { return try exportKDBX(to: file, target: target) }
            let vault = try unlock.open().vault
            var skipped: [String] = [], losses: [ExportLoss] = []
            var bytes: [UInt8]
            switch format {
            case .keepassXML: (bytes, losses) = try { let written = try KeePassXMLExport.write(vault, prefix: prefix ?? ""); return (written.bytes, written.losses) }()
            case .bitwardenJSON: (bytes, losses) = try { let written = try BitwardenJSONExport.write(vault, prefix: prefix ?? ""); return (written.bytes, written.losses) }()
            default: bytes = try Interchange.export(vault, format: format, prefix: prefix ?? "", withHistory: withHistory, skipped: &skipped)
            }
            defer { wipe(&bytes) }
            for loss in losses { Messages.warning("\(format.rawValue): \(loss.description)") }
            if !skipped.isEmpty {
                let names = skipped.map { "'\(Messages.escaped($0))'" }.joined(separator: ", ")
                Messages.warning("left out \(ChangeReport.entries(skipped.count)) holding binary data, which dotenv cannot carry: "
                                 + "\(names) (export --format json carries them)")
            }
            if let file, let target {
                try target.write(bytes)
                let count = vault.names(withPrefix: prefix ?? "").count - skipped.count
                Messages.info("exported \(ChangeReport.entries(count)) to \(file)")
                if json {
                    try StandardOutput.line(JSON.object([
                        ("path", .string(file)), ("format", .string(format.rawValue)),
                        ("prefix", prefix.map(JSON.string) ?? .null), ("exported", .int(Int64(count))),
                        ("skipped", .array(skipped.map(JSON.string))), ("not_carried", Self.notCarriedJSON(losses)),
                    ]).text)
                }
            } else {
                try StandardOutput.write(bytes)
            }
        }

        /// The `not_carried` list of `--json` (docs/JSON.md).
        static func notCarriedJSON(_ losses: [ExportLoss]) -> JSON {
            .array(losses.map { JSON.object([("kind", .string($0.kind)), ("count", .int(Int64($0.count)))]) })
        }
    }
}
