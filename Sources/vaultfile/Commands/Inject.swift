import ArgumentParser
import SecureMemory
import VaultInterchange
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Renders a template, replacing `{{ vf://NAME }}` and `{{ vf://NAME#FIELD }}` with stored bytes.
    struct Inject: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inject",
            abstract: "Fill {{ vf://NAME }} and {{ vf://NAME#FIELD }} in a template with stored values.",
            discussion: """
                The template comes from stdin or --in; the result goes to stdout or --out (written 0600, \
                atomically). A reference to a missing entry fails, naming it and its line, and writes nothing. \
                An existing --out file is replaced only with --overwrite, and a symbolic link there is replaced \
                itself, never followed. Never over a vault or a path git treats as a vault, nor in a folder \
                every user may write to without the sticky bit.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("in"), help: ArgumentHelp("The template file (default: stdin).", valueName: "file"), completion: .file()) var input: String?
        @Option(name: .customLong("out"), help: ArgumentHelp("Write the result here, mode 0600, atomically.", valueName: "file"), completion: .file()) var output: String?
        @Flag(name: .customLong("overwrite"), help: "Replace an existing --out file (never a vault).") var overwrite = false

        func run() throws {
            let template = try input.map(Input.readFile) ?? Input.readAll(STDIN_FILENO, what: "standard input")
            let target = try output.map { try PlaintextOutput($0, vault: unlock.location.path, overwrite: overwrite) }
            let vault = try unlock.open(entriesOnly: true, handingValues: true).vault
            var rendered = try Template.render(template, from: vault)
            defer { wipe(&rendered) }
            if let target {
                try target.write(rendered)
            } else {
                try StandardOutput.write(rendered)
            }
        }
    }
}
