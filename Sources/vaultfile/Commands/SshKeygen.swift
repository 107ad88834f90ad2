import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// `vaultfile ssh-keygen NAME`: a new ssh key made inside the vault and stored as an ssh key
    /// entry (`SSHKeyEntry`), so that its private key never exists outside it.
    struct SSHKeygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ssh-keygen",
            abstract: "Make an ssh key inside the vault (ed25519, ecdsa or rsa) and print its public key.",
            discussion: """
                The key is stored as the entry NAME, as 'set NAME --ssh-key' stores one: its value the \
                unencrypted OpenSSH private key, its fields ssh-key, public, comment and fingerprint. The \
                authorized_keys line goes to standard output (vaultfile ssh-keygen ssh/github > id.pub). \
                -t ed25519 (the default), ecdsa (-b 256, 384 or 521; 256 by default) or rsa (-b 2048 to \
                8192; 3072 by default, as ssh-keygen). The comment is USER@HOST unless -C gives one. An \
                existing entry is replaced only with --force.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The new entry's name, e.g. ssh/github.", completion: EntryCompletion.names) var name: String
        @Option(name: [.customShort("t"), .customLong("type")], help: ArgumentHelp("The key type: ed25519, ecdsa or rsa.", valueName: "type"))
        var type = "ed25519"
        @Option(name: [.customShort("b"), .customLong("bits")], help: ArgumentHelp("ecdsa: 256, 384 or 521; rsa: 2048 to 8192.", valueName: "bits"))
        var bits: Int?
        @Option(name: [.customShort("C"), .customLong("comment")], help: ArgumentHelp("The key's comment (default USER@HOST).", valueName: "comment"))
        var comment: String?
        @Flag(name: .customLong("force"), help: "Replace an existing entry of that name.") var force = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        func validate() throws {
            _ = try keyType()
            try validateEntryArguments(name: name, field: nil)
        }

        func run() throws {
            let (keyType, rsaBits) = try keyType()
            let key = try SSHPrivateKey.generate(keyType, rsaBits: rsaBits, comment: comment ?? Self.defaultComment())
            try unlock.update { unlocked in
                try unlocked.vault.checkNewName(name, allowingFormatCharacters: formatCharacters.allowFormatCharacters)
                if unlocked.vault.contains(name) && !force { throw VaultError.entryExists(name) }
                try SSHKeyEntry.store(key, as: name, in: &unlocked.vault)
            }
            try StandardOutput.line(key.authorizedKeysLine)
        }

        /// The type and RSA size that -t and -b name; refuses a size the type does not have.
        private func keyType() throws -> (SSHKeyType, Int) {
            switch type {
            case "ed25519", "ssh-ed25519":
                if let bits, bits != 256 { throw ValidationError("an ed25519 key has 256 bits; -b \(bits) does not apply") }
                return (.ed25519, SSHPrivateKey.defaultRSABits)
            case "ecdsa":
                guard let keyType = SSHKeyType.ecdsa(bits: bits ?? 256) else { throw ValidationError("an ecdsa key has 256, 384 or 521 bits, not \(bits ?? 0)") }
                return (keyType, SSHPrivateKey.defaultRSABits)
            case "rsa", "ssh-rsa":
                let rsaBits = bits ?? SSHPrivateKey.defaultRSABits
                guard (2_048...8_192).contains(rsaBits) else { throw ValidationError("an rsa key has 2048 to 8192 bits, not \(rsaBits)") }
                return (.rsa, rsaBits)
            default:
                throw ValidationError("unknown key type '\(type)'; give -t ed25519, ecdsa or rsa")
            }
        }

        /// USER@HOST, as ssh-keygen's default comment.
        static func defaultComment() -> String {
            var host = [CChar](repeating: 0, count: 256)
            gethostname(&host, host.count - 1)
            let user = getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "user"
            let text = "\(user)@\(String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
            return text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } ? text : "vaultfile"
        }
    }
}
