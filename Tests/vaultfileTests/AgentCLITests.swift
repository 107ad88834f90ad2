import Foundation
import TestSupport
import Testing

/// `vaultfile unlock`, `lock` and the agent through the real binary: verbs without a password while
/// unlocked, idle expiry, passwd while unlocked, two vaults, a killed agent,
/// exec's children and the confirm command. Every test has its own socket (CLIHarness) and stops
/// every agent it starts. git across a passwd: AgentExternalToolsCLITests.swift.
@Suite struct AgentCLITests {
    private let noSource = "no password source, and no terminal to ask on"

    // MARK: - unlock and lock

    @Test func test_unlock_letsEveryVerbRunWithoutAPasswordUntilLock() throws {
        let cli = try CLI.withVault(["db/password": "s3cret", "db/user": "admin", "other/a": "x"]); defer { cli.stopAgent(); cli.directory.remove() }
        let unlocked = try cli.run(["unlock"] + cli.unlock())
        // Nothing but the warning every verb gives about the tests' weak KDF settings.
        let lines = unlocked.stderr.split(separator: "\n").filter { !$0.contains("below OWASP's minimum") }
        #expect(unlocked.status == 0 && unlocked.stdout.isEmpty && lines.isEmpty, "unlock prints nothing: \(unlocked.stderr)")
        let vault = ["--vault", cli.path("t.vault")]
        // No password source anywhere, standard input closed.
        let get = try cli.shell("\"$VF\" get db/password --vault t.vault <&-")
        #expect(get.status == 0 && get.text == "s3cret", "\(get.stderr)")
        #expect(try cli.run(["list"] + vault).text == "db/password\ndb/user\nother/a\n")
        #expect(try cli.run(["search", "user"] + vault).text == "db/user\n")
        #expect(try cli.run(["verify"] + vault).status == 0)
        #expect(try cli.run(["set", "db/port"] + vault, stdin: Array("5432".utf8)).status == 0)
        #expect(try cli.run(["mv", "db/port", "db/dbport"] + vault).status == 0)
        #expect(try cli.run(["rm", "other/a"] + vault).status == 0)
        try cli.write("template", Array("pw={{ vf://db/password }}".utf8))
        #expect(try cli.run(["inject", "--in", cli.path("template")] + vault).text == "pw=s3cret")
        #expect(try cli.run(["export", "--format", "dotenv"] + vault).text.contains("DB_DBPORT=\"5432\""))
        let exec = try cli.run(["exec", "--prefix", "db/"] + vault + ["--", "sh", "-c", "printf %s \"$PASSWORD\""])
        #expect(exec.status == 0 && exec.text == "s3cret", "\(exec.stderr)")
        #expect(try cli.run(["get", "db/dbport"] + vault).text == "5432")

        let locked = try cli.run(["lock"] + vault)
        #expect(locked.status == 0 && locked.stderr.isEmpty, "lock needs no password: \(locked.stderr)")
        let after = try cli.shell("\"$VF\" get db/password --vault t.vault <&-")
        #expect(after.status == 2 && after.stderr.contains(noSource), "\(after.stderr)")
        #expect(CLI.waitFor(5) { !CLI.socketExists(cli.path("agent.sock")) }, "an agent unlock started exits when it holds no key")
    }

    @Test func test_unlock_verboseSaysWhatAndForHowLong() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let unlocked = try cli.run(["unlock", "--verbose", "--timeout", "2h"] + cli.unlock())
        #expect(unlocked.status == 0 && unlocked.stdout.isEmpty)
        #expect(unlocked.stderr.contains("unlocked \(cli.path("t.vault"))") && unlocked.stderr.contains("for 2h of idle time"), "\(unlocked.stderr)")
        let status = try cli.agentStatus()
        let vaults = try #require(status["vaults"] as? [[String: Any]])
        #expect(status["started_by"] as? String == "unlock")
        #expect(vaults.count == 1 && vaults[0]["timeout_seconds"] as? Int == 7_200 && vaults[0]["keys"] as? Int == 1)
        #expect(vaults[0]["path"] as? String == cli.path("t.vault"))
        let text = try cli.run(["agent", "status"]).text
        #expect(text.contains(cli.path("t.vault")) && text.contains("1 key") && !text.contains("pw"), "\(text)")
    }

    /// `agent status` says whether a confirm command guards each vault (never the command).
    @Test func test_agentStatus_showsWhetherAConfirmCommandIsSet() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let plain = try cli.agentStatus()
        #expect((plain["vaults"] as? [[String: Any]])?.first?["confirm_command"] as? Bool == false, "\(plain)")
        #expect(try cli.run(["agent", "status"]).text.contains(", no confirm command"))
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        #expect(CLI.waitFor(5) { !CLI.socketExists(cli.path("agent.sock")) })
        #expect(try cli.run(["unlock", "--confirm-command", "exit 0 # secret-word"] + cli.unlock()).status == 0)
        let guarded = try cli.agentStatus()
        #expect((guarded["vaults"] as? [[String: Any]])?.first?["confirm_command"] as? Bool == true, "\(guarded)")
        let text = try cli.run(["agent", "status"]).text
        #expect(text.contains(", a confirm command approves each hand-out") && !text.contains("secret-word"), "\(text)")
    }

    @Test func test_unlock_refusesAWrongPasswordAndNoAgent() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        try cli.write("wrong", Array("nope".utf8))
        let wrong = try cli.run(["unlock", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")])
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(!CLI.socketExists(cli.path("agent.sock")), "no agent starts for a wrong password")
        #expect(try cli.run(["unlock", "--no-agent"] + cli.unlock()).status == 64)
        #expect(try cli.run(["unlock"] + cli.unlock(), extra: ["VAULTFILE_NO_AGENT": "1"]).status == 64)
        #expect(try cli.run(["unlock", "--timeout", "soon"] + cli.unlock()).status == 64)
    }

    @Test func test_noAgent_skipsTheAgent() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let vault = ["get", "a", "--vault", cli.path("t.vault")]
        #expect(try cli.run(vault).text == "1")
        #expect(try cli.run(vault + ["--no-agent"]).stderr.contains(noSource))
        #expect(try cli.run(vault, extra: ["VAULTFILE_NO_AGENT": "1"]).stderr.contains(noSource))
    }

    // MARK: - Idle expiry

    // Sleeps that block its thread on purpose: an awaited sleep may resume late when the runner's
    // threads are busy, and this test's expectations are about when the agent forgets.
    @Test func test_unlock_timeoutForgetsTheKeyAfterIdleTimeSinceTheLastHandOut() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let start = Date()
        #expect(try cli.run(["unlock", "--timeout", "3s"] + cli.unlock()).status == 0)
        let get = ["get", "a", "--vault", cli.path("t.vault")]
        usleep(1_500_000)
        #expect(try cli.run(get).text == "1")
        usleep(1_500_000)
        // 3 s after unlock, 1.5 s after the last hand-out: still held.
        let second = try cli.run(get)
        #expect(second.text == "1" || Date().timeIntervalSince(start) > 4.4, "\(second.stderr)")
        usleep(3_500_000)
        let expired = try cli.run(get)
        #expect(expired.status == 2 && expired.stderr.contains(noSource), "\(expired.stderr)")
        #expect(CLI.waitFor(5) { !CLI.socketExists(cli.path("agent.sock")) }, "the agent exits once its last key expired")
    }

    // MARK: - passwd while unlocked

    @Test func test_passwd_whileUnlockedNeedsThePasswordAndHandsTheNewKeyBesideTheOld() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let oldCopy = try cli.read("t.vault")
        // passwd still asks for the password: the agent's key does not change who can open the vault.
        try cli.write("pw2", Array("new-password".utf8))
        let without = try cli.run(["passwd", "--vault", cli.path("t.vault"), "--new-password-file", cli.path("pw2")])
        #expect(without.status == 2 && without.stderr.contains(noSource), "\(without.stderr)")
        let changed = try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock())
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1", "the new key is held")
        let vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.first?["keys"] as? Int == 2)
        try cli.write("old.vault", oldCopy)
        #expect(try cli.run(["get", "a", "--vault", cli.path("old.vault")]).text == "1", "the old copy opens with the old key")
        #expect(try cli.run(["lock", "--vault", cli.path("old.vault")]).status == 0, "one id: both keys go")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
    }

    @Test func test_passwd_doesNotUnlockAVaultTheAgentDoesNotHold() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        _ = try CLI.withVault(["b": "2"], name: "other.vault", in: cli)
        #expect(try cli.run(["unlock"] + cli.unlock("other.vault")).status == 0)
        try cli.write("pw2", Array("new-password".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
        #expect((try cli.agentStatus()["vaults"] as? [[String: Any]])?.count == 1)
    }

    // MARK: - Two vaults

    @Test func test_unlock_holdsTwoVaultsAtOnceAndLocksOneOrAll() throws {
        let cli = try CLI.withVault(["a": "first"]); defer { cli.stopAgent(); cli.directory.remove() }
        try cli.write("pw-second", Array("second-pw".utf8))
        #expect(try cli.run(["init", "--vault", cli.path("second.vault"), "--password-file", cli.path("pw-second")] + CLI.fastKDF).status == 0)
        #expect(try cli.run(["set", "b", "--vault", cli.path("second.vault"), "--password-file", cli.path("pw-second")], stdin: Array("second".utf8)).status == 0)
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["unlock", "--timeout", "0", "--vault", cli.path("second.vault"), "--password-file", cli.path("pw-second")]).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "first")
        #expect(try cli.run(["get", "b", "--vault", cli.path("second.vault")]).text == "second")
        let vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.count == 2 && vaults.contains { $0["timeout_seconds"] is NSNull })
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
        #expect(try cli.run(["get", "b", "--vault", cli.path("second.vault")]).text == "second")
        #expect(try cli.run(["lock", "--all"]).status == 0)
        #expect(try cli.run(["get", "b", "--vault", cli.path("second.vault")]).status == 2)
        #expect(try cli.run(["lock", "--all"]).status == 0, "nothing to lock is not an error")
    }

    // MARK: - A killed agent

    @Test func test_agentKilled_clientsFallBackAndTheNextAgentStarts() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let pid = try #require(cli.agentPID())
        kill(pid, SIGKILL)
        // Until `agent status` answers that none runs: while the agent dies a connection may be reset.
        #expect(CLI.waitFor(5) { (try? cli.agentStatus())?["running"] as? Bool == false })
        #expect(CLI.socketExists(cli.path("agent.sock")), "the killed agent left its socket")
        let fallback = try cli.run(["get", "a"] + cli.unlock())
        #expect(fallback.status == 0 && fallback.text == "1" && !fallback.stderr.contains("agent"), "\(fallback.stderr)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0, "the stale socket does not block the next agent")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1")
        #expect(cli.agentPID() != pid)
    }

    // MARK: - exec's children

    @Test func test_exec_childrenGetNoAgentUnlessAllowNested() throws {
        let cli = try CLI.withVault(["db/password": "db-secret", "other/a": "x"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let inner = "\"$VF\" get db/password --vault t.vault"
        let nested = try cli.run(["exec", "--vault", cli.path("t.vault"), "--prefix", "other/", "--", "sh", "-c", inner])
        #expect(nested.status == 2 && !nested.text.contains("db-secret"), "the child reached an entry outside --prefix")
        #expect(nested.stderr.contains("inside 'vaultfile exec'") && nested.stderr.contains("--allow-nested"), "\(nested.stderr)")
        let allowed = try cli.run(["exec", "--allow-nested", "--vault", cli.path("t.vault"), "--prefix", "other/", "--", "sh", "-c", inner])
        #expect(allowed.status == 0 && allowed.text == "db-secret", "\(allowed.stderr)")
    }

    // MARK: - The confirm command

    @Test func test_confirmCommand_decidesEachHandOut() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let record = "printf '%s %s' \"$VAULTFILE_CONFIRM_PATH\" \"$VAULTFILE_CONFIRM_PID\" > \(cli.path("asked")); test -e \(cli.path("allow"))"
        #expect(try cli.run(["unlock", "--confirm-command", record] + cli.unlock()).status == 0)
        let refused = try cli.run(["get", "a", "--vault", cli.path("t.vault")])
        #expect(refused.status == 2 && refused.stderr.contains("confirm command refused"), "\(refused.stderr)")
        #expect(String(decoding: try cli.read("asked"), as: UTF8.self).hasPrefix(cli.path("t.vault") + " "))
        try cli.write("allow", [])
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1")
    }
}
