import KDF
import SecureMemory
import VaultFile

// MARK: - libFuzzer entry point

/// The password of the damaged-vault corpus, so seeds from Fixtures/damaged open and
/// mutations reach the payload and content parsers.
private let password = SecureBytes(copying: Array("damaged-corpus".utf8))

/// Tiny caps: a mutated header may ask for any KDF cost, and the fuzzer must stay fast.
private let limits = KDFLimits(maxMemoryBytes: 64 << 10, maxArgon2WorkKiB: 256, maxPBKDF2Iterations: 1_000)

/// A keyring holding one key, so that agent lookups parse the header and run the MAC check.
nonisolated(unsafe) private var keyring: AgentKeyring = {
    var keyring = AgentKeyring()
    let handOver = AgentKeyHandOver(vaultID: Array(repeating: 0, count: 16), fileKey: SecureBytes(count: 32), timeoutSeconds: 0,
                                    onlyIfHeld: false, path: "fuzz", confirmCommand: "")
    _ = try? keyring.add(handOver, now: 0)
    return keyring
}()

/// Properties checked on every input:
/// 1. parsing never crashes; a header that parses re-serialises to exactly the bytes it came from;
/// 2. opening never crashes (it may throw);
/// 3. content that decodes re-encodes to exactly the same bytes (one encoding per vault);
/// 4. the agent's request and response parsers (docs/AGENT.md) never crash, and a body that
///    decodes re-encodes to exactly the same bytes; the agent's header lookup never crashes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let (header, length) = try? VaultHeader.parse(bytes, path: "fuzz") {
        let encoded = header.encoded()
        precondition(encoded.count == length && encoded[...] == bytes[0..<length], "header round trip changed the bytes")
    }
    _ = try? VaultCodec.open(bytes, path: "fuzz", password: password, limits: limits)
    if let vault = try? Vault(decodingContent: bytes) {
        precondition((try? vault.encodedContent()) == bytes, "content round trip changed the bytes")
    }
    let body = UnsafeRawBufferPointer(start: data, count: size)
    if let request = try? AgentRequest.decode(body: body) {
        precondition(request.frame().withUnsafeBytes { $0.dropFirst(AgentProtocol.lengthPrefix).elementsEqual(body) },
                     "agent request round trip changed the bytes")
    }
    if let response = try? AgentResponse.decode(body: body) {
        precondition(response.frame().withUnsafeBytes { $0.dropFirst(AgentProtocol.lengthPrefix).elementsEqual(body) },
                     "agent response round trip changed the bytes")
    }
    _ = try? keyring.match(header: bytes, now: 0)
    return 0
}
