import SecureMemory
import Testing
import VaultAgent

/// The optional use after a `key` request's header (issue 43: the age plugin's `age-unwrap`).
@Suite struct AgentKeyUseTests {
    /// The body of `request`'s frame.
    static func body(_ request: AgentRequest) -> [UInt8] { request.frame().withUnsafeBytes { Array($0.dropFirst(4)) } }

    /// `bytes` decoded as a request body.
    static func decode(_ bytes: [UInt8]) throws -> AgentRequest { try bytes.withUnsafeBytes { try AgentRequest.decode(body: $0) } }

    @Test func test_keyRequest_carriesItsUseAfterTheHeaderAndRoundTrips() throws {
        let request = AgentRequest.key(path: "p", header: [9, 8, 7], use: AgentKeyUse(action: .ageUnwrap, entry: "age/key"))
        let bytes = Self.body(request)
        #expect(bytes == [3, 2, 1, 0, 0x70, 3, 0, 9, 8, 7, 1, 7, 0] + Array("age/key".utf8))
        guard case .key(let path, let header, let use) = try Self.decode(bytes) else { Issue.record("not a key request"); return }
        #expect(path == "p" && header == [9, 8, 7] && use == AgentKeyUse(action: .ageUnwrap, entry: "age/key") && use?.action.name == "age-unwrap")
        // Without a use: the request of every verb, as before.
        guard case .key(_, _, .none) = try Self.decode([3, 2, 1, 0, 0x70, 3, 0, 9, 8, 7]) else { Issue.record("a use appeared"); return }
    }

    @Test func test_keyRequest_refusesAnUnknownUseAnEmptyEntryAndTrailingBytes() {
        let header: [UInt8] = [3, 2, 1, 0, 0x70, 3, 0, 9, 8, 7]
        for bad in [header + [9, 1, 0, 0x61], header + [0, 1, 0, 0x61], header + [1, 0, 0], header + [1, 1, 0, 0x61, 0], header + [1], header + [1, 5, 0, 0x61]] {
            #expect(throws: AgentProtocolError.self, "\(bad)") { try Self.decode(bad) }
        }
    }
}
