import SecureMemory
import VaultFormat

// MARK: - The age-plugin client (issue 41)

/// A plugin whose replies are the fuzzer's bytes: stanzas cut by the client's bounded reader,
/// every answer of the client swallowed.
private final class ScriptedPlugin: AgePluginConnection, AgePluginLauncher, AgePluginUserInterface, @unchecked Sendable {
    private var reader = AgePluginStanzaReader(limits: AgePluginClient.limits)
    init(_ bytes: [UInt8]) { try? reader.feed(bytes) }
    func send(_ bytes: [UInt8]) throws(AgePluginClientError) {}
    func receive(phase: String) throws(AgePluginClientError) -> AgeStanza {
        do {
            guard let stanza = try reader.next() else { throw AgePluginClientError.exited(plugin: "fuzz", phase: phase) }
            return stanza
        } catch let error as AgePluginClientError {
            throw error
        } catch {
            throw .protocolViolation(plugin: "fuzz", why: "framing")
        }
    }
    func close() {}
    func start(plugin name: String, stateMachine: AgePluginStateMachine) throws(AgePluginClientError) -> any AgePluginConnection { self }
    var userInterface: any AgePluginUserInterface { self }
    func announce(plugins: [String]) throws(AgePluginClientError) {}
    func display(plugin: String, message: String) -> Bool { true }
    func request(plugin: String, prompt: String, secret: Bool) -> SecureBytes? { nil }
    func confirm(plugin: String, prompt: String, yes: String, no: String?) -> Bool? { nil }
}

/// Property 18: a plugin's replies to the client (recipient-v1 and identity-v1) never crash it; a
/// file key it accepts is exactly 16 bytes and for a file index it sent; a wrap it accepts holds 1
/// to 8 stanzas (at most one per recipient) of at most 4 KiB for each file key; a plugin slot body
/// (`PluginSlot.parse`) and a recipient or identity text never crash, and a body that parses
/// writes back to exactly its bytes; a metadata key `isValidStored` accepts parses as a recipient.
func fuzzPluginClient(_ bytes: [UInt8]) {
    let files: [[AgeStanza]] = [[AgeStanza(type: "vftest", arguments: ["a"], body: [])], []]
    if let keys = try? AgePluginClient.unwrap(files: files, plugin: "fuzz", identities: ["AGE-PLUGIN-FUZZ-1X"], launcher: ScriptedPlugin(bytes)) {
        precondition(keys.allSatisfy { (0..<files.count).contains($0.key) && $0.value.count == 16 }, "a file key the client should have refused")
    }
    let fileKeys = [SecureBytes(count: 16), SecureBytes(count: 16)]
    if let wrapped = try? AgePluginClient.wrap(fileKeys, plugin: "fuzz", recipients: ["age1fuzz1x", "age1fuzz1y"], launcher: ScriptedPlugin(bytes)) {
        precondition(wrapped.stanzas.count == 2 && wrapped.stanzas.allSatisfy { (1...2).contains($0.count) && $0.allSatisfy { $0.body.count <= 4096 } },
                     "a wrap the client should have refused")
    }
    if let slot = try? PluginSlot.parse(body: bytes[...], index: 0) {
        precondition(slot.encodedBody() == bytes, "plugin slot round trip changed the bytes")
    }
    // A plugin slot's key in the metadata (§3.12): what it accepts the recipient parser accepts.
    if AgePluginRecipient.isValidStored(bytes[...]) {
        precondition((try? AgePluginRecipient(parsing: String(decoding: bytes, as: UTF8.self))) != nil, "a stored recipient the parser refuses")
    }
    if bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) {
        _ = try? AgePluginRecipient(parsing: text)
        _ = try? AgePluginIdentity(parsing: text)
    }
}
