import Foundation
import TestSupport
import Testing

/// The claims of docs/SECURITY.md about the agent, through the real binary: another uid refused on
/// both sides, the socket folder checked, hostile and silent clients, signals that wipe, the
/// process hardened. Each test stops the agents it starts, by pid. The tests that run a process as
/// another uid (setpriv) are in AgentExternalToolsCLITests.swift.
@Suite struct AgentSecurityCLITests {
    // MARK: - The socket folder

    @Test func test_agentFolder_withLooseModeAnotherOwnerOrASymlinkIsRefused() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        // The default place: $XDG_RUNTIME_DIR/vaultfile/ (the test's folder is its XDG_RUNTIME_DIR).
        let defaults = ["VAULTFILE_AGENT_SOCK": ""]
        let folder = cli.path("vaultfile")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o755)
        let loose = try cli.run(["unlock"] + cli.unlock(), extra: defaults)
        #expect(loose.status == 2 && loose.stderr.contains("refusing the agent's folder \(folder)") && loose.stderr.contains("mode 0755"),
                "\(loose.stderr)")
        #expect(try cli.run(["agent", "run"], extra: defaults).status == 2)
        if getuid() == 0 {
            chmod(folder, 0o700)
            chown(folder, 65534, 65534)
            let foreign = try cli.run(["unlock"] + cli.unlock(), extra: defaults)
            #expect(foreign.status == 2 && foreign.stderr.contains("belongs to uid 65534, not to you"), "\(foreign.stderr)")
        }
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: cli.path("elsewhere"), withIntermediateDirectories: false)
        symlink(cli.path("elsewhere"), folder)
        let link = try cli.run(["unlock"] + cli.unlock(), extra: defaults)
        #expect(link.status == 2 && link.stderr.contains("is a symbolic link"), "\(link.stderr)")
        // A folder it makes itself is 0700, the socket 0600.
        unlink(folder)
        #expect(try cli.run(["unlock"] + cli.unlock(), extra: defaults).status == 0)
        defer { cli.stopAgent(extra: defaults) }
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        let socketMode = try FileManager.default.attributesOfItem(atPath: folder + "/agent.sock")[.posixPermissions] as? Int
        #expect(folderMode == 0o700 && socketMode == 0o600)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")], extra: defaults).text == "1")
    }

    // MARK: - Hostile and silent clients

    @Test func test_agent_answersGarbageTruncatedAndOversizedRequestsAndKeepsServing() throws {
        guard let python = CLI.python else { print("skipped: needs python3 for a raw client"); return }
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let client = try cli.writeRawClient()
        let socket = cli.path("agent.sock")
        let garbage = try cli.run([client, socket, "garbage"], executable: python)
        #expect(garbage.text.contains("unknown message type 9"), "\(garbage.text) \(garbage.stderr)")
        let oversized = try cli.run([client, socket, "oversized"], executable: python)
        #expect(oversized.text.contains("over the limit"), "\(oversized.text)")
        let version = try cli.run([client, socket, "version"], executable: python)
        #expect(version.text.contains("protocol version 7 is not supported"), "\(version.text)")
        let truncated = try cli.run([client, socket, "truncated"], executable: python)
        #expect(truncated.text.hasPrefix("0 "), "a truncated request gets no answer: \(truncated.text)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1", "the agent still serves")
    }

    @Test func test_agent_silentClientsBlockNobody() async throws {
        guard let python = CLI.python else { print("skipped: needs python3 for a raw client"); return }
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let client = try cli.writeRawClient()
        // Silent for 3 s, longer than the agent's 2-second deadline for a request.
        let silent = try (0..<3).map { _ in try cli.start([client, cli.path("agent.sock"), "silent", "3"], executable: python) }
        defer { for running in silent { running.kill() } }
        try await Task.sleep(for: .milliseconds(300))
        let started = Date()
        let get = try cli.run(["get", "a", "--vault", cli.path("t.vault")])
        #expect(get.text == "1", "\(get.stderr)")
        #expect(Date().timeIntervalSince(started) < 1.5, "a silent client held up another")
        // The silent ones are cut off after the agent's 2-second deadline.
        let cut = try await silent[0].ended()
        #expect(cut.text.hasPrefix("0 "), "\(cut.text)")
    }

    // MARK: - agent run, signals and hardening

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func test_agentRun_staysWithoutKeysAndWipesOnSignal(_ signal: Int32) throws {
        let cli = try CLI.withVault(["secret/entry-name": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let agent = try cli.start(["agent", "run"])
        defer { agent.kill() }
        #expect(CLI.waitFor(10) { CLI.socketExists(cli.path("agent.sock")) })
        #expect(try cli.run(["agent", "run"]).status == 2, "a second agent refuses to start on the same socket")
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "secret/entry-name", "--vault", cli.path("t.vault")]).text == "1")
        // It holds its socket, its lock file, pipes and /dev/null: never a vault file.
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.pid)/fd")) ?? [])
            .compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent.pid)/fd/\($0)") }
        #expect(!open.isEmpty && !open.contains { $0.contains("vault") && !$0.hasSuffix("agent.sock.lock") }, "\(open)")
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        usleep(200_000)
        #expect(cli.agentPID() == agent.pid, "an agent from 'agent run' stays when it holds no key")
        #expect(try cli.agentStatus()["started_by"] as? String == "agent run")
        let limits = (try? String(contentsOfFile: "/proc/\(agent.pid)/limits", encoding: .utf8)) ?? ""
        #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max core file size") && $0.split(separator: " ")[4] == "0" },
                "core dumps are off: \(limits)")
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let locked = (try? String(contentsOfFile: "/proc/\(agent.pid)/status", encoding: .utf8)) ?? ""
        // The sanitizers' mlock does nothing (make check-sanitizers sets these variables).
        let sanitized = ProcessInfo.processInfo.environment["VAULTFILE_SANITIZER"] != nil || ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
        #expect(sanitized || (locked.contains("VmLck:") && !locked.contains("VmLck:\t       0 kB")), "the key is in locked memory")
        kill(agent.pid, signal)
        let ended = agent.finish()
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stderr.contains("every key wiped"), "\(ended.stderr)")
        #expect(!ended.stderr.contains("entry-name") && !ended.stderr.contains("t.vault"), "the agent logs no name or vault: \(ended.stderr)")
        #expect(!CLI.socketExists(cli.path("agent.sock")))
        #expect(try cli.run(["get", "secret/entry-name", "--vault", cli.path("t.vault")]).status == 2)
    }

    @Test func test_agentStop_endsItAndStatusSaysSo() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["agent", "stop"]).status == 0, "no agent: nothing to do")
        #expect(try cli.run(["agent", "status"]).text == "no agent is running at \(cli.path("agent.sock"))\n")
        #expect(try cli.agentStatus()["running"] as? Bool == false)
        #expect(try cli.run(["unlock", "--timeout", "0"] + cli.unlock()).status == 0)
        let pid = try #require(cli.agentPID())
        #expect(try cli.run(["agent", "stop"]).status == 0)
        #expect(CLI.waitFor(5) { kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true })
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
    }
}
