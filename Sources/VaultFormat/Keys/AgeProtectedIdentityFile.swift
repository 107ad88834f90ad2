import KDF
import SecureMemory
import VaultModel

// MARK: - Passphrase-protected age identity files

/// An age identity file under a passphrase, as `age-keygen | age -p > key.age` makes it: an age v1
/// file (binary, or armored with `-a`) whose one stanza is scrypt and whose plaintext is an identity
/// file (`AGE-SECRET-KEY-1…` lines, and `AGE-SECRET-KEY-PQ-1…` ones of `age-keygen -pq`). age reads such files as identities after asking for the
/// passphrase; so does vaultfile, through the age file library (`AgeFile`).
///
/// Read and checked when the file is: the header parsed and bounded, scrypt its only stanza. The
/// work factor is checked against the memory cap before the passphrase is asked for
/// (`checkWork`), and again by `AgeFile` before scrypt runs.
public struct AgeProtectedIdentityFile: Sendable {
    /// The age file.
    private let file: [UInt8]
    /// The scrypt stanza's work factor, log2 N.
    public let logN: Int
    /// Where it came from, for messages.
    public let source: String

    /// The largest identity file decrypted: as large as an identity file read from disk.
    public static let maxPlaintext = 1 << 20

    /// The protected identity file in `bytes`, or nil when they are not an age file (no
    /// `age-encryption.org/` first line, no `-----BEGIN AGE ENCRYPTED FILE-----` armor). Refuses,
    /// naming `source`, an age file it cannot read and one encrypted to recipients rather than
    /// with a passphrase (age reads only passphrase-encrypted identity files).
    public static func parseIfProtected(_ bytes: [UInt8], source: String) throws(VaultError) -> AgeProtectedIdentityFile? {
        let trimmed = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard bytes.starts(with: AgeHeader.versionPrefix) || trimmed.starts(with: AgeArmor.begin) else { return nil }
        let header: AgeHeader
        do {
            let binary = AgeArmor.looksArmored(bytes[...]) ? try AgeArmor.decode(bytes[...]) : bytes
            header = try AgeFile.parseHeader(binary)
        } catch {
            throw .malformedInput("\(source): an age-encrypted identity file that cannot be read: \(error.description)")
        }
        guard let stanza = header.stanzas.first, stanza.kind == .scrypt, stanza.arguments.count == 2 else {
            throw .malformedInput("\(source) is an age file encrypted to recipients; an encrypted identity file is read only when it is "
                                  + "encrypted with a passphrase (age -p), as age reads them")
        }
        let logN: Int
        do {
            logN = try AgeScryptPassphrase.workFactor(stanza.arguments[1])
        } catch {
            throw .malformedInput("\(source): \(error.description)")
        }
        return AgeProtectedIdentityFile(file: bytes, logN: logN, source: source)
    }

    /// Refuses a work factor whose memory passes `limits` (`AgeFileError.workFactorOverCap`, exit 6), before any work.
    public func checkWork(_ limits: KDFLimits) throws(AgeFileError) {
        let memory = AgeScryptPassphrase.memoryBytes(logN: logN)
        guard memory <= limits.maxMemoryBytes else { throw .workFactorOverCap(logN: logN, asked: memory, cap: limits.maxMemoryBytes) }
    }

    /// The identities in the file under `passphrase`, or nil when the passphrase is wrong. The
    /// decrypted identity file is wiped here; the identities live in guarded memory.
    public func decrypt(passphrase: SecureBytes, limits: KDFLimits) throws -> [AgeAnyIdentity]? {
        guard let plaintext = try decryptedFile(passphrase: passphrase, limits: limits) else { return nil }
        var text = plaintext.withUnsafeBytes { Array($0) }
        defer { wipe(&text) }
        // X25519 and post-quantum lines (age -p over an age-keygen -pq file), as unprotected files.
        return try AgeIdentityFile.parseAll(text, source: "\(source) (decrypted)")
    }

    /// The identity file inside, as it was before `age -p` (in guarded memory), or nil when the
    /// passphrase is wrong: for a tool that reads the identities itself (age, for a passage store,
    /// which may hold plugin identities vaultfile does not parse). At most `maxPlaintext` bytes.
    public func decryptedFile(passphrase: SecureBytes, limits: KDFLimits) throws(AgeFileError) -> SecureBytes? {
        do {
            return try AgeFile.decrypt(file, identities: [], passphrase: passphrase, limits: limits, maxPlaintext: Self.maxPlaintext)
        } catch {
            // A wrong passphrase is asked again; anything else (damage, a cap) ends the tries.
            if error == .wrongPassphrase { return nil }
            throw error
        }
    }
}
