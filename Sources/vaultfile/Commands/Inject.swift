import ArgumentParser
import SecureMemory
import VaultFile
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
                The template comes from stdin or --in; the result goes to stdout or --out (created 0600, \
                atomically). A reference to a missing entry fails, naming it and its line, and writes nothing.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("in"), help: ArgumentHelp("The template file (default: stdin).", valueName: "file")) var input: String?
        @Option(name: .customLong("out"), help: ArgumentHelp("Write the result here, mode 0600, atomically.", valueName: "file")) var output: String?

        func run() throws {
            let template = try input.map(Input.readFile) ?? Input.readAll(STDIN_FILENO, what: "standard input")
            let vault = try unlock.open().vault
            var rendered = try Template.render(template) { (reference) throws(VaultError) -> [UInt8] in
                guard let entry = vault.entry(reference.name) else {
                    throw .referenceNotFound(reference.name, line: reference.line)
                }
                guard let field = reference.field else { return entry.value }
                guard let value = entry.fields[field] else {
                    throw .referenceNotFound("\(reference.name)#\(field)", line: reference.line)
                }
                return value
            }
            defer { wipe(&rendered) }
            if let output {
                try VaultStore(path: output).writeAtomically(rendered)
            } else {
                try StandardOutput.write(rendered)
            }
        }
    }
}
