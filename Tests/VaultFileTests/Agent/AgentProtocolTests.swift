import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultModel

/// The agent's wire format (docs/AGENT.md): exact bytes, one encoding per message, and refusals
/// that name the field for truncated, oversized and garbage frames.
@Suite struct AgentProtocolTests {
    private func bytes(_ frame: SecureBytes) -> [UInt8] { frame.withUnsafeBytes { Array($0) } }

    /// The body of a frame (after the 4-byte length), checking the length prefix.
    private func body(_ frame: SecureBytes) -> [UInt8] {
        let all = bytes(frame)
        let length = Int(all[0]) | Int(all[1]) << 8 | Int(all[2]) << 16 | Int(all[3]) << 24
        precondition(length == all.count - 4, "the length prefix counts the body")
        return Array(all[4...])
    }

    private func decodeRequest(_ body: [UInt8]) throws -> AgentRequest {
        try body.withUnsafeBytes { try AgentRequest.decode(body: $0) }
    }

    private func decodeResponse(_ body: [UInt8]) throws -> AgentResponse {
        try body.withUnsafeBytes { try AgentResponse.decode(body: $0) }
    }

    private let vaultID: [UInt8] = Array(0x10..<0x20)
    private let key = SecureBytes(copying: Array(repeating: UInt8(0xAB), count: 32))

    // MARK: - Requests

    @Test func test_requestFrame_addIsLaidOutAsDocumented() throws {
        let request = AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, timeoutSeconds: 900, onlyIfHeld: true,
                                                        path: "/v", confirmCommand: "ok"))
        let expected: [UInt8] = [3, 1] + vaultID + Array(repeating: 0xAB, count: 32) + [0x84, 0x03, 0, 0] + [1]
            + [2, 0] + Array("/v".utf8) + [2, 0] + Array("ok".utf8)
        #expect(body(request.frame()) == expected)
        #expect(bytes(request.frame()).prefix(4) == [UInt8(expected.count), 0, 0, 0])
        // With the key the sender opened the vault with (passwd's hand-over): flag bit 1, then its 32 bytes.
        let held = SecureBytes(copying: Array(repeating: UInt8(0xCD), count: 32))
        let proven = AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, heldKey: held, timeoutSeconds: 0, onlyIfHeld: true,
                                                       path: "", confirmCommand: ""))
        #expect(body(proven.frame()) == [3, 1] + vaultID + Array(repeating: 0xAB, count: 32) + [0, 0, 0, 0] + [3]
            + Array(repeating: 0xCD, count: 32) + [0, 0, 0, 0])
    }

    @Test func test_requestFrame_keyLockAndEmptyRequestsAreLaidOutAsDocumented() throws {
        #expect(body(AgentRequest.key(path: "p", header: [9, 8, 7]).frame()) == [3, 2, 1, 0, 0x70, 3, 0, 9, 8, 7])
        #expect(body(AgentRequest.lock(vaultID: vaultID).frame()) == [3, 3] + vaultID)
        #expect(body(AgentRequest.lockAll.frame()) == [3, 4])
        #expect(body(AgentRequest.status.frame()) == [3, 5])
        #expect(body(AgentRequest.stop.frame()) == [3, 6])
    }

    @Test func test_requestDecode_roundTripsEveryType() throws {
        let requests: [AgentRequest] = [
            .add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, timeoutSeconds: 0, onlyIfHeld: false, path: "/ä/v", confirmCommand: "")),
            .key(path: "/v", header: Array(repeating: 1, count: 65_535)), .lock(vaultID: vaultID), .lockAll, .status, .stop,
            .add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, heldKey: SecureBytes(count: 32), timeoutSeconds: 9, onlyIfHeld: true,
                                  path: "/v", confirmCommand: "c")),
        ]
        for request in requests {
            let encoded = body(request.frame())
            #expect(body(try decodeRequest(encoded).frame()) == encoded)
        }
        guard case .add(let handOver) = try decodeRequest(body(requests[0].frame())) else { Issue.record("not an add"); return }
        #expect(handOver.fileKey.constantTimeEquals(key) && handOver.path == "/ä/v" && !handOver.onlyIfHeld && handOver.heldKey == nil)
        guard case .add(let proven) = try decodeRequest(body(requests[6].frame())) else { Issue.record("not an add"); return }
        #expect(proven.heldKey?.constantTimeEquals(SecureBytes(count: 32)) == true && proven.onlyIfHeld)
    }

    // MARK: - Releases that meet

    @Test func test_agentVersioning_stopAndDoneAreTheSameInEveryVersion() {
        for version: UInt8 in [1, 2, 3, 200] {
            let stop = bytes(AgentVersioning.stopFrame(version: version))
            #expect(stop == [2, 0, 0, 0, version, 6])
            #expect(Array(stop[4...]).withUnsafeBytes { AgentVersioning.stopVersion(of: $0) } == version)
            #expect(Array(bytes(AgentVersioning.doneFrame(version: version))[4...]).withUnsafeBytes { AgentVersioning.isDone($0) })
        }
        #expect(body(AgentRequest.stop.frame()) == Array(bytes(AgentVersioning.stopFrame(version: AgentProtocol.version))[4...]))
        #expect([2, 5].withUnsafeBytes { AgentVersioning.stopVersion(of: $0) } == nil)
        #expect([2, 6, 0].withUnsafeBytes { AgentVersioning.stopVersion(of: $0) } == nil)
    }

    @Test func test_agentVersioning_answersAVersion1ClientInItsOwnLayout() throws {
        // Release 0.2's client reads `failed` as [1, 5, length (u16), text] and shows the text.
        let answer = body(AgentVersioning.otherVersionAnswer(requestVersion: 1))
        #expect(Array(answer.prefix(2)) == [1, 5])
        let length = Int(answer[2]) | Int(answer[3]) << 8
        #expect(length == answer.count - 4)
        let text = String(decoding: answer[4...], as: UTF8.self)
        #expect(text == "this agent is from another release (it speaks agent protocol 3, this vaultfile 1): "
            + "run 'vaultfile agent stop', then unlock again")
        // A later client gets `failed` in this version: its first byte tells it another release answered.
        guard case .failed(let why) = try decodeResponse(body(AgentVersioning.otherVersionAnswer(requestVersion: 4))) else {
            Issue.record("not a failure"); return
        }
        #expect(why == "protocol version 4 is not supported (this vaultfile speaks version 3)")
    }

    @Test func test_requestDecode_refusesOtherVersionsAndTypes() {
        #expect(throws: AgentProtocolError.unsupportedVersion(1)) { try decodeRequest([1, 5]) }
        #expect(throws: AgentProtocolError.unsupportedVersion(2)) { try decodeRequest([2, 5]) }
        #expect(throws: AgentProtocolError.unknownType(9)) { try decodeRequest([3, 9]) }
        #expect(throws: AgentProtocolError.truncated("the version")) { try decodeRequest([]) }
        #expect(throws: AgentProtocolError.truncated("the message type")) { try decodeRequest([3]) }
    }

    @Test func test_requestDecode_refusesTruncatedAndTrailingBytes() throws {
        let full = body(AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, timeoutSeconds: 5, onlyIfHeld: false,
                                                           path: "/v", confirmCommand: "c")).frame())
        for cut in 0..<full.count {
            #expect(throws: AgentProtocolError.self) { try decodeRequest(Array(full.prefix(cut))) }
        }
        #expect(throws: AgentProtocolError.truncated("the file key")) { try decodeRequest(Array(full.prefix(2 + 16 + 5))) }
        #expect(throws: AgentProtocolError.malformed("1 bytes after the last field")) { try decodeRequest(full + [0]) }
        #expect(throws: AgentProtocolError.malformed("1 bytes after the last field")) { try decodeRequest([3, 5, 0]) }
    }

    @Test func test_requestDecode_refusesBadFieldsAndOversizedBodies() {
        var flags = body(AgentRequest.add(AgentKeyHandOver(vaultID: vaultID, fileKey: key, timeoutSeconds: 5, onlyIfHeld: false,
                                                            path: "", confirmCommand: "")).frame())
        flags[2 + 16 + 32 + 4] = 8
        #expect(throws: AgentProtocolError.malformed("unknown flags 0x8")) { try decodeRequest(flags) }
        // Bit 2 says a delegation follows (protocol 3): the body then ends inside its key.
        flags[2 + 16 + 32 + 4] = 4
        #expect(throws: AgentProtocolError.truncated("the delegated key")) { try decodeRequest(flags) }
        // Bit 1 says a held key follows: without its 32 bytes the body ends inside it.
        flags[2 + 16 + 32 + 4] = 2
        #expect(throws: AgentProtocolError.truncated("the held key")) { try decodeRequest(flags) }
        #expect(throws: AgentProtocolError.malformed("the header is empty")) { try decodeRequest([3, 2, 0, 0, 0, 0]) }
        #expect(throws: AgentProtocolError.malformed("the path is not UTF-8 text without NUL")) { try decodeRequest([3, 2, 1, 0, 0xFF, 1, 0, 1]) }
        #expect(throws: AgentProtocolError.malformed("the path is not UTF-8 text without NUL")) { try decodeRequest([3, 2, 1, 0, 0, 1, 0, 1]) }
        #expect(throws: AgentProtocolError.tooLong(what: "the path", length: 4097, limit: 4096)) {
            try decodeRequest([3, 2, 0x01, 0x10] + Array(repeating: 0x61, count: 4097) + [1, 0, 1])
        }
        let oversized = [UInt8](repeating: 0, count: AgentProtocol.maxRequestLength + 1)
        #expect(throws: AgentProtocolError.tooLong(what: "the request", length: oversized.count, limit: AgentProtocol.maxRequestLength)) {
            try decodeRequest(oversized)
        }
    }

    @Test func test_requestDecode_neverTrapsOnRandomBytes() {
        for length in 0..<300 {
            for _ in 0..<20 {
                var garbage = randomBytes(count: length)
                if length > 1, Bool.random() { garbage[0] = AgentProtocol.version; garbage[1] = UInt8.random(in: 1...10) }
                _ = try? decodeRequest(garbage)
                _ = try? decodeResponse(garbage)
            }
        }
    }

    // MARK: - Responses

    @Test func test_responseFrame_isLaidOutAsDocumented() {
        #expect(body(AgentResponse.done.frame()) == [3, 0])
        #expect(body(AgentResponse.key(key).frame()) == [3, 1] + Array(repeating: 0xAB, count: 32))
        #expect(body(AgentResponse.noKey.frame()) == [3, 2])
        #expect(body(AgentResponse.forgotten(2).frame()) == [3, 3, 2, 0, 0, 0])
        let status = AgentStatus(pid: 0x0102, startedByUnlock: true, vaults: [
            AgentStatus.Vault(vaultID: vaultID, keyCount: 2, timeoutSeconds: 900, idleSecondsLeft: 60, path: "/v", confirms: true,
                              signsUntil: 1_500_000_000),
        ])
        #expect(body(AgentResponse.status(status).frame()) == [3, 4, 2, 1, 0, 0, 1, 1, 0] + vaultID + [2, 0, 0x84, 3, 0, 0, 60, 0, 0, 0, 2, 0]
            + Array("/v".utf8) + [1] + [0x00, 0x2F, 0x68, 0x59, 0, 0, 0, 0])
        #expect(body(AgentResponse.failed("no").frame()) == [3, 5, 2, 0] + Array("no".utf8))
        #expect(body(AgentResponse.denied.frame()) == [3, 6])
        #expect(body(AgentResponse.confirming.frame()) == [3, 7])
        #expect(body(AgentResponse.unproven.frame()) == [3, 8])
    }

    @Test func test_responseDecode_roundTripsAndCutsLongMessages() throws {
        let status = AgentStatus(pid: 7, startedByUnlock: false, vaults: [
            AgentStatus.Vault(vaultID: vaultID, keyCount: 1, timeoutSeconds: 0, idleSecondsLeft: 0, path: "/a", confirms: true),
            AgentStatus.Vault(vaultID: Array(repeating: 0, count: 16), keyCount: 3, timeoutSeconds: 5, idleSecondsLeft: 4, path: ""),
        ])
        guard case .status(let decoded) = try decodeResponse(body(AgentResponse.status(status).frame())) else { Issue.record("not a status"); return }
        #expect(decoded == status)
        guard case .key(let decodedKey) = try decodeResponse(body(AgentResponse.key(key).frame())) else { Issue.record("not a key"); return }
        #expect(decodedKey.constantTimeEquals(key))
        guard case .failed(let text) = try decodeResponse(body(AgentResponse.failed(String(repeating: "é", count: 3000)).frame())) else {
            Issue.record("not a failure"); return
        }
        #expect(text.utf8.count == 4096 && text.allSatisfy { $0 == "é" })
    }

    @Test func test_fuzzSeeds_decodeAndReencodeExactly() throws {
        let folder = ProjectPaths.root.appendingPathComponent("Fuzz/agent-seeds")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.count >= 9)
        for name in names {
            let body = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
            let encoded = name.hasPrefix("response-") ? self.body(try decodeResponse(body).frame()) : self.body(try decodeRequest(body).frame())
            #expect(encoded == body, "seed \(name)")
        }
    }

    @Test func test_responseDecode_refusesTruncatedStatus() {
        #expect(throws: AgentProtocolError.truncated("the vault id of vault 0")) { try decodeResponse([3, 4, 0, 0, 0, 0, 0, 1, 0]) }
        #expect(throws: AgentProtocolError.truncated("the file key")) { try decodeResponse([3, 1, 0]) }
    }
}
