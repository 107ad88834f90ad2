import KDF
import SecureMemory
import VaultModel

// MARK: - age v1 files

/// Reads and writes age v1 files (age-encryption.org/v1, the C2SP age spec): binary or armored,
/// for X25519 (`age1…`), ssh-ed25519 and scrypt (passphrase) stanzas, and any further
/// `AgeFileRecipient`/`AgeFileIdentity` kind.
///
/// Reading is all or nothing: the header is parsed in full and bounded, the scrypt rule checked,
/// a file key unwrapped, the header MAC verified, and every payload chunk authenticated before
/// the plaintext is returned; on any failure nothing of it is. The library never reads files
/// or a terminal: callers hand it bytes and secrets.
public enum AgeFile {
    /// The largest plaintext `decrypt` returns unless told otherwise: an entry value's limit (256 MiB).
    public static let defaultPlaintextLimit = VaultLimits.maxValueLength

    // MARK: Reading

    /// The plaintext of the age file `bytes` (binary, or armored as age -a writes it).
    ///
    /// - Parameters:
    ///   - identities: tried in order against every stanza (X25519 `AgeIdentity`,
    ///     `SSHEd25519Identity`, or any other conformance); stanzas of other kinds are skipped.
    ///   - passphrase: used when the file's one stanza is scrypt; the work factor is refused
    ///     above `limits.maxMemoryBytes` before any work.
    ///   - maxPlaintext: a larger plaintext is refused before anything is decrypted.
    /// - Returns: the plaintext, in guarded memory.
    /// - Throws: `AgeFileError`; its category says damaged (hostile or broken input), wrong
    ///   password (no identity or passphrase opens it), over limit or unsupported.
    public static func decrypt(_ bytes: [UInt8], identities: [any AgeFileIdentity], passphrase: SecureBytes? = nil,
                               limits: KDFLimits = .defaults, maxPlaintext: Int = defaultPlaintextLimit) throws(AgeFileError) -> SecureBytes {
        let opened = try openHeader(bytes, identities: identities, passphrase: passphrase, limits: limits)
        return try AgePayload.open(opened.binary[opened.payloadStart...], fileKey: opened.fileKey, limit: maxPlaintext)
    }

    /// `decrypt`, the plaintext returned in an ordinary array, for a caller that stores it in one
    /// anyway (`receive`: the vault holds an entry's value as an array): the plaintext is decrypted
    /// where it will stay (its pages advised as huge pages when large), instead of into guarded
    /// memory and then copied. Same checks, same errors, all or nothing: what a failing chunk
    /// leaves is wiped before the error is thrown. The caller wipes the array after use.
    public static func decryptIntoArray(_ bytes: [UInt8], identities: [any AgeFileIdentity], passphrase: SecureBytes? = nil,
                                        limits: KDFLimits = .defaults, maxPlaintext: Int = defaultPlaintextLimit) throws(AgeFileError) -> [UInt8] {
        let opened = try openHeader(bytes, identities: identities, passphrase: passphrase, limits: limits)
        return try AgePayload.openIntoArray(opened.binary[opened.payloadStart...], fileKey: opened.fileKey, limit: maxPlaintext,
                                            prepare: SecretMapping.adviseHugePages)
    }

    /// The binary file of `bytes` (armor removed), where its payload starts, and the file key
    /// from its stanzas (a passphrase for a scrypt stanza, else the identities), once the header
    /// MAC verified under it.
    private static func openHeader(_ bytes: [UInt8], identities: [any AgeFileIdentity], passphrase: SecureBytes?,
                                   limits: KDFLimits) throws(AgeFileError) -> (binary: [UInt8], payloadStart: Int, fileKey: SecureBytes) {
        let binary = AgeArmor.looksArmored(bytes[...]) ? try AgeArmor.decode(bytes[...]) : bytes
        let header = try parseHeader(binary)
        var tried: [any AgeFileIdentity] = identities
        if header.stanzas.first?.kind == .scrypt {
            guard let passphrase else { throw .passphraseRequired }
            tried = [AgeScryptPassphrase(passphrase: passphrase, limits: limits)]
        } else if identities.isEmpty, passphrase != nil {
            throw .passphraseNotUsable
        }
        let fileKey = try unwrapFileKey(header, identities: tried)
        try header.verifyMAC(fileKey: fileKey)
        return (binary, header.length, fileKey)
    }

    /// Whether the age file `bytes` is for a passphrase (its one stanza is scrypt), so that a
    /// caller asks for one only then. Parses the header (throwing what `decrypt` would throw for it).
    public static func needsPassphrase(_ bytes: [UInt8]) throws(AgeFileError) -> Bool {
        let binary = AgeArmor.looksArmored(bytes[...]) ? try AgeArmor.decode(bytes[...]) : bytes
        return try parseHeader(binary).stanzas.first?.kind == .scrypt
    }

    /// The header of `binary`, with age's rule that an scrypt stanza is the only one.
    static func parseHeader(_ binary: [UInt8]) throws(AgeFileError) -> AgeHeader {
        let header = try AgeHeader.parse(binary[...])
        if header.stanzas.contains(where: { $0.kind == .scrypt }), header.stanzas.count != 1 { throw .scryptNotAlone }
        return header
    }

    /// The file key from the first identity, in order, that opens a stanza.
    private static func unwrapFileKey(_ header: AgeHeader, identities: [any AgeFileIdentity]) throws(AgeFileError) -> SecureBytes {
        for identity in identities {
            if let fileKey = try identity.unwrap(stanzas: header.stanzas) { return fileKey }
        }
        throw .noIdentityMatches(kinds: header.stanzas.map(\.type))
    }

    // MARK: Writing

    /// An age v1 file of `plaintext` for `recipients`: a fresh 16-byte file key, its stanzas,
    /// the header MAC, the payload under a fresh nonce, and the armor when `armor` is set.
    ///
    /// Refuses no recipient, and a recipient that must be alone (a passphrase) beside others.
    public static func encrypt(_ plaintext: UnsafeRawBufferPointer, to recipients: [any AgeFileRecipient], armor: Bool = false) throws(AgeFileError) -> [UInt8] {
        let fileKey = try fileKey(for: recipients)
        let stanzas = try wrappedStanzas(for: recipients, fileKey: fileKey)
        var file = AgeHeader.encode(stanzas: stanzas, fileKey: fileKey)
        file += AgePayload.seal(plaintext, fileKey: fileKey)
        return armor ? AgeArmor.encode(file) : file
    }

    /// `encrypt` without armor, handed to `sink` in order, in pieces of at most 1 MiB: the file of a
    /// large value is never held whole (`share` to standard output). Throws what `encrypt` throws,
    /// before `sink` is first called, or what `sink` throws.
    public static func encrypt(_ plaintext: UnsafeRawBufferPointer, to recipients: [any AgeFileRecipient],
                               writing sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let fileKey = try fileKey(for: recipients)
        let stanzas = try wrappedStanzas(for: recipients, fileKey: fileKey)
        try AgeHeader.encode(stanzas: stanzas, fileKey: fileKey).withUnsafeBytes { try sink($0) }
        try AgePayload.seal(plaintext, fileKey: fileKey, into: sink)
    }

    /// Every recipient's stanzas, once their labels agree (age's rule: a recipient whose labels
    /// ask to stay apart, a plugin's or a post-quantum one, is never mixed with others).
    private static func wrappedStanzas(for recipients: [any AgeFileRecipient], fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        var stanzas: [AgeStanza] = []
        var firstLabels: Set<String>?
        for recipient in recipients {
            let wrapped = try recipient.wrapWithLabels(fileKey)
            if let firstLabels, firstLabels != wrapped.labels {
                let plugin = (recipient as? AgePluginFileRecipient)?.plugin ?? (recipients.first as? AgePluginFileRecipient)?.plugin
                throw plugin.map { AgeFileError.plugin(.exclusive(plugin: $0, others: "recipients of other labels")) }
                    ?? AgeFileError.invalidRecipients("the recipients' labels differ: they cannot share one age file")
            }
            firstLabels = wrapped.labels
            stanzas += wrapped.stanzas
        }
        return stanzas
    }

    /// A fresh file key, once `recipients` are checked: at least one, and one that must be alone is.
    private static func fileKey(for recipients: [any AgeFileRecipient]) throws(AgeFileError) -> SecureBytes {
        guard !recipients.isEmpty else { throw .invalidRecipients("an age file needs at least one recipient or a passphrase") }
        if recipients.count > 1, recipients.contains(where: \.mustBeAlone) {
            throw .invalidRecipients("a passphrase must be the age file's only recipient (age's rule): give either --passphrase or recipients")
        }
        // age's rule: a file is post-quantum only if every stanza is; mixing would hide that it is not.
        // A plugin's kind is known only from its `labels` answer: `wrappedStanzas` compares them.
        if recipients.contains(where: \.isPostQuantum),
           recipients.contains(where: { !$0.isPostQuantum && !($0 is AgePluginFileRecipient) }) {
            throw .invalidRecipients("post-quantum (age1pq1…) and classical recipients cannot share one age file (age's rule): "
                                     + "the file would be only as strong as its classical recipients; share to each kind separately")
        }
        return AgeCrypto.generateFileKey()
    }

    /// `encrypt` of the bytes in `plaintext`.
    public static func encrypt(_ plaintext: SecureBytes, to recipients: [any AgeFileRecipient], armor: Bool = false) throws(AgeFileError) -> [UInt8] {
        try plaintext.withUnsafeBytes { (bytes) throws(AgeFileError) in try encrypt(bytes, to: recipients, armor: armor) }
    }
}
