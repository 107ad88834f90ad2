import Foundation
import Glibc
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import vaultfile
@testable import VaultFormat
import VaultModel

/// Writes the age plugin slot cases of the damaged corpus (`Fixtures/damaged/plugin-*`) and the
/// plugin keys of the key corpus (`Fixtures/damaged/keys/*plugin*`), once, by hand:
///
///     VAULTFILE_WRITE_DAMAGED_PLUGIN=1 swift test --skip-build --filter PluginCorpusWriter
///
/// Cases are appended; a file that exists is never rewritten (landed cases never change). The
/// base vault is made through the test plugin (Tests/plugin/age-plugin-vftest.py, the seed of
/// `PluginHarness`, so its plugin slot opens with that public identity); every damaged case is
/// crafted from it here, and its expected message checked against the library before it is written.
/// `PluginCorpusCLITests` and the corpus suites (DamagedCorpusTests, DamagedCorpusCLITests,
/// KeyCorpusCLITests) then check them with every other case.
@Suite(.serialized) struct PluginCorpusWriter {
    /// The plugin name of the cases whose plugin is installed nowhere.
    static let absentName = "vfabsent"

    /// A Bech32 plugin recipient for `prefix` (`age1NAME`) over `count` bytes.
    static func recipient(_ prefix: String, count: Int = 33) -> String {
        Bech32.encode(humanReadablePart: prefix, data: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_PLUGIN"] == "1"))
    func test_writeCorpus_pluginSlots() throws {
        let folder = DamagedCorpus.folder
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(DamagedCorpus.Manifest.self, from: Data(contentsOf: manifestURL))
        let cli = try CLI(); defer { cli.directory.remove() }
        let plugin = try PluginHarness(cli)
        // The launcher of the binary, finding the test plugin on this process's PATH (a run by hand).
        setenv("PATH", plugin.path, 1)
        AgePluginSlots.launcher = PluginLauncher()
        defer { AgePluginSlots.launcher = nil }
        let password = SecureBytes(copying: Array(manifest.password.utf8))
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))
        var vault = Vault()
        try vault.setValue(Array(manifest.canaryValue.utf8), for: manifest.canaryName, now: 1_700_000_000_000)
        // Unsigned (format 1.4 with flags 0x02 and 0x10): the metadata cases change the block, which nothing else covers then.
        let made = try VaultCodec.create(vault, slots: [(.password(password, kdf), "admin"),
                                                        (.plugin(try AgePluginRecipient(parsing: plugin.recipient)), "test plugin")], now: 1, signed: false)
        let base = try made.seal()
        let (header, length) = try VaultHeader.parse(base, path: "base")
        precondition(header.usesLongKeys && !header.isSigned && header.keyslots.count == 2)
        guard case .plugin(let slot) = header.keyslots[1] else { preconditionFailure("keyslot 1 is not a plugin slot") }
        let payload = Array(base[length...])
        let opened = try Self.open(base, password: password)
        let entries = try #require(opened.slotMetadata)

        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            precondition(!manifest.cases.contains { $0.file == file })
            var error: (any Error)? = nil
            do { _ = try Self.open(bytes, password: password) } catch let thrown { error = thrown }
            precondition(status == 0 ? error == nil : error.map { "\($0)".contains(message) } == true, "\(file): \(String(describing: error))")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            manifest.cases.append(.init(file: file, description: description, expectStatus: status, expectMessage: message))
        }
        /// The base with keyslot 1's body replaced by `body` (type 9 kept), checksum recomputed.
        func withBody(_ body: [UInt8]) -> [UInt8] {
            var next = header
            next.keyslots[1] = .unknown(type: PluginSlot.type, body: body)
            return next.encoded() + payload
        }
        /// The base with keyslot 1's metadata key replaced by `key`, the block sealed again and the MAC recomputed.
        func withKey(_ key: [UInt8]) throws -> [UInt8] {
            var changed = entries
            changed[1].publicKey = key
            return try Self.withMetadata(MetadataBlock.encode(changed, slots: header.keyslots, longKeys: true), header: header,
                                         fileKey: opened.fileKey, payload: payload)
        }
        let stanza = slot.stanzas[0], tail = slot.nonce + slot.sealedKey
        let noRecipient = "holds no valid age plugin recipient"

        try add("plugin-ok.vault", "format 1.4, unsigned: a password slot and a plugin slot of the test plugin (age-plugin-vftest, PluginHarness's seed)",
                0, "", base)
        try add("plugin-absent-ok.vault", "a plugin slot whose recipient names age-plugin-\(Self.absentName), installed nowhere: the password opens it, no plugin runs",
                0, "", try withKey(Array(Self.recipient("age1" + Self.absentName).utf8)))
        // The slot's body as the header parser meets it (docs/FORMAT.md §3.12).
        try add("plugin-stanzas-0.vault", "a plugin slot of 0 stanzas", 4, "holds 0 plugin stanzas", withBody([0] + tail))
        try add("plugin-stanzas-9.vault", "a plugin slot of 9 stanzas (at most 8)", 4, "holds 9 plugin stanzas",
                withBody(PluginSlot.encode(Array(repeating: stanza, count: 9)) + tail))
        let big = AgeStanza(type: stanza.type, arguments: stanza.arguments, body: [UInt8](repeating: 0x41, count: AgePluginClient.maxStanzaBody + 1))
        try add("plugin-stanza-body-4097.vault", "a plugin stanza body of 4,097 bytes (at most 4,096)", 4, "plugin stanza body of 4097 bytes",
                withBody(PluginSlot.encode([big]) + tail))
        let block = PluginSlot.encode([stanza])
        try add("plugin-stanza-truncated.vault", "a plugin slot that ends inside its stanza's body", 4, "keyslot 1 stanza body needs", withBody(Array(block.dropLast(5))))
        var lengthPastEnd = block
        lengthPastEnd[block.count - stanza.body.count - 2] = 0xFF
        lengthPastEnd[block.count - stanza.body.count - 1] = 0x0F
        try add("plugin-stanza-length-past-the-end.vault", "a plugin stanza body length (4,095) that runs past the slot", 4, "keyslot 1 stanza body needs 4095 bytes",
                withBody(lengthPastEnd + tail))
        let many = AgeStanza(type: stanza.type, arguments: (1...16).map { "a\($0)" }, body: stanza.body)
        try add("plugin-stanza-arguments-17.vault", "a plugin stanza of 17 arguments (at most 16)", 4, "plugin stanza of 17 arguments",
                withBody(PluginSlot.encode([many]) + tail))
        let spaced = AgeStanza(type: "vf test", arguments: stanza.arguments, body: stanza.body)
        try add("plugin-stanza-argument-space.vault", "a plugin stanza type holding a space", 4, "not printable ASCII", withBody(PluginSlot.encode([spaced]) + tail))
        let empty = AgeStanza(type: stanza.type, arguments: [""], body: stanza.body)
        try add("plugin-stanza-argument-empty.vault", "a plugin stanza argument of 0 bytes", 4, "not printable ASCII", withBody(PluginSlot.encode([empty]) + tail))
        try add("plugin-sealed-47.vault", "a plugin slot whose sealed file key is 47 bytes (exactly 48)", 4, "keyslot 1 sealed key needs 48 bytes", withBody(block + tail.dropLast()))
        try add("plugin-sealed-49.vault", "a plugin slot whose sealed file key is 49 bytes (exactly 48)", 4, "bytes after its sealed key",
                withBody(block + tail + [0]))
        var flipped = slot
        var flippedBody = stanza.body
        flippedBody[0] ^= 0x01
        flipped.stanzas[0] = AgeStanza(type: stanza.type, arguments: stanza.arguments, body: flippedBody)
        var flippedHeader = header
        flippedHeader.keyslots[1] = .plugin(flipped)
        try add("plugin-stanza-changed.vault", "a plugin stanza body with one bit flipped, checksum recomputed (the header MAC fails)", 4,
                "fails authentication", flippedHeader.encoded() + payload)
        // The recipient in the metadata: what every rotation would run (§3.12), checked at every open.
        try add("plugin-recipient-name-slash.vault", "a metadata recipient age1vf/test1… (valid Bech32, a / in the plugin name)", 4, noRecipient,
                try withKey(Array(Self.recipient("age1vf/test").utf8)))
        try add("plugin-recipient-name-65.vault", "a metadata recipient whose plugin name is 65 characters (at most 64)", 4, noRecipient,
                try withKey(Array(Self.recipient("age1" + String(repeating: "n", count: 65)).utf8)))
        try add("plugin-recipient-non-ascii.vault", "a metadata recipient holding UTF-8 beyond ASCII (age1vftést1…)", 4, noRecipient,
                try withKey(Array(Self.recipient("age1vftést").utf8)))
        try add("plugin-recipient-too-long.vault", "a metadata recipient of more than 2,048 characters", 4, noRecipient,
                try withKey(Array(Self.recipient("age1vftest", count: 1_400).utf8)))
        var broken = Array(plugin.recipient.utf8)
        broken[20] = broken[20] == UInt8(ascii: "q") ? UInt8(ascii: "p") : UInt8(ascii: "q")
        try add("plugin-recipient-bad-checksum.vault", "the metadata recipient with one character changed (its Bech32 checksum fails)", 4, noRecipient,
                try withKey(broken))
        try add("plugin-recipient-upper-case.vault", "the metadata recipient in upper case", 4, noRecipient, try withKey(Array(plugin.recipient.uppercased().utf8)))
        try add("plugin-recipient-x25519.vault", "an age X25519 recipient (age1…) where a plugin slot's recipient belongs", 4, noRecipient,
                try withKey(Array(AgeIdentity.generate().recipient.description.utf8)))
        try add("plugin-recipient-empty.vault", "an empty key in the metadata of a plugin slot", 4, noRecipient, try withKey([]))
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: manifestURL)
        try writeKeyCases(plugin)
    }

    /// The plugin identities and recipients of `Fixtures/damaged/keys/`, appended to its manifest.
    func writeKeyCases(_ plugin: PluginHarness) throws {
        let folder = DamagedCorpus.folder.appendingPathComponent("keys")
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var cases = try JSONDecoder().decode([KeyCase].self, from: Data(contentsOf: manifestURL))
        func add(_ file: String, _ use: String, _ description: String, _ status: Int32, _ message: String, _ text: String) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            try Data((text + "\n").utf8).write(to: folder.appendingPathComponent(file))
            cases.append(KeyCase(description: description, expectMessage: message, expectStatus: status, file: file, use: use))
        }
        let data = [UInt8](repeating: 0x5A, count: 32)
        let identity = { (name: String) in Bech32.encode(humanReadablePart: "AGE-PLUGIN-\(name)-", data: data, upperCase: true) }
        try add("identity-plugin-absent-no-slot.txt", "identity", "a valid plugin identity (age-plugin-\(Self.absentName), installed nowhere) for a vault without plugin slots: no plugin runs", 3,
                "the vault has no age plugin keyslot, so age-plugin-\(Self.absentName) was not started", identity(Self.absentName.uppercased()))
        try add("identity-plugin-name-slash.txt", "identity", "a plugin identity AGE-PLUGIN-A/B-1… (valid Bech32, a / in the name)", 2,
                "names a plugin with characters other than", identity("A/B"))
        try add("identity-plugin-lower-case.txt", "identity", "a plugin identity in lower case", 2, "an age plugin identity is uppercase",
                identity("VFTEST").lowercased())
        try add("identity-plugin-name-empty.txt", "identity", "a plugin identity with an empty name (AGE-PLUGIN--1…)", 2, "an age plugin identity is uppercase, AGE-PLUGIN-NAME-1",
                identity(""))
        try add("recipients-plugin-name-slash.txt", "recipients", "a plugin recipient age1a/b1… (valid Bech32, a / in the name)", 2,
                "names a plugin with characters other than", Self.recipient("age1a/b"))
        var broken = Array(plugin.recipient.utf8)
        broken[20] = broken[20] == UInt8(ascii: "q") ? UInt8(ascii: "p") : UInt8(ascii: "q")
        try add("recipients-plugin-bad-checksum.txt", "recipients", "the test plugin's recipient with one character changed", 2,
                "the age plugin recipient is not valid Bech32", String(decoding: broken, as: UTF8.self))
        try add("recipients-plugin-absent.txt", "recipients", "a valid plugin recipient whose plugin (age-plugin-\(Self.absentName)) is installed nowhere", 1,
                "age-plugin-\(Self.absentName) is not installed", Self.recipient("age1" + Self.absentName))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(cases).write(to: manifestURL)
    }

    /// A case of the key corpus's manifest (KeyCorpusCLITests reads it).
    struct KeyCase: Codable {
        var description: String
        var expectMessage: String
        var expectStatus: Int32
        var file: String
        var use: String
    }

    // MARK: - Helpers

    /// `bytes` opened in memory with `password`, as the corpus suites open every case.
    static func open(_ bytes: [UInt8], password: SecureBytes) throws -> UnlockedVault {
        let parsed = try VaultCodec.parse(bytes, path: "case")
        var payload = parsed.payload
        return try VaultCodec.open(header: parsed.header, payload: &payload,
                                   with: Unlocker(credentials: [UnlockCredential(.password(password), source: "the password")], limits: .defaults))
    }

    /// The metadata block of `header` replaced by `plaintext` sealed under `fileKey`, the MAC
    /// recomputed (an unsigned header: nothing else covers the block).
    static func withMetadata(_ plaintext: [UInt8], header: VaultHeader, fileKey: SecureBytes, payload: [UInt8]) throws -> [UInt8] {
        var next = header
        next.metadata = MetadataBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: plaintext.count + 16))
        let nonce = randomBytes(count: 24)
        let key = Subkey.derive(from: fileKey, MetadataBlock.subkey)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: next.metadataAssociatedData()) }
        next.metadata = MetadataBlock(nonce: nonce, sealed: sealed)
        next.mac = VaultCodec.headerMAC(next, fileKey: fileKey)
        return next.encoded() + payload
    }
}
