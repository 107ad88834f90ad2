import SecureMemory
import VaultModel

// MARK: - OpenSSH private key files

/// An OpenSSH private key file (`openssh-key-v1`, PROTOCOL.key) of one key of a kept type, read
/// through bounds: at most `maxFileLength` bytes, one key, every length checked before use,
/// nothing trailing. A protected one is checked as far as it can be without its passphrase
/// (`ProtectedSSHKey`), and decrypted once its passphrase is at hand.
public enum SSHKeyFile: Sendable {
    /// An unencrypted key, checked.
    case plain(SSHPrivateKey)
    /// A passphrase-protected key: its public key known, its private part still sealed.
    case protected(ProtectedSSHKey)

    /// The largest key file read (an 8,192-bit RSA key is about 6.5 KiB of text).
    public static let maxFileLength = 65_536

    static let begin = SSHEd25519Identity.begin, end = SSHEd25519Identity.end

    /// Reads the key file `bytes`, naming `source` in every refusal (`SSHKeyError.damaged`,
    /// `.unsupported`, `.workOverCap`): another PEM kind (say which, and how ssh-keygen converts
    /// it), a public key where a private one belongs, bad base64, another magic, a cipher or KDF
    /// OpenSSH does not write, more than one key, a key type not kept, and every inconsistency
    /// `SSHPrivateKey` checks. Every decoded byte is wiped before return.
    public static func read(_ bytes: [UInt8], source: String) throws(SSHKeyError) -> SSHKeyFile {
        func refuse(_ why: String) -> SSHKeyError { .damaged("\(source): \(why)") }
        guard bytes.count <= maxFileLength else {
            throw refuse("the key is \(bytes.count) bytes; an OpenSSH private key is at most \(maxFileLength)")
        }
        let lines = SSHEd25519Identity.armorLines(bytes)
        guard let first = lines.first else { throw refuse("it is empty, not an OpenSSH private key") }
        if first.starts(with: "-----BEGIN".utf8), !first.elementsEqual(begin.utf8) {
            // Armor text is public: naming it says what the file is (a PEM RSA key, a PKCS#8 key).
            let kind = String(decoding: first.prefix(64).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            throw .unsupported("\(source): it is a PEM file of another kind (\(kind)); vaultfile keeps OpenSSH private keys "
                               + "(\(begin)); `ssh-keygen -p -f FILE` rewrites a key in that format")
        }
        if SSHKeyType.allCases.contains(where: { first.starts(with: ($0.rawValue + " ").utf8) }) {
            throw refuse("it is an ssh public key; --ssh-key takes the private key (the file without .pub)")
        }
        guard first.elementsEqual(begin.utf8), let last = lines.last, last.elementsEqual(end.utf8), lines.count >= 3 else {
            throw refuse("not an OpenSSH private key (\(begin) … \(end))")
        }
        guard var blob = base64Decode(Array(lines[1..<(lines.count - 1)].joined())) else { throw refuse("the key is not valid base64") }
        defer { wipe(&blob) }
        guard blob.starts(with: SSHEd25519Identity.magic) else { throw refuse("not an openssh-key-v1 key") }
        var reader = SSHReader(blob[SSHEd25519Identity.magic.count...])
        guard let cipher = reader.string() else { throw refuse("the key file is truncated") }
        guard cipher.elementsEqual("none".utf8) else { return .protected(try ProtectedSSHKey.parse(bytes, source: source)) }
        guard let kdf = reader.string(), let options = reader.string(), let count = reader.uint32() else { throw refuse("the key file is truncated") }
        guard kdf.elementsEqual("none".utf8), options.isEmpty else { throw refuse("an unencrypted key names a KDF (\(printableName(kdf)))") }
        guard count == 1 else { throw refuse("the file holds \(count) keys; vaultfile keeps files of one key") }
        guard let publicWire = reader.string(), let section = reader.string(), reader.isAtEnd else {
            throw refuse("the key file is truncated or has bytes after its key")
        }
        return .plain(try SSHPrivateKey.fromPrivateSection(section, publicWire: Array(publicWire), blockSize: 8, source: source))
    }

    /// The public key of the file, protected or not.
    public var publicKey: SSHPublicKey {
        switch self {
        case .plain(let key): key.publicKey
        case .protected(let key): key.publicKey
        }
    }
}

// MARK: - Protected keys

/// A passphrase-protected OpenSSH private key of a kept type (bcrypt-pbkdf, aes256-ctr or
/// aes256-gcm@openssh.com, as `ssh-keygen -N` writes them), checked up to its encrypted part.
public struct ProtectedSSHKey: Sendable {
    /// The public key the file names in the clear.
    public let publicKey: SSHPublicKey
    /// Where the key came from, for messages and the passphrase prompt.
    public let source: String
    let sealed: OpenSSHSealedSection

    /// bcrypt_pbkdf's rounds (at most `BcryptPBKDF.maxRounds`).
    public var rounds: UInt32 { sealed.rounds }

    /// The container of `bytes` (whose cipher is not "none"), every field checked.
    static func parse(_ bytes: [UInt8], source: String) throws(SSHKeyError) -> ProtectedSSHKey {
        var publicKey: SSHPublicKey?
        var keyError: SSHKeyError?
        let sealed: OpenSSHSealedSection?
        do throws(VaultError) {
            sealed = try OpenSSHSealedSection.parseIfProtected(bytes, source: source) { (wire) throws(VaultError) in
                do throws(SSHKeyError) { publicKey = try SSHPublicKey(wire: Array(wire)) } catch {
                    keyError = error
                    throw .malformedInput(error.description)
                }
            }
        } catch {
            if let keyError {
                switch keyError {
                case .unsupported(let why): throw .unsupported("\(source): \(why)")
                default: throw .damaged("\(source): \(keyError.description)")
                }
            }
            if case .identityWorkOverCap(_, _, let asked, let limit) = error {
                throw .workOverCap(source: source, rounds: UInt32(clamping: asked), limit: UInt32(clamping: limit))
            }
            throw .damaged(error.description)
        }
        guard let sealed, let publicKey else { throw .damaged("\(source): the protected key is malformed") }
        return ProtectedSSHKey(publicKey: publicKey, source: source, sealed: sealed)
    }

    /// The key under `passphrase`, or nil when the passphrase is wrong (the GCM tag fails, or
    /// under aes256-ctr the check integers differ). A section that passes those but is malformed
    /// or inconsistent is refused as damaged, never returned. Every decrypted byte is wiped.
    public func decrypt(passphrase: SecureBytes) throws(SSHKeyError) -> SSHPrivateKey? {
        guard var section = sealed.decryptedSection(passphrase: passphrase) else { return nil }
        defer { wipe(&section) }
        var checks = SSHReader(section[...])
        guard let check1 = checks.uint32(), let check2 = checks.uint32(), check1 == check2 else { return nil }
        do throws(SSHKeyError) {
            return try SSHPrivateKey.fromPrivateSection(section[...], publicWire: sealed.publicWire, blockSize: sealed.cipher.blockSize, source: source)
        } catch {
            throw .damaged("\(error.description) (after decryption: the key is damaged)")
        }
    }
}
