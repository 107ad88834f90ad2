import SecureMemory
import Foundation
import TestSupport
import Testing
@testable import VaultFormat

/// The age-plugin protocol's framing, identity-v1's phase 1, the identity line and the trial unwrap.
@Suite struct AgePluginWireTests {
    /// Every stanza `bytes` holds, fed `chunk` bytes at a time.
    static func stanzas(_ bytes: [UInt8], chunk: Int = 1, limits: AgePluginLimits = .plugin) throws -> [AgeStanza] {
        var reader = AgePluginStanzaReader(limits: limits)
        var out: [AgeStanza] = []
        var index = 0
        while index < bytes.count {
            try reader.feed(bytes[index..<min(index + chunk, bytes.count)])
            index += chunk
            while let stanza = try reader.next() { out.append(stanza) }
        }
        return out
    }

    // MARK: - Framing: success

    @Test func test_stanzaReader_readsTheSpecsExampleByteByByte() throws {
        let body = [UInt8](0..<100)
        let messages = AgeStanza.command("add-identity", "AGE-PLUGIN-X-1").pluginMessage()
            + AgeStanza(type: "recipient-stanza", arguments: ["0", "X25519", "abc"], body: body).pluginMessage()
            + AgeStanza.command("done").pluginMessage()
        for chunk in [1, 7, 4096] {
            let read = try Self.stanzas(messages, chunk: chunk)
            #expect(read == [AgeStanza.command("add-identity", "AGE-PLUGIN-X-1"),
                             AgeStanza(type: "recipient-stanza", arguments: ["0", "X25519", "abc"], body: body), AgeStanza.command("done")])
        }
        // A body of whole 64-column lines ends with an empty line.
        let whole = AgeStanza(type: "msg", arguments: [], body: [UInt8](repeating: 5, count: 48))
        #expect(Array(whole.pluginMessage().suffix(2)) == [0x0A, 0x0A])
        #expect(try Self.stanzas(whole.pluginMessage()) == [whole])
    }

    // MARK: - Framing: failure

    @Test func test_stanzaReader_refusesMalformedAndOversizedInput() throws {
        let malformed = ["x\n\n", "->\n\n", "->  a\n\n", "-> a\u{7F}\n\n", "-> a\n====\n", "-> a\nAB\n"]
        for text in malformed {
            #expect(throws: AgePluginError.self, "\(text)") { try Self.stanzas(Array(text.utf8)) }
        }
        let limits = AgePluginLimits(maxStanzas: 2, maxPhaseBytes: 100, maxLineLength: 20, maxBodyLength: 96)
        #expect(throws: AgePluginError.overLimit("a line is longer than 20 bytes")) { try Self.stanzas(Array(("-> " + String(repeating: "a", count: 30)).utf8), limits: limits) }
        #expect(throws: AgePluginError.overLimit("a phase sent more than 2 stanzas")) { try Self.stanzas(Array("-> a\n\n-> b\n\n-> c\n\n".utf8), limits: limits) }
        #expect(throws: AgePluginError.overLimit("a phase sent more than 100 bytes")) { try Self.stanzas([UInt8](repeating: 0x41, count: 101), chunk: 101, limits: limits) }
    }

    // MARK: - identity-v1 phase 1

    @Test func test_identityRequest_collectsIdentitiesAndFilesAndIgnoresGrease() throws {
        let x = AgeStanza(type: "X25519", arguments: ["a"], body: [1])
        var bytes = AgePluginIdentityRequest.clientMessages(identities: ["ID-1", "ID-2"], files: [[x, x], [x]])
        bytes.insert(contentsOf: AgeStanza(type: "grease-x", arguments: ["1"], body: [9]).pluginMessage(), at: 0)
        var request = AgePluginIdentityRequest()
        var done = false
        for stanza in try Self.stanzas(bytes) { done = try request.take(stanza) }
        #expect(done && request.identities == ["ID-1", "ID-2"] && request.files == [[x, x], [x]])
        #expect(throws: AgePluginError.self) { try request.take(.command("done")) }
    }

    @Test func test_identityRequest_refusesOutOfOrderIndices() throws {
        var request = AgePluginIdentityRequest()
        for bad in [["1", "X25519"], ["-1", "X25519"], ["00", "X25519"], ["1024", "X25519"], ["0"]] {
            #expect(throws: AgePluginError.self) { try request.take(AgeStanza(type: "recipient-stanza", arguments: bad, body: [])) }
        }
        _ = try request.take(AgeStanza(type: "recipient-stanza", arguments: ["0", "X25519"], body: []))
        _ = try request.take(AgeStanza(type: "recipient-stanza", arguments: ["1", "X25519"], body: []))
        #expect(throws: AgePluginError.self) { try request.take(AgeStanza(type: "recipient-stanza", arguments: ["0", "X25519"], body: [])) }
    }

    // MARK: - The identity line

    @Test func test_pluginIdentity_roundTripsAndChecksItsMAC() throws {
        let key = [UInt8](repeating: 4, count: 32), vault = [UInt8](repeating: 2, count: 16)
        let identity = try VaultfilePluginIdentity(vaultID: vault, entry: "age/ключ", lendKey: key)
        #expect(identity.line.hasPrefix("AGE-PLUGIN-VAULTFILE-1") && identity.line == identity.line.uppercased())
        let parsed = try VaultfilePluginIdentity(parsing: identity.line)
        #expect(parsed == identity && parsed.isValid(lendKey: key))
        #expect(!parsed.isValid(lendKey: [UInt8](repeating: 5, count: 32)))
        // Another entry under the same key: its MAC is not this line's.
        let other = try VaultfilePluginIdentity(vaultID: vault, entry: "age/other", lendKey: key)
        let forged = Bech32.encode(humanReadablePart: VaultfilePluginIdentity.humanReadablePart,
                                   data: [1] + vault + Array("age/other".utf8) + identity.mac, upperCase: true)
        #expect(try !VaultfilePluginIdentity(parsing: forged).isValid(lendKey: key) && other.isValid(lendKey: key))
        #expect(throws: AgePluginError.self) { try VaultfilePluginIdentity(parsing: "AGE-PLUGIN-OTHER-1" + identity.line.dropFirst(22)) }
        #expect(throws: AgePluginError.self) { try VaultfilePluginIdentity(vaultID: vault, entry: String(repeating: "a", count: 513), lendKey: key) }
        let field = VaultfilePluginIdentity.newLendField()
        #expect(field.count == 64 && VaultfilePluginIdentity.lendKey(fromField: field)?.count == 32)
        #expect(VaultfilePluginIdentity.lendKey(fromField: Array(String(repeating: "G", count: 64).utf8)) == nil)
    }

    // MARK: - Trial unwrap

    @Test func test_unwrap_opensItsStanzaAndRefusesAMalformedFileWhole() throws {
        let identity = AgeIdentity.generate()
        let fileKey = AgeCrypto.generateFileKey()
        let stanzas = try identity.recipient.wrap(fileKey)
        guard case .fileKey(let key) = AgePluginUnwrap.unwrap(stanzas, with: [AgeIdentity.generate(), identity]) else {
            Issue.record("no file key"); return
        }
        #expect(key.constantTimeEquals(fileKey))
        if case .none = AgePluginUnwrap.unwrap(stanzas, with: [AgeIdentity.generate()]) {} else { Issue.record("another identity opened it") }
        let bad = AgeStanza(type: "X25519", arguments: stanzas[0].arguments, body: Array(stanzas[0].body.prefix(31)))
        if case .refused = AgePluginUnwrap.unwrap(stanzas + [bad], with: [identity]) {} else { Issue.record("a malformed file was unwrapped") }
        let lowOrder = AgeStanza(type: "X25519", arguments: [String(decoding: AgeBase64.encodeUnpadded([UInt8](repeating: 0, count: 32)), as: UTF8.self)],
                                 body: stanzas[0].body)
        if case .refused = AgePluginUnwrap.unwrap([lowOrder] + stanzas, with: [identity]) {} else { Issue.record("a low-order share was passed over") }
    }

    // MARK: - The corpus of conversations (also the fuzz target's seeds)

    /// What the plugin makes of a conversation: the file keys it unwraps with the CCTV identity,
    /// or nil when the conversation is refused (framing, limits, order, a malformed known stanza).
    static func outcome(_ bytes: [UInt8]) -> Int? {
        let identity = try! AgeIdentity(parsing: "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0")
        guard let stanzas = try? stanzas(bytes, chunk: 4096) else { return nil }
        var request = AgePluginIdentityRequest()
        for stanza in stanzas { guard (try? request.take(stanza)) != nil else { return nil } }
        guard request.isComplete else { return nil }
        var keys = 0
        for file in request.files {
            switch AgePluginUnwrap.unwrap(file, with: [identity]) {
            case .fileKey: keys += 1
            case .refused: return nil
            case .none: break
            }
        }
        return keys
    }

    @Test func test_corpus_okConversationsUnwrapAndBadOnesAreRefused() throws {
        let folder = ProjectPaths.root.appendingPathComponent("Fuzz/age-plugin-seeds")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.count >= 9)
        for name in names {
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
            let outcome = Self.outcome(bytes)
            if name.hasPrefix("ok-") {
                #expect(outcome != nil && outcome! >= 1, "\(name)")
            } else {
                #expect(outcome == nil, "\(name) \(String(describing: outcome))")
            }
        }
    }
}
