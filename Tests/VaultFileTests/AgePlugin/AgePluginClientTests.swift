import Foundation
import SecureMemory
import Testing
@testable import VaultFormat
import VaultModel

/// A plugin played in memory: its replies are fixed stanzas, the client's messages are recorded.
private final class ScriptedPlugin: AgePluginConnection, AgePluginLauncher, AgePluginUserInterface, @unchecked Sendable {
    var replies: [AgeStanza]
    var sent: [UInt8] = []
    var closed = false
    var secretAnswer: String?
    init(_ replies: [AgeStanza], secretAnswer: String? = nil) {
        self.replies = replies
        self.secretAnswer = secretAnswer
    }
    func send(_ bytes: [UInt8]) throws(AgePluginClientError) { sent += bytes }
    func receive(phase: String) throws(AgePluginClientError) -> AgeStanza {
        guard !replies.isEmpty else { throw .exited(plugin: "t", phase: phase) }
        return replies.removeFirst()
    }
    func close() { closed = true }
    func start(plugin name: String, stateMachine: AgePluginStateMachine) throws(AgePluginClientError) -> any AgePluginConnection { self }
    var userInterface: any AgePluginUserInterface { self }
    func announce(plugins: [String]) throws(AgePluginClientError) {}
    func display(plugin: String, message: String) -> Bool { true }
    func request(plugin: String, prompt: String, secret: Bool) -> SecureBytes? { secretAnswer.map { SecureBytes(copying: Array($0.utf8)) } }
    func confirm(plugin: String, prompt: String, yes: String, no: String?) -> Bool? { nil }
    var sentText: String { String(decoding: sent, as: UTF8.self) }
}

private func stanza(_ type: String, _ arguments: [String] = [], _ body: [UInt8] = []) -> AgeStanza {
    AgeStanza(type: type, arguments: arguments, body: body)
}

@Suite struct AgePluginClientTests {
    // MARK: - Names, recipients, identities

    @Test func test_isValid_acceptsOnlyAgePluginNameCharacters() {
        for name in ["yubikey", "fido2-hmac", "tpm", "a.b_c+d", "X9"] { #expect(AgePluginName.isValid(name)) }
        for name in ["", "a/b", "..\u{2F}x", "a b", "a\nb", "é", String(repeating: "a", count: 65)] { #expect(!AgePluginName.isValid(name)) }
    }

    @Test func test_recipient_parsesAPluginRecipientAndRefusesOtherShapes() throws {
        let text = Bech32.encode(humanReadablePart: "age1yubikey", data: Array(repeating: 7, count: 33))
        let recipient = try AgePluginRecipient(parsing: text)
        #expect(recipient.name == "yubikey" && recipient.encoding == text)
        #expect(!AgePluginRecipient.looksLikePlugin("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"))
        #expect(!AgePluginRecipient.looksLikePlugin(Bech32.encode(humanReadablePart: "age1pq", data: [1, 2, 3])))
        #expect(throws: VaultError.self) { try AgePluginRecipient(parsing: Bech32.encode(humanReadablePart: "age1a/b", data: [1])) }
        #expect(throws: VaultError.self) { try AgePluginRecipient(parsing: String(text.dropLast()) + (text.last == "q" ? "p" : "q")) }
    }

    @Test func test_identity_parsesAPluginIdentityAndLowercasesItsName() throws {
        let text = Bech32.encode(humanReadablePart: "age-plugin-yubikey-", data: [1, 2, 3]).uppercased()
        let identity = try AgePluginIdentity(parsing: text)
        #expect(identity.name == "yubikey")
        #expect(throws: VaultError.self) { try AgePluginIdentity(parsing: Bech32.encode(humanReadablePart: "age-plugin-a/b-", data: [1]).uppercased()) }
        let file = Array("# comment\n\(text)\n".utf8)
        let parsed = try AgeIdentityFile.parseWithPlugins(file, source: "f")
        #expect(parsed.identities.isEmpty && parsed.plugins == [identity])
    }

    // MARK: - identity-v1

    @Test func test_unwrap_takesOne16ByteFileKeyForAFileSentAndAnswersEveryCommand() throws {
        let key = [UInt8](repeating: 5, count: 16)
        let plugin = ScriptedPlugin([stanza("msg", [], Array("touch".utf8)), stanza("request-secret", [], Array("PIN".utf8)),
                                     stanza("frobnicate"), stanza("file-key", ["1"], key), stanza("done")], secretAnswer: "1234")
        let keys = try AgePluginClient.unwrap(files: [[stanza("x")], [stanza("y")]], plugin: "t", identities: ["AGE-PLUGIN-T-1X"], launcher: plugin)
        #expect(keys.count == 1 && keys[1]?.withUnsafeBytes { Array($0) } == key)
        #expect(plugin.closed)
        // Phase 1 (grease first), then the answers: ok to msg, ok with the PIN, unsupported, ok to the key.
        #expect(plugin.sentText.hasPrefix("-> grease-"))
        #expect(plugin.sentText.contains("-> add-identity AGE-PLUGIN-T-1X\n\n-> recipient-stanza 0 x\n\n-> recipient-stanza 1 y\n\n-> done\n\n"))
        #expect(plugin.sentText.hasSuffix("-> ok\n\n-> ok\nMTIzNA\n-> unsupported\n\n-> ok\n\n"))
    }

    @Test(arguments: [
        ([stanza("file-key", ["0"], [UInt8](repeating: 1, count: 15))], "a file key of 15 bytes"),
        ([stanza("file-key", ["0"], [UInt8](repeating: 1, count: 16)), stanza("file-key", ["0"], [UInt8](repeating: 1, count: 16))], "a second 'file-key'"),
        ([stanza("file-key", ["1"], [UInt8](repeating: 1, count: 16))], "no file index that was sent"),
        ([stanza("file-key", ["00"], [UInt8](repeating: 1, count: 16))], "no file index that was sent"),
        ([stanza("confirm", ["!!!"], [])], "'confirm' takes one or two base64 choices"),
        ([stanza("done", ["x"])], "'done' with arguments"),
    ])
    func test_unwrap_refusesAnAnswerOutsideTheRules(replies: [AgeStanza], shows: String) {
        let plugin = ScriptedPlugin(replies + [stanza("done")])
        #expect {
            _ = try AgePluginClient.unwrap(files: [[stanza("x")]], plugin: "t", identities: ["I"], launcher: plugin)
        } throws: { error in
            guard case .protocolViolation(_, let why) = error as? AgePluginClientError else { return false }
            return why.contains(shows)
        }
        #expect(plugin.closed)
    }

    @Test func test_unwrap_reportsThePluginsErrorWithAPrintableMessage() {
        let plugin = ScriptedPlugin([stanza("error", ["identity", "0"], Array("no\u{1B}[31m key".utf8))])
        #expect(throws: AgePluginClientError.pluginReported(plugin: "t", kind: "identity", message: "no?[31m key")) {
            _ = try AgePluginClient.unwrap(files: [[stanza("x")]], plugin: "t", identities: ["I"], launcher: plugin)
        }
    }

    // MARK: - recipient-v1

    @Test func test_wrap_sendsExtensionLabelsAndKeepsTheStanzasAndLabels() throws {
        let plugin = ScriptedPlugin([stanza("labels", ["postquantum"]), stanza("recipient-stanza", ["0", "t", "a"], [1, 2]), stanza("done")])
        let wrapped = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "t", recipients: ["age1t1x"], launcher: plugin)
        #expect(wrapped.stanzas == [[stanza("t", ["a"], [1, 2])]] && wrapped.labels == ["postquantum"])
        #expect(plugin.sentText.contains("-> add-recipient age1t1x\n\n"))
        #expect(plugin.sentText.contains("-> wrap-file-key\nAAAAAAAAAAAAAAAAAAAAAA\n-> extension-labels\n\n-> done\n\n"))
    }

    @Test(arguments: [
        ([stanza("recipient-stanza", ["0", "t"]), stanza("recipient-stanza", ["0", "t"])], "more than 1 stanzas"),
        ([stanza("recipient-stanza", ["0", "t"], [UInt8](repeating: 0, count: 4097))], "a stanza body of 4097 bytes"),
        ([stanza("recipient-stanza", ["1", "t"])], "no file index that was sent"),
        ([stanza("labels"), stanza("labels")], "'labels' sent twice"),
    ])
    func test_wrap_refusesAReplyOutsideTheLimits(replies: [AgeStanza], shows: String) {
        let plugin = ScriptedPlugin(replies + [stanza("done")])
        #expect {
            _ = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "t", recipients: ["r"], launcher: plugin)
        } throws: { error in
            guard case .protocolViolation(_, let why) = error as? AgePluginClientError else { return false }
            return why.contains(shows)
        }
    }

    @Test func test_wrap_takesAtMost8StanzasForAFileKeyWhateverTheRecipients() throws {
        let nine = (0..<9).map { "age1t1r\($0)" }
        let eight = Array(repeating: stanza("recipient-stanza", ["0", "t"]), count: 8)
        let wrapped = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "t", recipients: nine, launcher: ScriptedPlugin(eight + [stanza("done")]))
        #expect(wrapped.stanzas[0].count == 8)
        let plugin = ScriptedPlugin(eight + [stanza("recipient-stanza", ["0", "t"]), stanza("done")])
        #expect(throws: AgePluginClientError.protocolViolation(plugin: "t", why: "more than 8 stanzas for one file key")) {
            _ = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "t", recipients: nine, launcher: plugin)
        }
    }

    @Test func test_wrap_refusesADoneWithNoStanzaAndABadName() {
        #expect(throws: AgePluginClientError.noStanza(plugin: "t")) {
            _ = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "t", recipients: ["r"], launcher: ScriptedPlugin([stanza("done")]))
        }
        #expect(throws: AgePluginClientError.invalidName) {
            _ = try AgePluginClient.wrap([SecureBytes(count: 16)], plugin: "../t", recipients: ["r"], launcher: ScriptedPlugin([]))
        }
    }

    // MARK: - Plugin slots

    @Test func test_pluginSlot_opensOnlyWithItsSecretItsVaultAndItsStanzas() throws {
        let secret = SecureBytes(copying: [UInt8](repeating: 9, count: 16))
        let vaultID = [UInt8](repeating: 1, count: 16), fileKey = SecureBytes(copying: [UInt8](repeating: 2, count: 32))
        let stanzas = [stanza("t", ["arg"], [1, 2, 3])]
        let key = try PluginSlot.slotKey(secret: secret, vaultID: vaultID, stanzas: stanzas)
        let nonce = [UInt8](repeating: 3, count: 24)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal([UInt8](repeating: 2, count: 32), key: $0, nonce: nonce, associatedData: []) }
        let slot = PluginSlot(stanzas: stanzas, nonce: nonce, sealedKey: sealed)
        #expect(slot.open(secret: secret, vaultID: vaultID)?.constantTimeEquals(fileKey) == true)
        #expect(slot.open(secret: secret, vaultID: [UInt8](repeating: 7, count: 16)) == nil)
        #expect(slot.open(secret: SecureBytes(copying: [UInt8](repeating: 8, count: 16)), vaultID: vaultID) == nil)
        var changed = slot
        changed.stanzas = [stanza("t", ["arg"], [1, 2, 4])]
        #expect(changed.open(secret: secret, vaultID: vaultID) == nil)
        // The body round-trips, and every truncation of it is damage.
        let body = slot.body()
        #expect(try PluginSlot.parse(body: body[...], index: 0) == slot)
        for length in 0..<body.count { #expect(throws: VaultError.self) { try PluginSlot.parse(body: body.prefix(length), index: 0) } }
        #expect(throws: VaultError.self) { try PluginSlot.parse(body: (body + [0])[...], index: 0) }
    }

    // MARK: - age's no-mixing rule with plugins

    @Test func test_encrypt_mixesAPluginWithPostQuantumRecipientsOnlyWhenItsLabelsArePostquantum() throws {
        let pq = try AgePQIdentity.generate().recipient
        let recipient = try AgePluginRecipient(parsing: Bech32.encode(humanReadablePart: "age1t", data: [1, 2, 3]))
        func plugin(_ labels: [String]?) -> AgePluginFileRecipient {
            let replies = (labels.map { [stanza("labels", $0)] } ?? []) + [stanza("recipient-stanza", ["0", "t", "a"], [1, 2]), stanza("done")]
            return AgePluginFileRecipient([recipient], launcher: ScriptedPlugin(replies))
        }
        let secret = SecureBytes(copying: Array("v".utf8))
        // age 1.3's post-quantum recipients carry the label "postquantum": a plugin saying the same joins them.
        let file = try AgeFile.encrypt(secret, to: [pq, plugin([AgePQRecipient.postQuantumLabel])])
        #expect(try AgeHeader.parse(file[...]).stanzas.map(\.type) == ["mlkem768x25519", "t"])
        // A plugin with no labels (classical, as real YubiKey, FIDO2 and TPM plugins are) does not.
        #expect(throws: AgeFileError.self) { _ = try AgeFile.encrypt(secret, to: [pq, plugin(nil)]) }
        #expect(throws: AgeFileError.self) { _ = try AgeFile.encrypt(secret, to: [plugin(nil), pq]) }
        // Nor does a post-quantum plugin join an X25519 recipient: the labels differ.
        #expect(throws: AgeFileError.self) { _ = try AgeFile.encrypt(secret, to: [plugin(["postquantum"]), AgeIdentity.generate().recipient]) }
    }
}
