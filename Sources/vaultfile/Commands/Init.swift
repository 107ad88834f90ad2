import ArgumentParser
import KDF
import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Creates a new, empty vault; never overwrites an existing file.
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create a new, empty vault.",
            discussion: """
                The new password comes from the password sources, or is asked twice on the terminal. \
                Defaults: Argon2id 64 MiB, t=3, p=4. Settings below OWASP's minimum need --allow-weak-kdf.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions

        func run() throws {
            let store = unlock.location.store
            if store.exists { throw VaultError.vaultExists(path: store.path) }
            let parameters = try kdf.parameters()
            let password: SecureBytes
            if case .prompt = unlock.source {
                password = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the password: ")
            } else {
                password = try unlock.source.read(prompt: "")
            }
            guard password.count > 0 else { throw CLIError.emptyPassword }
            PasswordAdvice.warnIfWeak(password, typed: unlock.source.isPrompt)
            if unlock.location.isDefaultPath {
                try Self.makeDirectory(VaultOptions.defaultDirectory)
            }
            Messages.progress("creating (\(parameters))…")
            try store.create(password: password, kdf: parameters)
            Messages.info("created \(store.path) (\(parameters))")
        }

        /// Creates the default vault folder (and its parents) with mode 0700.
        static func makeDirectory(_ path: String) throws {
            var current = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                current += "/" + component
                if mkdir(current, 0o700) != 0 && errno != EEXIST {
                    throw CLIError.io(operation: "creating the folder", path: current, errno: errno)
                }
            }
        }
    }
}
