import SecureMemory
import VaultFormat

// MARK: - ssh keys kept in the vault (set --ssh-key, the agent's keys)

/// One key of each kept type, whose verifiers read mutated signature blobs.
private let verifiers: [SSHPublicKey] = [SSHKeyType.ed25519, .ecdsaP256, .rsa].compactMap {
    try? SSHPrivateKey.generate($0, rsaBits: 2048, comment: "fuzz").publicKey
}

/// Properties of the ssh key model on every input:
/// - `SSHKeyFile.read` never crashes; an unencrypted key it reads re-encodes (`openSSHText`) to a
///   file it reads again as the same public key and comment, and signs data its public key verifies;
/// - a protected key of at most 2 bcrypt rounds is decrypted with a wrong passphrase: nil or a
///   refusal, never a crash;
/// - `SSHPublicKey(wire:)` of the input, when it parses, keeps exactly its bytes; its line parser
///   never crashes;
/// - each verifier reads the input as a signature blob and never crashes (nor accepts it);
/// - `SSHHostKey(wire:)` (a session-bind's host key: plain or an OpenSSH certificate) never
///   crashes; one that parses keeps a plain key that `SSHHostKey` reads again as a plain key of
///   its type with the same fingerprint, and accepts no input as a signature.
func fuzzSSHKeys(_ bytes: [UInt8]) {
    switch try? SSHKeyFile.read(bytes, source: "fuzz") {
    case .plain(let key)?:
        guard let text = try? key.openSSHText() else { preconditionFailure("a key read was not written back") }
        let again = text.withUnsafeBytes { try? SSHPrivateKey.parse(Array($0), source: "again") }
        precondition(again?.publicKey == key.publicKey && again?.comment == key.comment, "ssh key round trip changed the key")
        let signature = try? key.sign(Array("fuzz".utf8), flags: SSHAgentSignFlags.rsaSHA2_256)
        precondition(signature.map { key.publicKey.verifies(signature: $0, of: Array("fuzz".utf8)) } == true, "a signature did not verify")
    case .protected(let sealed)?:
        if sealed.rounds <= 2 { _ = try? sealed.decrypt(passphrase: SecureBytes(copying: Array("fuzz".utf8))) }
    case nil:
        break
    }
    if let key = try? SSHPublicKey(wire: bytes) {
        precondition(key.wireBytes == bytes, "ssh public key round trip changed the bytes")
    }
    if let host = try? SSHHostKey(wire: bytes) {
        let plain = try? SSHHostKey(wire: host.plainKey)
        precondition(plain?.isCertificate == false && plain?.type == host.type && plain?.fingerprint == host.fingerprint, "a host key's plain key differs")
        precondition(!host.verifies(signature: bytes, of: Array("fuzz".utf8), allowSHA1: true), "a host key blob verified as its own signature")
    }
    if bytes.count <= 16_384 {
        _ = try? SSHPublicKey.parse(line: String(decoding: bytes, as: UTF8.self))
        for verifier in verifiers {
            precondition(!verifier.verifies(signature: bytes, of: Array("fuzz".utf8), allowSHA1: true), "a mutated blob verified")
        }
    }
}
