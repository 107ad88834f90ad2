import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Stores the contents of an age file (a secret someone shared) as an entry, never writing them anywhere else.
    struct Receive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "receive",
            abstract: "Store the contents of an age file shared with you as an entry's value (or a field).",
            discussion: """
                The age file (binary or armored; FILE, or standard input when FILE is - or left out) is \
                opened with the identities the vault's unlock sources name (--identity, \
                VAULTFILE_IDENTITY_FILE, VAULTFILE_IDENTITY, then the default identities): age X25519 identities \
                (AGE-SECRET-KEY-1…), post-quantum ones (AGE-SECRET-KEY-PQ-1…, for files made to age1pq1… \
                recipients), ssh-ed25519 and ssh-rsa keys, and age plugin identities (AGE-PLUGIN-NAME-1…, which run \
                age-plugin-NAME from an absolute PATH folder); a protected one is asked for its passphrase only when \
                the others open nothing. Or, when it \
                was made with a passphrase (age -p), with one asked on the terminal or read from \
                --passphrase-file/--passphrase-fd. The file is checked whole (header MAC, every chunk) before \
                anything is stored; its contents go into the vault and nowhere else. An entry (or field) \
                that already has a value is replaced only with --replace.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The new entry's name.", completion: EntryCompletion.names) var name: String
        @Argument(help: ArgumentHelp("The age file; - or none is standard input.", valueName: "file"), completion: .file()) var file: String?
        @Option(name: .customLong("field"), help: ArgumentHelp("Store the contents as this named field instead of the value.", valueName: "field"))
        var field: String?
        @OptionGroup var passphrase: AgePassphraseOptions
        @Flag(name: .customLong("replace"), help: "Replace the entry's value (or the field) when it has one.") var replace = false
        @Flag(name: .customLong("allow-empty"), help: "Store empty contents (refused without this flag).") var allowEmpty = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        /// An age file of the largest value, armored: the value, a tag per 64 KiB, base64's third, and a header.
        static let maxFileLength = VaultLimits.maxValueLength / 3 * 4 + (8 << 20)

        func validate() throws {
            try validateEntryArguments(name: name, field: field)
        }

        func run() throws {
            if file == nil || file == Input.standardInputName, Stream.isTerminal(STDIN_FILENO) {
                throw CLIError.refused("no age file: standard input is a terminal", hint: "give the age file's path, or pipe it in")
            }
            let bytes = try Input.readFile(file ?? Input.standardInputName, purpose: "the age file", limit: Self.maxFileLength)
            if bytes.isEmpty {
                let fromStdin = file == nil || file == Input.standardInputName
                throw CLIError.refused(fromStdin ? "no age file: standard input is empty" : "no age file: \(file ?? "") is empty",
                                       hint: "give the age file's path, or pipe it in")
            }
            // The header is read before anything else: a file that is no age file costs no unlock.
            let needsPassphrase = try AgeFile.needsPassphrase(bytes)
            if !needsPassphrase && passphrase.isGiven {
                throw CLIError.refused("the age file is encrypted to recipients, not with a passphrase",
                                       hint: "leave out --passphrase; open it with the identity it was made for (--identity FILE)")
            }
            // Decrypted straight into the array the entry keeps (an entry's value is one), wiped after.
            var value: [UInt8]
            if needsPassphrase {
                let secret = try passphrase.read(prompt: "Passphrase for the age file: ", confirm: false, file: file.flatMap { $0 == Input.standardInputName ? nil : $0 } ?? "on standard input")
                value = try AgeFile.decryptIntoArray(bytes, identities: [], passphrase: secret, limits: unlock.limits())
            } else {
                value = try decryptWithIdentities(bytes)
            }
            defer { wipe(&value) }
            try unlock.update { unlocked in
                if value.isEmpty && !allowEmpty { throw CLIError.emptyValue(name: name, field: field) }
                let part = EntryPart(field: field)
                if !replace, (try? unlocked.vault.withValue(of: name, part: part) { _ in }) != nil {
                    throw CLIError.refused("'\(Messages.escaped(name))'\(field.map { " already has a field '\(Messages.escaped($0))'" } ?? " already has a value")",
                                           hint: "pass --replace to replace it, or choose another name")
                }
                try VaultfileCommand.Set.apply(to: &unlocked.vault, name: name, part: part, value: value,
                                               allowFormatCharacters: formatCharacters.allowFormatCharacters)
            }
            Messages.info("stored the age file's contents in '\(Messages.escaped(name))'\(field.map { " (field '\(Messages.escaped($0))')" } ?? "")")
        }

        /// `bytes` opened with the identities of the unlock sources (options, variables, then the
        /// default identities): the unprotected ones first; protected ones (a key with a
        /// passphrase, an `age -p` identity file) are asked for their passphrase only when those
        /// open nothing. No recovery code is asked for.
        private func decryptWithIdentities(_ bytes: [UInt8]) throws -> [UInt8] {
            var keys = unlock.keys
            keys.recovery = false
            keys.recoveryFile = nil
            let passphrases = keys.identityPassphrases()
            let given = try keys.credentials(vaultPath: unlock.location.path, passphrases: passphrases)
            let credentials = given + DefaultIdentity.credentials(passphrases: passphrases, given: given.count)
            var plain: [any AgeFileIdentity] = [], protected: [ProtectedIdentity] = []
            for credential in credentials {
                if case .protectedIdentity(let identity) = credential.secret { protected.append(identity) }
                if let identity = Self.ageIdentity(credential.secret) { plain.append(identity) }
            }
            // Plugins last: a native identity that opens the file spares a PIN or a touch.
            plain += Self.pluginIdentities(credentials)
            guard !plain.isEmpty || !protected.isEmpty else {
                throw CLIError.refused("the age file is encrypted to recipients, and no identity was given to open it",
                                       hint: "give the identity it was made for: --identity FILE (an age identity file or an OpenSSH ed25519 or RSA key), "
                                           + "or keep it in \(DefaultIdentity.locations)")
            }
            let limits = try unlock.limits()
            do {
                return try AgeFile.decryptIntoArray(bytes, identities: plain, passphrase: nil, limits: limits)
            } catch {
                guard case .noIdentityMatches = error else { throw error }
                if protected.isEmpty { Self.noteTried(credentials) }
                guard !protected.isEmpty else { throw error }
            }
            let opened = try protected.flatMap { try $0.open(limits: limits) }.compactMap(Self.ageIdentity)
            do {
                return try AgeFile.decryptIntoArray(bytes, identities: plain + opened, passphrase: nil, limits: limits)
            } catch {
                if case .noIdentityMatches = error { Self.noteTried(credentials) }
                throw error
            }
        }

        /// Names the identities tried on an age file none of them opens (the default ones too), so
        /// that the refusal that follows is not read as "none was given".
        private static func noteTried(_ credentials: [UnlockCredential]) {
            var sources: [String] = []
            for credential in credentials where !sources.contains(credential.source) { sources.append(credential.source) }
            Messages.note("tried on the age file: \(sources.joined(separator: ", "))")
        }

        /// The age-file identity of an unlock secret: an age X25519 identity, an ssh-ed25519 or an ssh-rsa key.
        private static func ageIdentity(_ secret: UnlockCredential.Secret) -> (any AgeFileIdentity)? {
            switch secret {
            case .ageIdentity(let identity): identity
            case .sshIdentity(let identity): identity
            case .sshRSAIdentity(let identity): identity
            case .pqIdentity(let identity): identity
            default: nil
            }
        }

        /// The plugin identities among `credentials`, one age-file identity per plugin (one run each).
        private static func pluginIdentities(_ credentials: [UnlockCredential]) -> [any AgeFileIdentity] {
            let identities = credentials.compactMap { credential -> AgePluginIdentity? in
                if case .pluginIdentity(let identity) = credential.secret { return identity } else { return nil }
            }
            return AgePluginFileIdentity.grouped(identities, launcher: PluginLauncher()).map { $0 as any AgeFileIdentity }
        }
    }
}
