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
                Missing folders on the way to the vault are created (mode 0700), and said so on stderr; \
                the path is checked before anything is asked. Defaults: Argon2id 64 MiB, t=3, p=4. \
                Settings below OWASP's minimum need --allow-weak-kdf.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions

        func run() throws {
            let store = unlock.location.store
            if store.exists { throw VaultError.vaultExists(path: store.path) }
            let parameters = try kdf.parameters()
            // Before any prompt or KDF: a vault that cannot be created fails here, not after the
            // password was typed twice and the KDF ran.
            let missing = try Self.missingFolders(for: store.path)
            let password: SecureBytes
            if case .prompt = unlock.source {
                password = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the password: ")
            } else {
                password = try unlock.source.read(prompt: "")
            }
            guard password.count > 0 else { throw CLIError.emptyPassword }
            for folder in missing {
                if mkdir(folder, 0o700) == 0 {
                    Messages.info("created the folder \(folder) (mode 0700)")
                } else if errno != EEXIST {
                    throw CLIError.io(operation: "creating the folder", path: folder, errno: errno)
                }
            }
            Messages.progress("creating (\(parameters))…")
            try store.create(password: password, kdf: parameters)
            Messages.info("created \(store.path) (\(parameters))")
        }

        /// The folders on the way to `path` that do not exist, outermost first; throws when the
        /// nearest one that exists is not a folder this user may create files in.
        static func missingFolders(for path: String) throws -> [String] {
            var missing: [String] = []
            var folder = parent(of: path)
            while true {
                var info = stat()
                if stat(folder, &info) == 0 {
                    guard (info.st_mode & S_IFMT) == S_IFDIR else {
                        throw CLIError.io(operation: "creating the vault in", path: folder, errno: ENOTDIR)
                    }
                    guard access(folder, W_OK | X_OK) == 0 else {
                        throw CLIError.io(operation: "creating the vault in", path: folder, errno: errno)
                    }
                    return missing.reversed()
                }
                guard errno == ENOENT else { throw CLIError.io(operation: "looking up", path: folder, errno: errno) }
                missing.append(folder)
                let above = parent(of: folder)
                guard above != folder else { return missing.reversed() }
                folder = above
            }
        }

        /// The folder that holds `path`, as `dirname` says it: `.` for a bare name, `/` at the root.
        static func parent(of path: String) -> String {
            var trimmed = Substring(path)
            while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            guard let slash = trimmed.lastIndex(of: "/") else { return "." }
            var folder = trimmed[..<slash]
            while folder.count > 1 && folder.hasSuffix("/") { folder = folder.dropLast() }
            return folder.isEmpty ? "/" : String(folder)
        }
    }
}
