import VaultModel

// MARK: - Environment files of references (`exec --env-file`)

/// An environment file for `vaultfile exec --env-file`, as `op run --env-file` reads one: dotenv
/// lines (`VAR=value`, `export VAR=value`, quotes, `#` comments; `DotEnv`), each value either a
/// reference (`vf://NAME#FIELD`, `vf-totp://NAME`: `SecretReference`) resolved from the vault, or
/// text passed on as it is. Variable names are the portable ones, `[A-Za-z_][A-Za-z0-9_]*`, which
/// every program can read.
package enum ReferenceEnvFile {
    /// What one variable is set to.
    package enum Value: Equatable, Sendable {
        /// Stored bytes (or a code) named by a reference.
        case reference(SecretReference)
        /// Text written in the file.
        case literal([UInt8])
    }

    /// The variables of `bytes`, in the order written (a later line for the same variable wins
    /// when they are applied, as in shells). Throws `malformedInput` naming the line or variable.
    package static func parse(_ bytes: [UInt8]) throws(VaultError) -> [(variable: String, value: Value)] {
        try DotEnv.parse(bytes, now: 0).map { (variable, entry) throws(VaultError) in
            guard isPortableName(variable) else {
                throw .malformedInput("'\(variable)' is not an environment variable name a program can read (letters, digits and _, not first a digit)")
            }
            let text = String(decoding: entry.value, as: UTF8.self)
            if text.hasPrefix(SecretReference.scheme) || text.hasPrefix(SecretReference.totpScheme) {
                guard let reference = SecretReference.parse(text) else {
                    throw .malformedInput("\(variable): '\(text)' names no entry (a reference is vf://NAME or vf://NAME#FIELD)")
                }
                return (variable, .reference(reference))
            }
            return (variable, .literal(entry.value))
        }
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`.
    static func isPortableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }
}
