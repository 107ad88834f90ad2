import ArgumentParser
import KDF
import SecureMemory
import VaultFile
import VaultFormat
import VaultModel
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

                With --recipient, --recipients-file or --with-keyfile the vault has those keyslots (format \
                1.1) and a password only if a password source is given (or --ask-password): a vault of \
                recipients only, with no password at all, is allowed, as with age.

                Post-quantum age1pq1… recipients beside a classical key (age1…, ssh-ed25519, ssh-rsa, or an \
                age plugin recipient, which counts as classical) are refused without --allow-classical, as \
                'slot add' refuses them (age's no-mixing rule); a password or keyfile beside them is allowed.

                A new vault keeps the earlier versions of its entries (format 1.2: 10 versions and 1 MiB \
                per entry, see 'vaultfile history'); releases without history, such as 0.1.0, cannot read \
                it. --keep-history 0 makes a vault they read (format 1.0, or 1.1 with keyslots).

                A new vault is signed (format 1.3): every write is signed by the slot that opened it, so \
                that only its members can write it; vaultfile 0.2.0 and older cannot open it. --unsigned \
                makes a vault they still open ('vaultfile rekey' can sign it later). A \
                vault of recipients only is unsigned: no slot's secret is at hand to sign it (post-quantum and \
                plugin slots never sign, so a vault of those alone stays unsigned). init says \
                which it made.

                --copy-of SOURCE makes an independent copy of an existing vault: the same entries, history \
                and keyslots (labels too), under a new vault id and a new file key, opened with the unlock \
                sources (--identity, --keyfile, --recovery, a password). A copy made with cp keeps the vault \
                id, so vaultfile takes the two files for one vault, and a write to either makes the other \
                look older (exit 7); --copy-of makes a separate vault, which a signed source's opening slot \
                signs afresh. The source is not changed.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions
        @Option(name: Table.recipient.long, help: ArgumentHelp(
            "Also open the vault with this age recipient (age1…; age1pq1… post-quantum; age1NAME1… for an age plugin) or ssh-ed25519 or ssh-rsa public key line (repeatable).", valueName: "recipient"))
        var recipients: [String] = []
        @Option(name: Table.recipientsFile.long, help: ArgumentHelp(
            "Also open the vault with every recipient in this file (repeatable).", valueName: "file"))
        var recipientsFiles: [String] = []
        @Option(name: Table.withKeyfile.long, help: ArgumentHelp(
            "Also open the vault with this keyfile (see 'vaultfile keygen --keyfile').", valueName: "file"))
        var withKeyfile: String?
        @Flag(name: Table.anyKeyfile.long, help: "Accept a keyfile 'vaultfile keygen --keyfile' did not make.")
        var anyKeyfile = false
        @Flag(name: Table.askPassword.long, help: "With recipients or a keyfile, also ask for a password on the terminal.")
        var askPassword = false
        @Flag(name: Table.allowClassical.long, help: "Accept classical keys (age1…, ssh-ed25519, ssh-rsa, plugins) beside age1pq1… recipients; the vault is then not post-quantum.")
        var allowClassical = false
        @Flag(name: Table.unsigned.long, help: "Make an unsigned vault, which vaultfile 0.2.0 and older still open (no signed seals).")
        var unsigned = false
        @OptionGroup var history: HistoryOptions
        @Option(name: Table.copyOf.long, help: ArgumentHelp(
            "Make an independent copy of this vault (a new vault id and file key, the same entries and keyslots), opened with the unlock sources.",
            valueName: "source"), completion: .file())
        var copyOf: String?

        /// The empty vault to create: with history unless the options turn it off.
        private var newVault: Vault { Vault(history: history.policy(from: nil)) }

        func validate() throws {
            if copyOf != nil { return try validateCopy() }
            let keys = unlock.keys
            if !keys.identities.isEmpty || keys.keyfile != nil || keys.recovery || keys.recoveryFile != nil {
                throw ValidationError("--identity, --keyfile and --recovery open existing vaults; a new vault takes --recipient, --recipients-file and --with-keyfile")
            }
        }

        /// Whether the vault gets slots beyond one password (format 1.1).
        private var hasKeyslots: Bool { !recipients.isEmpty || !recipientsFiles.isEmpty || withKeyfile != nil }

        func run() throws {
            if let copyOf { return try createCopy(of: copyOf) }
            let store = unlock.location.store
            // A signed vault holds no v1 password slot: its password gets a format-1.1 slot.
            if hasKeyslots || !unsigned { return try createWithKeyslots(store, passwordRequired: !hasKeyslots) }
            if store.exists { throw VaultError.vaultExists(path: store.path) }
            let parameters = try kdf.parameters(within: unlock.limits())
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
            PasswordAdvice.warnIfWeak(password, typed: unlock.source.isPrompt)
            try Self.createFolders(missing)
            Messages.progress("creating (\(parameters))…")
            try store.create(newVault, password: password, kdf: parameters)
            Messages.info("created \(store.path), unsigned (format \(newVault.keepsHistory ? "1.2" : "1.0"), \(parameters))")
        }

        /// Creates a vault with format-1.1 keyslots: recipients, a keyfile, and a password when one
        /// is given (always with `passwordRequired`); signed unless --unsigned.
        private func createWithKeyslots(_ store: VaultStore, passwordRequired: Bool) throws {
            if store.exists { throw VaultError.vaultExists(path: store.path) }
            let parameters = passwordRequired ? try kdf.parameters(within: unlock.limits()) : nil
            let missing = try Self.missingFolders(for: store.path)
            var keys: [(slot: NewSlot, label: String)] = []
            for (number, recipient) in recipients.enumerated() {
                let parsed = try Recipients.parse(recipient, source: recipients.count > 1 ? "--recipient number \(number + 1)" : nil)
                keys.append((parsed.slot, parsed.defaultLabel))
            }
            for file in recipientsFiles { keys += try Recipients.parseFile(file).map { ($0.slot, $0.defaultLabel) } }
            // age's no-mixing rule, as 'slot add' applies it: checked before any password is asked.
            try PostQuantumStatus.checkCreating(keys.map(\.slot), allowClassical: allowClassical)
            var slots: [(slot: NewSlot, label: String)] = []
            if passwordRequired || unlock.source.isExplicit || askPassword {
                let parameters = try parameters ?? kdf.parameters(within: unlock.limits())
                let password: SecureBytes
                if case .prompt = unlock.source {
                    password = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the password: ")
                } else {
                    password = try unlock.source.read(prompt: "")
                }
                guard password.count > 0 else { throw CLIError.emptyPassword }
                PasswordAdvice.warnIfWeak(password, typed: unlock.source.isPrompt)
                slots.append((.password(password, parameters), ""))
            }
            slots += keys
            // One slot per key (two would keep a key in after 'slot rm' of either): a recipient
            // given twice, or in two files, gets the first one's slot.
            var seen: Swift.Set<String> = []
            slots = slots.filter { slot in
                guard let key = slot.slot.keyName else { return true }
                if seen.insert(key).inserted { return true }
                Messages.info("skipped a repeat of \(key)")
                return false
            }
            if let withKeyfile {
                try Keyfiles.checkNew(withKeyfile, anyKeyfile: anyKeyfile)
                slots.append((.keyfile(path: withKeyfile), ""))
            }
            try Self.createFolders(missing)
            Messages.progress(parameters.map { "creating (\($0))…" } ?? "creating…")
            // Its creator's machine pins the members at once (no first-open note on one's own vault).
            let signed = try store.create(newVault, slots: slots, now: currentTimeMilliseconds(), signed: !unsigned,
                                          created: { Self.pinMembers($0, path: store.path) })
            let kinds = slots.map { slot -> String in
                switch slot.slot {
                case .password: return "password"
                case .recipient: return "recipient"
                case .sshEd25519: return "ssh-ed25519"
                case .sshRSA: return "ssh-rsa"
                case .postQuantum: return "mlkem768x25519"
                case .plugin: return "plugin"
                case .keyfile: return "keyfile"
                case .recovery: return "recovery"
                }
            }
            // An ssh-rsa, post-quantum or plugin key needs format 1.4's long keys.
            let rsa = slots.contains { switch $0.slot { case .sshRSA, .postQuantum, .plugin: true; default: false } }
            let kind = signed ? "signed (format \(rsa ? "1.4" : "1.3"); vaultfile \(rsa ? "0.3.0" : "0.2.0") and older cannot open it)"
                : "unsigned (format \(rsa ? "1.4" : newVault.keepsHistory ? "1.2" : "1.1")\(unsigned ? "" : "; no slot's secret is at hand to sign it"))"
            Messages.info("created \(store.path), \(kind); keyslots: \(kinds.joined(separator: ", "))")
            if !signed, !unsigned {
                // Post-quantum and plugin slots have no signing key: 'rekey --sign' through them is refused.
                let signs = slots.contains { switch $0.slot { case .recipient, .sshEd25519, .sshRSA: true; default: false } }
                let readOnly = slots.filter { switch $0.slot { case .postQuantum, .plugin: true; default: false } }.count
                let losing = readOnly == 0 ? "" : "; its \(readOnly) post-quantum or plugin slot\(readOnly == 1 ? "" : "s") cannot sign, "
                    + "so \(readOnly == 1 ? "its holder" : "their holders") could then read but no longer write"
                let rekey = "vaultfile rekey --sign --vault \(shellPath(store.path))"
                Messages.info(signs ? "vaultfile: hint: to have its writes signed, run this with one of its identities (--identity FILE)"
                    + "\(losing): \(rekey)"
                    : "vaultfile: hint: its post-quantum and plugin slots cannot sign seals, so every member can write it; to have its "
                    + "writes signed, add a slot that signs ('vaultfile slot add password' or 'slot add keyfile') and run this with it: \(rekey)")
            }
        }

        /// Creates `missing` (outermost first, from `missingFolders(for:)`) with mode 0700, saying so on stderr.
        static func createFolders(_ missing: [String]) throws {
            for folder in missing {
                if mkdir(folder, 0o700) == 0 {
                    Messages.info("created the folder \(folder) (mode 0700)")
                } else if errno != EEXIST {
                    throw CLIError.io(operation: "creating the folder", path: folder, errno: errno)
                }
            }
        }

        /// The folders on the way to `path` that do not exist, outermost first; throws when the
        /// nearest one that exists is not a folder this user may create files in (`what`: the
        /// file to create, for the message; `keygen -o` makes its folders the same way).
        static func missingFolders(for path: String, what: String = "the vault") throws -> [String] {
            var missing: [String] = []
            var folder = parent(of: path)
            while true {
                var info = stat()
                if stat(folder, &info) == 0 {
                    guard (info.st_mode & S_IFMT) == S_IFDIR else {
                        throw CLIError.io(operation: "creating \(what) in", path: folder, errno: ENOTDIR)
                    }
                    guard access(folder, W_OK | X_OK) == 0 else {
                        throw CLIError.io(operation: "creating \(what) in", path: folder, errno: errno)
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

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Init {
    /// `init`'s own options (its groups have their own tables): named by the declarations above
    /// and by its quick reading.
    enum Table: String, QuickOptionTable {
        case recipient, recipientsFile = "recipients-file", withKeyfile = "with-keyfile"
        case anyKeyfile = "any-keyfile", askPassword = "ask-password", unsigned, copyOf = "copy-of"
        case allowClassical = "allow-classical"

        var kind: OptionKind {
            switch self {
            case .anyKeyfile, .askPassword, .unsigned, .allowClassical: .flag
            case .withKeyfile, .copyOf: .option
            case .recipient, .recipientsFile: .repeatable
            }
        }

        func read(from arguments: inout QuickArguments, into command: inout VaultfileCommand.Init) {
            switch self {
            case .recipient: command.recipients = arguments.strings(self)
            case .recipientsFile: command.recipientsFiles = arguments.strings(self)
            case .withKeyfile: command.withKeyfile = arguments.string(self)
            case .anyKeyfile: command.anyKeyfile = arguments.flag(self)
            case .askPassword: command.askPassword = arguments.flag(self)
            case .unsigned: command.unsigned = arguments.flag(self)
            case .allowClassical: command.allowClassical = arguments.flag(self)
            case .copyOf: command.copyOf = arguments.string(self)
            }
        }
    }

    /// What `init` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = Table.grammar.adding(UnlockOptions.quickGrammar).adding(KDFOptions.quickGrammar)
        .adding(HistoryOptions.quickGrammar)

    /// `init` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var command = Self()
            command.unlock = try UnlockOptions.quick(&arguments)
            command.kdf = try KDFOptions.quick(&arguments)
            try arguments.read(Table.self, into: &command)
            command.history = try HistoryOptions.quick(&arguments)
            return command
        }
    }
}
