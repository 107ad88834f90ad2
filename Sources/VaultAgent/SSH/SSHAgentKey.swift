import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What the agent needs of a key

/// The thin seam between the ssh-agent server and the key model: a private key the agent holds
/// in guarded memory, its public blob, and signing. The key model of issue 42 (OpenSSH private keys
/// of every type, `set --ssh-key`) provides the types; until it lands, `SSHAgentKeys.parse` reads
/// ssh-ed25519 keys through the existing identity parser.
public protocol SSHAgentKey: Sendable {
    /// The key type, as in its public blob: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`…
    var keyType: String { get }
    /// The public key's wire blob (what REQUEST_IDENTITIES lists and SIGN_REQUEST names).
    var publicBlob: [UInt8] { get }
    /// The signature blob (`string algorithm ‖ string signature`) of `data`, with `flags` of the
    /// SIGN_REQUEST (only an ssh-rsa key reads them: SHA2-256, SHA2-512, or none for SHA-1); nil
    /// when this key cannot sign with them.
    func sign(_ data: [UInt8], flags: UInt32) -> [UInt8]?
}

extension SSHAgentKey {
    /// Whether this is an ssh-rsa key (the SIGN_REQUEST flags choose its hash).
    public var isRSA: Bool { keyType == "ssh-rsa" }
    /// `SHA256:…`, as `ssh-add -l` prints it.
    public var fingerprint: String { SSHFingerprint.sha256(publicBlob) }
}

/// Why a private key handed to the agent is not served.
public enum SSHAgentKeyError: Error, Equatable, CustomStringConvertible {
    /// The key is of a type this build does not sign with.
    case unsupportedType(String)
    /// The bytes are no unencrypted OpenSSH private key (the text says why; never a key byte).
    case malformed(String)

    public var description: String {
        switch self {
        case .unsupportedType(let type): return "keys of type \(type) are not served by this build"
        case .malformed(let why): return why
        }
    }
}

/// Reading the keys the agent serves from the entries' values (unencrypted OpenSSH private keys).
public enum SSHAgentKeys {
    /// The key of an unencrypted OpenSSH private key file and the comment inside it.
    public static func parse(privateKey: [UInt8]) throws(SSHAgentKeyError) -> (key: any SSHAgentKey, comment: String) {
        do {
            let identity = try SSHEd25519Identity.parse(privateKey, source: "the ssh key")
            guard let signer = DelegatedSigningKey(seed: identity.ed25519Seed) else { throw SSHAgentKeyError.malformed("the ed25519 seed is not 32 bytes") }
            return (SSHEd25519AgentKey(signer: signer), identity.publicKey.comment)
        } catch let error as SSHAgentKeyError {
            throw error
        } catch {
            let text = "\(error)"
            if text.contains("not an ssh-ed25519 key") { throw .unsupportedType(keyType(of: privateKey) ?? "unknown") }
            throw .malformed(text)
        }
    }

    /// An ssh-ed25519 key of `signer`'s seed (the fuzzer's fixed key).
    public static func ed25519(_ signer: DelegatedSigningKey) -> any SSHAgentKey { SSHEd25519AgentKey(signer: signer) }

    /// The key type named in an OpenSSH private key file's public half, when it can be read.
    static func keyType(of privateKey: [UInt8]) -> String? {
        let lines = privateKey.split(separator: 0x0A).map { $0.last == 0x0D ? $0.dropLast() : $0 }
        guard lines.count >= 3, let blob = SSHBase64.decode(Array(lines[1..<(lines.count - 1)].joined())) else { return nil }
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard blob.starts(with: magic) else { return nil }
        var reader = SSHWireReader(blob[magic.count...])
        guard reader.string() != nil, reader.string() != nil, reader.string() != nil, reader.uint32() != nil,
              let publicBlob = reader.string() else { return nil }
        var inner = SSHWireReader(publicBlob)
        return inner.string().map { String(decoding: $0.prefix(64), as: UTF8.self) }
    }
}

// MARK: - ssh-ed25519 through libsodium

/// An ssh-ed25519 key: Ed25519 signatures (`crypto_sign_detached`) with the seed in guarded memory.
struct SSHEd25519AgentKey: SSHAgentKey {
    let signer: DelegatedSigningKey

    var keyType: String { "ssh-ed25519" }

    var publicBlob: [UInt8] {
        var writer = SSHWireWriter()
        writer.string(Array(keyType.utf8))
        writer.string(signer.publicKey)
        return writer.bytes
    }

    func sign(_ data: [UInt8], flags: UInt32) -> [UInt8]? {
        var writer = SSHWireWriter()
        writer.string(Array(keyType.utf8))
        writer.string(signer.sign(data))
        return writer.bytes
    }
}

// MARK: - Host keys

/// Verifies a host key's signature over a session id (`session-bind@openssh.com`).
public enum SSHHostKeys {
    /// Whether `signature` (an SSH signature blob) is `hostKey`'s over `data`. ssh-ed25519 host keys
    /// are verified here; a host key of another type is not verified, so its bind is refused.
    public static func verifies(hostKey: [UInt8], signature: [UInt8], data: [UInt8]) -> Bool {
        var keyReader = SSHWireReader(hostKey[...]), signatureReader = SSHWireReader(signature[...])
        guard let keyType = keyReader.string(), let algorithm = signatureReader.string(), let raw = signatureReader.string(),
              signatureReader.isAtEnd else { return false }
        switch String(decoding: keyType, as: UTF8.self) {
        case "ssh-ed25519":
            guard algorithm.elementsEqual("ssh-ed25519".utf8), let publicKey = SealVerification.ed25519Key(inWireKey: hostKey) else { return false }
            return SealVerification.ed25519Verifies(signature: Array(raw), message: data, publicKey: publicKey)
        default:
            return false
        }
    }
}

// MARK: - Base64 of key files

/// Standard Base64 decoding for reading a key file's type, without libsodium (this target does not
/// link it directly); nil for anything that is not canonical padded Base64.
enum SSHBase64 {
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0, bits = 0, padding = 0
        for character in text {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): padding += 1; continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(accumulator >> UInt32(bits) & 0xFF))
            }
        }
        return padding <= 2 ? output : nil
    }
}
