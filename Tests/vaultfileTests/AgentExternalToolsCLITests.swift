import Foundation
import TestSupport
import Testing

/// The agent's tests that drive outside tools (`make test` times them apart): real git across key
/// rotations made while unlocked, and processes of another uid through `setpriv`.
extension ExternalTools {
    /// `git log -p` across rotations of the file key made while the agent holds the vault: every
    /// version opens with a key the agent keeps, with no secret source at all.
    @Suite struct AgentGitCLITests {
        /// A git work tree in the test's folder, with vaultfile's diff and merge drivers set up.
        private static func gitEnvironment(_ cli: inout CLI) {
            cli.environment = [
                "PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                "GIT_CONFIG_NOSYSTEM": "1", "VAULTFILE_AGENT_SOCK": cli.path("run/agent.sock"),
            ]
        }

        // MARK: - git across a passwd

        @Test func test_gitLogP_acrossAPasswdMadeWhileUnlockedShowsBothSidesWithoutAPassword() throws {
            var cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
            Self.gitEnvironment(&cli)
            _ = try CLI.withVault(["a": "alpha"], in: cli)
            #expect(try cli.shell("git init -q -b main && \"$VF\" git setup 2>/dev/null && git add -A && git commit -qm one").status == 0)
            #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "b", "--vault", cli.path("t.vault")], stdin: Array("bravo".utf8)).status == 0)
            #expect(try cli.shell("git commit -qam two").status == 0)
            try cli.write("pw2", Array("new-password".utf8))
            #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "c", "--vault", cli.path("t.vault")], stdin: Array("charlie".utf8)).status == 0)
            #expect(try cli.shell("git commit -qam three").status == 0)
            // No password source: every version opens with a key the agent holds.
            let log = try cli.shell("git log -p --no-color </dev/null")
            #expect(log.status == 0, "\(log.stderr)")
            #expect(!log.stderr.contains("error"), "\(log.stderr)")
            #expect(log.text.contains("+c  (modified") && log.text.contains("+b  (modified") && log.text.contains("+a  (modified"), "\(log.text)")
            #expect(!log.text.contains("alpha") && !log.text.contains("charlie"), "values stay hidden")
        }

        // MARK: - git across slot rm and rekey

        @Test func test_gitLogP_acrossASlotRmAndARekeyMadeWhileUnlockedShowsEveryVersionWithoutASecret() throws {
            var cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
            Self.gitEnvironment(&cli)
            _ = try CLI.withVault(["a": "alpha"], in: cli)
            #expect(try cli.run(["keygen", "--keyfile", cli.path("key")]).status == 0)
            #expect(try cli.run(["slot", "add", "keyfile", cli.path("key"), "--label", "laptop"] + cli.unlock()).status == 0)
            #expect(try cli.shell("git init -q -b main && \"$VF\" git setup 2>/dev/null && git add t.vault .gitattributes && git commit -qm one").status == 0)
            // Unlocked with the keyfile: the agent holds the key whatever secret opened it.
            #expect(try cli.run(["unlock", "--vault", cli.path("t.vault"), "--keyfile", cli.path("key")]).status == 0)
            #expect(try cli.run(["set", "b", "--vault", cli.path("t.vault")], stdin: Array("bravo".utf8)).status == 0)
            #expect(try cli.shell("git commit -qam two").status == 0)
            #expect(try cli.run(["slot", "rm", "laptop"] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "c", "--vault", cli.path("t.vault")], stdin: Array("charlie".utf8)).status == 0)
            #expect(try cli.shell("git commit -qam three").status == 0)
            #expect(try cli.run(["rekey"] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "d", "--vault", cli.path("t.vault")], stdin: Array("delta".utf8)).status == 0)
            #expect(try cli.shell("git commit -qam four").status == 0)
            let log = try cli.shell("git log -p --no-color </dev/null")
            #expect(log.status == 0 && !log.stderr.contains("error"), "\(log.stderr)")
            for name in ["a", "b", "c", "d"] { #expect(log.text.contains("+\(name)  (modified"), "\(name): \(log.text)") }
            #expect(log.text.contains("-# keyslot 1: keyfile, laptop"), "the removed slot shows in the diff: \(log.text)")
            #expect(!log.text.contains("alpha") && !log.text.contains("delta"), "values stay hidden")
        }
    }

    /// Another uid, on either side of the socket (as nobody, with `setpriv`, when the test runs as root).
    @Suite struct AgentOtherUserCLITests {
        /// `setpriv` to run a command as nobody, when this test runs as root; nil (tests skipped) otherwise.
        private static let asNobody: [String]? = {
            guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return nil }
            return ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        }()

        /// A fresh folder under /tmp that nobody can enter (the test's own folder is root's, 0700).
        private func sharedFolder(owner: uid_t, mode: mode_t) throws -> String {
            var template = Array("/tmp/vaultfile-agent-test-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            let path = String(cString: made)
            chown(path, owner, owner)
            chmod(path, mode)
            return path
        }

        // MARK: - Another uid

        @Test func test_client_refusesAnAgentOfAnotherUid() throws {
            guard let asNobody = Self.asNobody else {
                print("skipped: needs root and setpriv to run an agent as nobody"); return
            }
            let cli = try CLI.withVault(["a": "1"]); defer { cli.directory.remove() }
            let folder = try sharedFolder(owner: 65534, mode: 0o700); defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = ["VAULTFILE_AGENT_SOCK": folder + "/agent.sock"]
            let agent = try cli.start(Array(asNobody.dropFirst()) + [CLI.binary, "agent", "run"], extra: socket, executable: asNobody[0])
            defer { agent.kill() }
            #expect(CLI.waitFor(10) { CLI.socketExists(folder + "/agent.sock") })
            // The agent runs non-dumpable: its /proc files belong to root although it runs as nobody.
            var info = stat()
            #expect(stat("/proc/\(agent.pid)/environ", &info) == 0 && info.st_uid == 0)

            let unlock = try cli.run(["unlock"] + cli.unlock(), extra: socket)
            #expect(unlock.status == 2, "\(unlock.stderr)")
            #expect(unlock.stderr.contains("runs as uid 65534, not as you (uid 0)"), "\(unlock.stderr)")
            let get = try cli.run(["get", "a"] + cli.unlock(), extra: socket)
            #expect(get.status == 0 && get.text == "1", "\(get.stderr)")
            #expect(get.stderr.contains("not using the agent") && get.stderr.contains("uid 65534"), "\(get.stderr)")
        }

        @Test func test_agent_closesConnectionsOfAnotherUidUnanswered() throws {
            guard let asNobody = Self.asNobody, let python = CLI.python else {
                print("skipped: needs root, setpriv and python3 to connect as nobody"); return
            }
            let cli = try CLI(); defer { cli.directory.remove() }
            let folder = try sharedFolder(owner: 0, mode: 0o711); defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = ["VAULTFILE_AGENT_SOCK": folder + "/agent.sock"]
            let agent = try cli.start(["agent", "run"], extra: socket)
            defer { agent.kill() }
            #expect(CLI.waitFor(10) { CLI.socketExists(folder + "/agent.sock") })
            // As if someone loosened the socket's mode: the kernel lets nobody connect, the agent does not answer.
            chmod(folder + "/agent.sock", 0o666)
            // The client where nobody can read it (the test's folder is root's, 0700).
            let client = folder + "/raw-client.py"
            try FileManager.default.copyItem(atPath: try cli.writeRawClient(), toPath: client)
            chmod(client, 0o644)
            let foreign = try cli.run(Array(asNobody.dropFirst()) + [python, client, folder + "/agent.sock", "status"], executable: asNobody[0])
            #expect(foreign.text.hasPrefix("0 "), "another uid got an answer: \(foreign.text) \(foreign.stderr)")
            let own = try cli.run([client, folder + "/agent.sock", "status"], executable: python)
            #expect(own.text.hasPrefix("13 "), "the agent's own uid is served: \(own.text) \(own.stderr)")
        }
    }
}
