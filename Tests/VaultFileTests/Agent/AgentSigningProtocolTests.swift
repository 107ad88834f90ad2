import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat
@testable import VaultModel

/// Protocol 3's new messages (docs/AGENT.md): a delegation in `add`, the `sign` request, the
/// `signature` and `cannot sign` answers: exact bytes, round trips, and malformed input refused.
@Suite struct AgentSigningProtocolTests {
    private func body(_ frame: SecureBytes) -> [UInt8] { frame.withUnsafeBytes { Array($0.dropFirst(4)) } }
    private func decodeRequest(_ body: [UInt8]) throws -> AgentRequest { try body.withUnsafeBytes { try AgentRequest.decode(body: $0) } }
    private func decodeResponse(_ body: [UInt8]) throws -> AgentResponse { try body.withUnsafeBytes { try AgentResponse.decode(body: $0) } }

    private let vaultID: [UInt8] = Array(0x10..<0x20)
    private let fileKey = SecureBytes(copying: Array(repeating: UInt8(0xAB), count: 32))
    private let seed = SecureBytes(copying: Array(repeating: UInt8(0x5A), count: 32))

    private func delegation(keyLength: Int = 32) -> AgentDelegationHandOver {
        AgentDelegationHandOver(key: DelegatedSigningKey(seed: seed)!,
                                delegation: SealDelegation(delegatingScheme: .xeddsa, expiry: 0x0102_0304, signature: Array(repeating: 0x11, count: 64)),
                                delegatingKey: MemberKey(type: 2, bytes: Array(repeating: 0x22, count: keyLength)))
    }

    private var block: SealSignatureBlock {
        SealSignatureBlock(scheme: .delegated, signerPosition: 1, signerType: 6, signerKey: Array(repeating: 0x44, count: 32),
                           delegation: SealDelegation(delegatingScheme: .ed25519, expiry: 7, signature: Array(repeating: 0x55, count: 64)),
                           signature: Array(repeating: 0x66, count: 64))
    }

    // MARK: - Layout

    @Test func test_requestFrame_addWithADelegationIsLaidOutAsDocumented() {
        let request = AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: false, path: "",
                                                        confirmCommand: "", delegation: delegation()))
        let expected: [UInt8] = [3, 1] + vaultID + Array(repeating: 0xAB, count: 32) + [0, 0, 0, 0] + [4]
            + Array(repeating: 0x5A, count: 32) + [1] + [4, 3, 2, 1, 0, 0, 0, 0] + Array(repeating: 0x11, count: 64)
            + [2, 32] + Array(repeating: 0x22, count: 32) + [0, 0] + [0, 0]
        #expect(body(request.frame()) == expected)
    }

    @Test func test_requestFrame_signIsLaidOutAsDocumented() {
        let request = AgentRequest.sign(path: "p", headerPrefix: [9, 8, 7], payloadHash: Array(repeating: 0x33, count: 64))
        #expect(body(request.frame()) == [3, 7, 1, 0, 0x70, 3, 0, 9, 8, 7] + Array(repeating: 0x33, count: 64))
    }

    @Test func test_responseFrame_signatureAndCannotSignAreLaidOutAsDocumented() {
        #expect(body(AgentResponse.signature(block).frame()) == [3, 9, 3, 1, 6, 32] + Array(repeating: 0x44, count: 32)
            + [2, 7, 0, 0, 0, 0, 0, 0, 0] + Array(repeating: 0x55, count: 64) + Array(repeating: 0x66, count: 64))
        #expect(body(AgentResponse.cannotSign(.expired).frame()) == [3, 10, 3])
        #expect(AgentSignRefusal.allCases.map(\.rawValue) == [1, 2, 3, 4])
    }

    // MARK: - Round trips

    @Test func test_decode_roundTripsTheNewMessages() throws {
        let add = AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, heldKey: SecureBytes(count: 32), timeoutSeconds: 9,
                                                    onlyIfHeld: true, path: "/v", confirmCommand: "c", delegation: delegation(keyLength: 51)))
        let sign = AgentRequest.sign(path: "/ä", headerPrefix: Array(repeating: 1, count: 65_535), payloadHash: Array(repeating: 2, count: 64))
        for request in [add, sign] {
            let encoded = body(request.frame())
            #expect(body(try decodeRequest(encoded).frame()) == encoded)
        }
        guard case .add(let handOver) = try decodeRequest(body(add.frame())), let decoded = handOver.delegation else {
            Issue.record("no delegation"); return
        }
        #expect(decoded.key.seed.constantTimeEquals(seed) && decoded.key.publicKey == DelegatedSigningKey(seed: seed)!.publicKey)
        #expect(decoded.delegation == delegation().delegation && decoded.delegatingKey.bytes.count == 51 && handOver.heldKey != nil)
        let unsigned = SealSignatureBlock(scheme: .xeddsa, signerPosition: 15, signerType: 2, signerKey: Array(repeating: 1, count: 32),
                                          delegation: nil, signature: Array(repeating: 2, count: 64))
        for response in [AgentResponse.signature(block), .signature(unsigned)] + AgentSignRefusal.allCases.map({ AgentResponse.cannotSign($0) }) {
            let encoded = body(response.frame())
            #expect(body(try decodeResponse(encoded).frame()) == encoded)
        }
        guard case .signature(let decodedBlock) = try decodeResponse(body(AgentResponse.signature(block).frame())) else {
            Issue.record("not a signature"); return
        }
        #expect(decodedBlock == block)
    }

    // MARK: - Malformed input

    @Test func test_requestDecode_refusesMalformedDelegationsAndSignRequests() {
        let add = body(AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: false, path: "",
                                                         confirmCommand: "", delegation: delegation())).frame())
        let scheme = 2 + 16 + 32 + 4 + 1 + 32
        for bad: UInt8 in [0, 3, 4] {
            var wrong = add
            wrong[scheme] = bad
            #expect(throws: AgentProtocolError.malformed("delegating scheme \(bad) is not 1 or 2")) { try decodeRequest(wrong) }
        }
        let keyLength = scheme + 1 + 8 + 64 + 1
        for bad: UInt8 in [0, 65] {
            var wrong = add
            wrong[keyLength] = bad
            #expect(throws: AgentProtocolError.malformed("a delegating key of \(bad) bytes (1 to 64)")) { try decodeRequest(wrong) }
        }
        for cut in 0..<add.count { #expect(throws: AgentProtocolError.self) { try decodeRequest(Array(add.prefix(cut))) } }
        let sign = body(AgentRequest.sign(path: "p", headerPrefix: [9], payloadHash: Array(repeating: 3, count: 64)).frame())
        for cut in 0..<sign.count { #expect(throws: AgentProtocolError.self) { try decodeRequest(Array(sign.prefix(cut))) } }
        #expect(throws: AgentProtocolError.truncated("the payload hash")) { try decodeRequest(Array(sign.dropLast())) }
        #expect(throws: AgentProtocolError.malformed("1 bytes after the last field")) { try decodeRequest(sign + [0]) }
        #expect(throws: AgentProtocolError.malformed("the header prefix is empty")) { try decodeRequest([3, 7, 0, 0, 0, 0]) }
    }

    @Test func test_responseDecode_refusesMalformedSignaturesAndReasons() {
        let good = body(AgentResponse.signature(block).frame())
        var scheme = good
        scheme[2] = 4
        #expect(throws: AgentProtocolError.malformed("unknown scheme 4")) { try decodeResponse(scheme) }
        var position = good
        position[3] = 16
        #expect(throws: AgentProtocolError.malformed("signer position 16 is past the last keyslot")) { try decodeResponse(position) }
        var keyLength = good
        keyLength[5] = 0
        #expect(throws: AgentProtocolError.malformed("a signer key of 0 bytes")) { try decodeResponse(keyLength) }
        var delegating = good
        delegating[6 + 32] = 3
        #expect(throws: AgentProtocolError.malformed("delegating scheme 3 is not 1 or 2")) { try decodeResponse(delegating) }
        for cut in 0..<good.count { #expect(throws: AgentProtocolError.self) { try decodeResponse(Array(good.prefix(cut))) } }
        #expect(throws: AgentProtocolError.malformed("unknown reason 5")) { try decodeResponse([3, 10, 5]) }
        #expect(throws: AgentProtocolError.malformed("unknown reason 0")) { try decodeResponse([3, 10, 0]) }
        #expect(throws: AgentProtocolError.truncated("the reason")) { try decodeResponse([3, 10]) }
    }
}
