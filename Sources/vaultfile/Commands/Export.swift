import ArgumentParser
import SecureMemory
import VaultInterchange

extension VaultfileCommand {
    /// Writes the vault out as vaultfile JSON, dotenv or CSV.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export the vault as json (lossless), dotenv or csv; this writes secrets in plain text.",
            discussion: """
                To a terminal only with --force. --out files are written 0600, atomically; an existing file is \
                replaced only with --overwrite, and a symbolic link there is replaced itself, never followed. \
                Never over a vault or a path git treats as a vault, nor in a folder every user may write to \
                without the sticky bit. --out - is standard output. dotenv leaves out an entry whose value is \
                binary (not UTF-8 text, or a NUL), with a warning naming it; json carries it.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("format"), help: "json, dotenv or csv.",
                completion: .list(InterchangeFormat.allCases.filter(\.canExport).map(\.rawValue))) var format: InterchangeFormat
        @Option(name: .customLong("out"), help: ArgumentHelp("Write here (mode 0600, atomically) instead of stdout; - is stdout.", valueName: "file"), completion: .file())
        var output: String?
        @Option(name: .customLong("prefix"), help: ArgumentHelp("Only entries under this prefix.", valueName: "prefix")) var prefix: String?
        @Flag(name: .customLong("force"), help: "Print to a terminal.") var force = false
        @Flag(name: .customLong("overwrite"), help: "Replace an existing --out file (never a vault).") var overwrite = false
        @Flag(name: .customLong("json"), help: "With --out: print a summary as JSON on stdout (docs/JSON.md).") var json = false
        @Flag(name: .customLong("with-history"), help: "With --format json: also every earlier version and the trash (export version 2).")
        var withHistory = false

        /// The file `--out` names: none for `-`, which means standard output, as for most tools
        /// (a file named `-` is `--out ./-`).
        private var file: String? { output == "-" ? nil : output }

        func validate() throws {
            guard format.canExport else { throw ValidationError("\(format.rawValue) is an import format only; export json, dotenv or csv") }
            if json && file == nil {
                throw ValidationError("--json prints a summary of an --out export; without --out, standard output holds the export itself")
            }
            if withHistory && format != .json { throw ValidationError("--with-history goes with --format json, the one format that carries history") }
        }

        func run() throws {
            if file == nil && StandardOutput.isTerminal && !force {
                throw CLIError.refused("refusing to print every secret to the terminal", hint: "redirect the output, use --out FILE, or pass --force")
            }
            let target = try file.map { try PlaintextOutput($0, vault: unlock.location.path, overwrite: overwrite) }
            let vault = try unlock.open().vault
            var skipped: [String] = []
            var bytes = try Interchange.export(vault, format: format, prefix: prefix ?? "", withHistory: withHistory, skipped: &skipped)
            defer { wipe(&bytes) }
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
                        ("skipped", .array(skipped.map(JSON.string))),
                    ]).text)
                }
            } else {
                try StandardOutput.write(bytes)
            }
        }
    }
}
