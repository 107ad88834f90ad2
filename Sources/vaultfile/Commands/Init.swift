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

                With --recipient, --recipients-file or --with-keyfile the vault has those keyslots (format \
                1.1) and a password only if a password source is given (or --ask-password): a vault of \
                recipients only, with no password at all, is allowed, as with age.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions
        @Option(name: .customLong("recipient"), help: ArgumentHelp(
            "Also open the vault with this age recipient (age1…) or ssh-ed25519 public key line (repeatable).", valueName: "recipient"))
        var recipients: [String] = []
        @Option(name: .customLong("recipients-file"), help: ArgumentHelp(
            "Also open the vault with every recipient in this file (repeatable).", valueName: "file"))
        var recipientsFiles: [String] = []
        @Option(name: .customLong("with-keyfile"), help: ArgumentHelp(
            "Also open the vault with this keyfile (see 'vaultfile keygen --keyfile').", valueName: "file"))
        var withKeyfile: String?
        @Flag(name: .customLong("any-keyfile"), help: "Accept a keyfile 'vaultfile keygen --keyfile' did not make.")
        var anyKeyfile = false
        @Flag(name: .customLong("ask-password"), help: "With recipients or a keyfile, also ask for a password on the terminal.")
        var askPassword = false

        func validate() throws {
            let keys = unlock.keys
            if !keys.identities.isEmpty || keys.keyfile != nil || keys.recovery || keys.recoveryFile != nil {
                throw ValidationError("--identity, --keyfile and --recovery open existing vaults; a new vault takes --recipient, --recipients-file and --with-keyfile")
            }
        }

        /// Whether the vault gets slots beyond one password (format 1.1).
        private var hasKeyslots: Bool { !recipients.isEmpty || !recipientsFiles.isEmpty || withKeyfile != nil }

        func run() throws {
            let store = unlock.location.store
            if hasKeyslots { return try createWithKeyslots(store) }
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

        /// Creates a format-1.1 vault of recipients, a keyfile, and a password when one is given.
        private func createWithKeyslots(_ store: VaultStore) throws {
            if store.exists { throw VaultError.vaultExists(path: store.path) }
            var slots: [(slot: NewSlot, label: String)] = []
            if unlock.source.isExplicit || askPassword {
                let parameters = try kdf.parameters()
                let password: SecureBytes
                if case .prompt = unlock.source {
                    password = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the password: ")
                } else {
                    password = try unlock.source.read(prompt: "")
                }
                guard password.count > 0 else { throw CLIError.emptyPassword }
                slots.append((.password(password, parameters), ""))
            }
            for recipient in recipients {
                let parsed = try Recipients.parse(recipient, source: "--recipient")
                slots.append((parsed.slot, parsed.defaultLabel))
            }
            for file in recipientsFiles { slots += try Recipients.parseFile(file).map { ($0.slot, $0.defaultLabel) } }
            if let withKeyfile {
                try Keyfiles.checkNew(withKeyfile, anyKeyfile: anyKeyfile)
                slots.append((.keyfile(path: withKeyfile), ""))
            }
            if unlock.location.isDefaultPath {
                try Self.makeDirectory(VaultOptions.defaultDirectory)
            }
            Messages.progress("creating…")
            try store.create(slots: slots, now: currentTimeMilliseconds())
            let kinds = slots.map { slot -> String in
                switch slot.slot {
                case .password: return "password"
                case .recipient: return "recipient"
                case .sshEd25519: return "ssh-ed25519"
                case .keyfile: return "keyfile"
                case .recovery: return "recovery"
                }
            }
            Messages.info("created \(store.path) (format 1.1; keyslots: \(kinds.joined(separator: ", ")))")
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
