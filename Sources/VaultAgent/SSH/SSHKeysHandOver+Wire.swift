import SecureMemory
import VaultModel

// MARK: - The `ssh keys` request on vaultfile's own socket

/// The body of request type 8 (docs/AGENT.md): vault id (16) · file key (32) · flags (u8: bit 0 =
/// replacing; other bits 0) · prefix (string) · key count (u16) · per key: name (string) · comment
/// (string) · options (u8: bit 0 confirm, bit 1 allow SHA-1, bit 2 allow forwarding) · lifetime
/// (u32 seconds; 0 = with the vault) · private key length (u16, 1–16,384) · the private key.
extension SSHKeysHandOver {
    /// The longest private key one entry hands over (an 8,192-bit RSA OpenSSH file is about 6.6 KB).
    public static let maxPrivateKeyLength = 16_384

    func encode(into sink: inout some ByteSink) {
        sink.append(vaultID)
        fileKey.withUnsafeBytes { sink.append(raw: $0) }
        sink.append(UInt8(replacing ? 1 : 0))
        sink.appendAgentString(prefix)
        sink.append(UInt16(keys.count))
        for key in keys {
            sink.appendAgentString(key.name)
            sink.appendAgentString(key.comment)
            sink.append(key.options.rawValue)
            sink.append(key.lifetimeSeconds)
            sink.append(UInt16(key.privateKey.count))
            key.privateKey.withUnsafeBytes { sink.append(raw: $0) }
        }
    }

    /// The bytes one key takes in the request (for batching under `AgentProtocol.maxRequestLength`).
    public static func encodedLength(of key: SSHKeyHandOver) -> Int {
        2 + min(key.name.utf8.count, AgentProtocol.maxPathLength) + 2 + min(key.comment.utf8.count, AgentProtocol.maxPathLength)
            + 1 + 4 + 2 + key.privateKey.count
    }

    static func decode(_ reader: inout WireReader) throws(AgentProtocolError) -> SSHKeysHandOver {
        let vaultID = try reader.bytes(AgentProtocol.vaultIDLength, "the vault id")
        let fileKey = SecureBytes(copying: try reader.raw(AgentProtocol.fileKeyLength, "the file key"))
        let flags = try reader.byte("the flags")
        guard flags <= 1 else { throw .malformed("unknown flags 0x\(String(flags, radix: 16))") }
        let prefix = try reader.string("the prefix", limit: AgentProtocol.maxPathLength)
        let count = Int(try reader.uint16("the key count"))
        var keys: [SSHKeyHandOver] = []
        for index in 0..<count {
            let name = try reader.string("the name of key \(index)", limit: AgentProtocol.maxPathLength)
            let comment = try reader.string("the comment of key \(index)", limit: AgentProtocol.maxPathLength)
            let options = SSHKeyOptions(rawValue: try reader.byte("the options of key \(index)"))
            guard SSHKeyOptions.known.isSuperset(of: options) else { throw .malformed("unknown options of key \(index)") }
            let lifetime = try reader.uint32("the lifetime of key \(index)")
            let length = Int(try reader.uint16("the length of key \(index)"))
            guard length > 0, length <= maxPrivateKeyLength else {
                throw .malformed("key \(index) is \(length) bytes; a key is 1 to \(maxPrivateKeyLength)")
            }
            let privateKey = SecureBytes(copying: try reader.raw(length, "key \(index)"))
            keys.append(SSHKeyHandOver(name: name, comment: comment, options: options, lifetimeSeconds: lifetime, privateKey: privateKey))
        }
        return SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: flags == 1, prefix: prefix, keys: keys)
    }
}
