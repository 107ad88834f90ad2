import Foundation
import TestSupport
import Testing
import VaultAgent

/// The agent's deadline for a request (docs/AGENT.md, issue 39 item 5), with real sockets: one
/// deadline for the whole request, whatever the pace of its bytes, and slow clients, however many,
/// never turn away a client whose request arrives at once. Each test stops the agent it starts.
@Suite struct AgentDeadlineCLITests {
    /// A whole `status` request of this build's protocol.
    private var statusFrame: [UInt8] { AgentRequest.status.frame().withUnsafeBytes { Array($0) } }

    @Test func test_agentRequest_dribbledOneByteEvery1500msIsCutOffAt2s() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let connection = try RawAgentConnection(path: cli.path("agent.sock"))
        let start = RawAgentConnection.now()
        var cutAfter: Double?
        // Every byte but the last, one each 1.5 s: each read would be within a per-read timeout.
        for byte in statusFrame.dropLast() {
            connection.send([byte])
            if connection.wait(1.5) != .open([]) {
                cutAfter = RawAgentConnection.now() - start
                break
            }
        }
        let elapsed = try #require(cutAfter, "the agent still waited for the request after \(RawAgentConnection.now() - start) s")
        #expect(elapsed >= 1.9 && elapsed < 2.8, "cut off after \(elapsed) s, not at the 2-second deadline")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1", "the agent still serves")
    }

    @Test func test_agentRequest_slowClientsNeverTurnAwayAPromptOne() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        // 32 clients (as many as the agent serves at once) that each sent one byte of a request and wait.
        let slow = try (0..<32).map { _ in try RawAgentConnection(path: cli.path("agent.sock")) }
        for connection in slow { connection.send([statusFrame[0]]) }
        usleep(300_000)
        let started = RawAgentConnection.now()
        let get = try cli.run(["get", "a", "--vault", cli.path("t.vault")])
        #expect(get.status == 0 && get.text == "1", "\(get.status) \(get.stderr)")
        let prompt = try RawAgentConnection(path: cli.path("agent.sock"))
        prompt.send(statusFrame)
        guard case .answered(let answer) = prompt.wait(1.5) else { Issue.record("a prompt status request got no answer"); return }
        #expect(answer.count > 6 && answer[5] == 4, "a status answer: \(answer)")
        #expect(RawAgentConnection.now() - started < 1.6, "the slow clients held up the prompt ones")
        // The slow clients themselves are cut off at the deadline.
        #expect(slow.allSatisfy { $0.wait(2.5) == .closed })
    }
}
