import Foundation
import TestSupport
import Testing
import VaultAgent

/// Releases that meet (docs/AGENT.md, "Versions"; issue 39 item 2): a running agent outlives an
/// upgrade of the binary. A client that meets an agent of another protocol version says so and
/// stops, never falling back silently to the password; `agent stop` stops an agent of any release;
/// this agent answers release 0.2's client with a text that client shows. Each test stops what it starts.
@Suite struct AgentReleaseCLITests {
    private let anotherRelease = "vaultfile: error: the running agent is from another release: run 'vaultfile agent stop', then unlock again\n"

    @Test(arguments: [UInt8(1), 2, 4])
    func test_agentClient_meetingAnAgentOfAnotherReleaseSaysSoAndNeverFallsBack(_ version: UInt8) throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let agent = try FakeAgent(path: cli.path("agent.sock"), version: version); defer { agent.stop() }
        let before = try cli.read("t.vault")
        try cli.write("pw2", Array("new-password".utf8))
        // A password source is at hand each time: none of them is used instead of the agent.
        let runs = [["get", "a"] + cli.unlock(), ["unlock"] + cli.unlock(), ["set", "b"] + cli.unlock(),
                    ["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock(), ["rekey"] + cli.unlock(),
                    ["lock", "--vault", cli.path("t.vault")], ["lock", "--all"], ["agent", "status"]]
        for arguments in runs {
            let result = try cli.run(arguments, stdin: Array("2".utf8))
            #expect(result.status == 2 && result.stdout.isEmpty, "\(arguments): \(result.status) \(result.text)")
            #expect(result.stderr.hasSuffix(anotherRelease) && !result.stderr.contains("warning: not using the agent"),
                    "\(arguments): \(result.stderr)")
        }
        #expect(try cli.read("t.vault") == before, "nothing was written")
        #expect(try cli.run(["get", "a", "--no-agent"] + cli.unlock()).text == "1", "--no-agent skips it")
        // `agent stop` stops it: in this build's version first, then (release 0.2) in the agent's own.
        let stopped = try cli.run(["agent", "stop"])
        #expect(stopped.status == 0 && stopped.stderr.isEmpty, "\(stopped.stderr)")
        #expect(CLI.waitFor(2) { !agent.isRunning })
        let stops = agent.requests.filter { $0.count == 2 && $0[1] == 6 }
        // The stand-in for an older agent takes only its own version's stop (as release 0.2's does).
        #expect(stops == (version < AgentProtocol.version ? [[AgentProtocol.version, 6], [version, 6]] : [[AgentProtocol.version, 6]]), "\(stops)")
        // Then unlock starts an agent of this release.
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1")
    }

    @Test func test_agent_answersARelease02ClientWithAFailureItShowsAndStopsForIt() throws {
        guard let python = CLI.python else { print("skipped: needs python3 for a raw client"); return }
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let pid = try #require(cli.agentPID())
        let client = try cli.writeRawClient()
        // Release 0.2 sends version 1: the answer is version 1's `failed`, whose text that release prints.
        let status = try cli.run([client, cli.path("agent.sock"), "old-status"], executable: python)
        #expect(status.text == "136 this agent is from another release (it speaks agent protocol 3, this vaultfile 1): "
                + "run 'vaultfile agent stop', then unlock again\n", "\(status.text) \(status.stderr)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1", "the agent still serves")
        // Release 0.2's `agent stop` stops it: `done` in version 1, and the agent wipes its keys and exits.
        let stop = try cli.run([client, cli.path("agent.sock"), "old-stop"], executable: python)
        #expect(stop.text == "6 \n", "\(stop.text)")
        #expect(CLI.waitFor(5) { kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true })
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
    }
}
