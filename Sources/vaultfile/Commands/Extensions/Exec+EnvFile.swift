import VaultFormat
import VaultInterchange
import VaultModel

// MARK: - exec --env-file

extension VaultfileCommand.Exec {
    /// One variable an environment file sets: its name, where it came from (for messages: the
    /// reference or the file, never a value) and its value.
    struct FileVariable {
        var name: String
        var source: String
        var value: String
    }

    /// The lines of the environment file at `path` (ReferenceEnvFile: dotenv lines whose values are
    /// references or text), bounded by the largest value a vault holds; a syntax error names the file.
    static func readEnvFile(_ path: String) throws -> [(variable: String, value: ReferenceEnvFile.Value)] {
        let bytes = try Input.readFile(path, purpose: "--env-file")
        do {
            return try ReferenceEnvFile.parse(bytes)
        } catch {
            guard case .malformedInput(let why) = error else { throw error }
            throw VaultError.malformedInput("--env-file \(path): \(why)")
        }
    }

    /// The variables of `files` (each file's lines, in order), with their values: a reference resolved
    /// from `vault` (a missing entry or field names the reference, the variable and the file), text as
    /// written; a later line for the same variable wins, across files too, and the lines it overrides
    /// are not resolved (nor checked). A variable that an entry sets too (`entries`)
    /// is an error, and one that makes programs run other code needs --allow-env, as for entries.
    static func resolve(_ files: [(path: String, lines: [(variable: String, value: ReferenceEnvFile.Value)])], in vault: Vault,
                        beside entries: [EnvironmentNames.Binding], allowEnv: [String]) throws -> [FileVariable] {
        // The line that wins for each variable (file, line): a line a later one overrides is never
        // resolved, so a reference in a shared file may name an entry this vault lacks.
        var winner: [String: (file: Int, line: Int)] = [:]
        for (fileIndex, file) in files.enumerated() {
            for (lineIndex, line) in file.lines.enumerated() { winner[line.variable] = (fileIndex, lineIndex) }
        }
        var result: [FileVariable] = []
        for (fileIndex, (path, lines)) in files.enumerated() {
            for (lineIndex, (variable, value)) in lines.enumerated() {
                guard let last = winner[variable], last == (fileIndex, lineIndex) else { continue }
                let resolved: FileVariable
                switch value {
                case .literal(let bytes):
                    resolved = FileVariable(name: variable, source: "the text of \(variable) in \(path)", value: String(decoding: bytes, as: UTF8.self))
                case .reference(let reference):
                    resolved = FileVariable(name: variable, source: reference.text,
                                            value: try text(of: reference, in: vault, place: "\(variable) in \(path)"))
                }
                if let entry = entries.first(where: { $0.variable == variable }) {
                    throw VaultError.environmentVariableClash(entry.reference, resolved.source, variable: variable)
                }
                if isGuarded(variable) && !allowEnv.contains(variable) {
                    throw CLIError.refused(
                        "refusing to set \(variable) from \(path) without --allow-env \(variable): that variable can make programs load or run other code",
                        hint: "remove the line from the file, or pass --allow-env \(variable) if the command needs it")
                }
                result.removeAll { $0.name == variable }
                result.append(resolved)
            }
        }
        return result
    }

    /// The text `reference` names in `vault`: a value or field that is UTF-8 without NUL (what an
    /// environment variable can carry), or the current TOTP code.
    private static func text(of reference: SecretReference, in vault: Vault, place: String) throws -> String {
        do {
            if reference.isTOTP {
                return try OneTimePassword.totp(vault.totpParameters(of: reference.name), at: currentTimeMilliseconds() / 1000).code
            }
            let text = try vault.withValue(of: reference.name, part: reference.part) { bytes -> String? in
                guard !bytes.contains(0) else { return nil }
                return String(validating: bytes, as: UTF8.self)
            }
            guard let text else {
                throw CLIError.refused("\(reference.text) (\(place)) holds binary data (a NUL byte or invalid UTF-8), which an environment variable cannot carry",
                                       hint: "read it with 'vaultfile read' into a file instead")
            }
            return text
        } catch let error as VaultError {
            switch error {
            case .entryNotFound, .fieldNotFound: throw CLIError.referenceNotFound(reference: reference.text, why: error.description, place: place)
            default: throw error
            }
        }
    }
}
