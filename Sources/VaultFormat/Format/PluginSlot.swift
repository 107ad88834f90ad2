import SecureMemory
import VaultModel

// MARK: - age plugin keyslots (type 9, format 1.4)

/// An age plugin keyslot (docs/FORMAT.md §3.12): a fresh 16-byte secret wrapped by the plugin
/// (recipient-v1's `wrap-file-key`, as for an age file key), the plugin's stanzas kept as they
/// came, and the 32-byte file key sealed under HKDF-SHA-256 of that secret, bound to the slot
/// type, the vault and the stanzas. The metadata keeps the recipient (`age1NAME1…`), so every
/// rotation runs the plugin again; nothing symmetric lets one skip it. Read only with flag 0x10.
public struct PluginSlot: Equatable, Sendable {
    /// The slot's type byte.
    public static let type: UInt8 = 9
    /// The most stanzas a slot holds.
    static let maxStanzas = AgePluginClient.maxStanzasPerFile
    /// The most arguments (the type included) of one stanza.
    static let maxArguments = 16
    /// The first bytes of the HKDF info (never one of age's labels).
    static let infoLabel = Array("vaultfile keyslot 1.4 plugin".utf8)
    /// The length of the secret the plugin wraps: an age file key's.
    static let secretLength = 16
    /// Nonce and sealed file key.
    static let nonceLength = 24, sealedLength = 48

    /// The plugin's stanzas, in the order it sent them.
    public var stanzas: [AgeStanza]
    /// The XChaCha20-Poly1305 nonce.
    public var nonce: [UInt8]
    /// The 32-byte file key sealed under the slot key, then its tag.
    public var sealedKey: [UInt8]

    // MARK: Encoding

    /// `n (1) ‖ n × (argument count (1) ‖ each: length (1) ‖ bytes ‖ body length (u16) ‖ body)`.
    static func encode(_ stanzas: [AgeStanza]) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.append(UInt8(stanzas.count))
        for stanza in stanzas {
            let arguments = [stanza.type] + stanza.arguments
            writer.append(UInt8(arguments.count))
            for argument in arguments {
                writer.append(UInt8(argument.utf8.count))
                writer.append(Array(argument.utf8))
            }
            writer.append(UInt16(stanza.body.count))
            writer.append(stanza.body)
        }
        return writer.bytes
    }

    /// The slot's body: the stanza block, the nonce, the sealed key.
    func body() -> [UInt8] { Self.encode(stanzas) + nonce + sealedKey }
    /// `body()`, for the fuzz target's round trip.
    package func encodedBody() -> [UInt8] { body() }

    /// Parses a body: 1 to 8 stanzas of 1 to 16 arguments of 1 to 255 printable ASCII bytes and a
    /// body of at most 4 KiB, then exactly the nonce and the sealed key. Anything else is damage.
    package static func parse(body: ArraySlice<UInt8>, index: Int) throws(VaultError) -> PluginSlot {
        var reader = ByteReader(body, reading: .header)
        let count = Int(try reader.read(UInt8.self, "keyslot \(index) stanza count"))
        guard (1...maxStanzas).contains(count) else {
            throw .headerDamaged("keyslot \(index) holds \(count) plugin stanzas; a plugin slot holds 1 to \(maxStanzas)")
        }
        var stanzas: [AgeStanza] = []
        for _ in 0..<count {
            let arguments = Int(try reader.read(UInt8.self, "keyslot \(index) stanza"))
            guard (1...maxArguments).contains(arguments) else { throw .headerDamaged("keyslot \(index) has a plugin stanza of \(arguments) arguments") }
            var texts: [String] = []
            for _ in 0..<arguments {
                let length = Int(try reader.read(UInt8.self, "keyslot \(index) stanza argument"))
                let bytes = try reader.read(length, "keyslot \(index) stanza argument")
                guard AgeStanza.isValidArgument(bytes) else { throw .headerDamaged("keyslot \(index) has a plugin stanza argument that is not printable ASCII") }
                texts.append(String(decoding: bytes, as: UTF8.self))
            }
            let length = Int(try reader.read(UInt16.self, "keyslot \(index) stanza body length"))
            guard length <= AgePluginClient.maxStanzaBody else { throw .headerDamaged("keyslot \(index) has a plugin stanza body of \(length) bytes") }
            let stanzaBody = try reader.read(length, "keyslot \(index) stanza body")
            stanzas.append(AgeStanza(type: texts[0], arguments: Array(texts.dropFirst()), body: Array(stanzaBody)))
        }
        let nonce = try reader.read(nonceLength, "keyslot \(index) nonce")
        let sealed = try reader.read(sealedLength, "keyslot \(index) sealed key")
        guard reader.remaining == 0 else { throw .headerDamaged("keyslot \(index) has bytes after its sealed key") }
        return PluginSlot(stanzas: stanzas, nonce: Array(nonce), sealedKey: Array(sealed))
    }

    // MARK: The key

    /// `HKDF-SHA-256(ikm = secret, salt = vault id, info = "vaultfile keyslot 1.4 plugin" ‖ 09 ‖ vault id ‖ stanza block)`.
    static func slotKey(secret: SecureBytes, vaultID: [UInt8], stanzas: [AgeStanza]) throws -> SecureBytes {
        let info = infoLabel + [type] + vaultID + encode(stanzas)
        return try secret.withUnsafeBytes { try HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: vaultID, info: info) }
    }

    /// A slot for `recipient`: a fresh secret, wrapped by the plugin, and `fileKey` sealed under it.
    /// A plugin that sends labels asks that its stanza stay apart from others (age's rule for
    /// recipients of different labels): refused unless the slot is the vault's only one (`alone`).
    static func wrap(_ fileKey: SecureBytes, to recipient: AgePluginRecipient, vaultID: [UInt8], alone: Bool) throws -> PluginSlot {
        guard let launcher = AgePluginSlots.launcher else { throw AgePluginClientError.notAllowed(plugin: recipient.name, context: "this command") }
        let secret = SecureBytes(copying: randomBytes(count: secretLength))
        let wrapped = try AgePluginClient.wrap([secret], plugin: recipient.name, recipients: [recipient.encoding], launcher: launcher)
        let stanzas = wrapped.stanzas[0]
        let encodedLength = encode(stanzas).count
        guard encodedLength + nonceLength + sealedLength <= Int(UInt16.max) else {
            throw AgePluginClientError.protocolViolation(plugin: recipient.name, why: "its stanzas do not fit in a keyslot")
        }
        if let labels = wrapped.labels, !labels.isEmpty, !alone {
            throw AgePluginClientError.exclusive(plugin: recipient.name, others: "the vault's other keyslots")
        }
        let key = try slotKey(secret: secret, vaultID: vaultID, stanzas: stanzas)
        let nonce = randomBytes(count: nonceLength)
        var plaintext = fileKey.withUnsafeBytes { Array($0) }
        defer { wipe(&plaintext) }
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: []) }
        return PluginSlot(stanzas: stanzas, nonce: nonce, sealedKey: sealed)
    }

    /// The file key, given the secret the plugin unwrapped from this slot's stanzas; nil when it
    /// does not open (a wrong secret, or stanzas or a vault other than those of the wrap).
    func open(secret: SecureBytes, vaultID: [UInt8]) -> SecureBytes? {
        guard secret.count == Self.secretLength, let key = try? Self.slotKey(secret: secret, vaultID: vaultID, stanzas: stanzas),
              let opened = try? key.withUnsafeBytes({ try XChaCha20Poly1305.open(sealedKey, key: $0, nonce: nonce, associatedData: []) }),
              opened.count == 32 else { return nil }
        return opened
    }
}

// MARK: - The executable's plugin launcher

/// Where the library finds the plugin launcher for keyslots: set by the executable at start-up
/// for the commands that may run plugins; left nil by textconv, the merge driver and the agent,
/// so that a vault's metadata never makes them start a program.
public enum AgePluginSlots {
    /// The launcher, or nil when no plugin may be started.
    nonisolated(unsafe) public static var launcher: (any AgePluginLauncher)?
}
