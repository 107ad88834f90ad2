import Foundation
import TestSupport
import Testing

/// The verbs that change who can open a vault (`passwd`, `slot add`, `slot rm`, `rekey`) while the
/// agent holds its key: they still need a slot's secret, and after a rotation the agent holds the
/// new key beside the old one (docs/AGENT.md, issue 27). passwd's own tests are in AgentCLITests.
@Suite struct AgentKeyslotCLITests {
    private let noSource = "no password source, and no terminal to ask on"

    /// The number of keys the agent holds for the one vault it holds.
    private func heldKeys(_ cli: CLI) throws -> Int? {
        let vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        return vaults.count == 1 ? vaults[0]["keys"] as? Int : nil
    }

    // MARK: - A secret is still needed

    @Test func test_slotVerbsAndRekey_whileUnlockedStillNeedASecret() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["keygen", "--keyfile", cli.path("key")]).status == 0)
        #expect(try cli.run(["slot", "add", "keyfile", cli.path("key"), "--label", "laptop"] + cli.unlock()).status == 0)
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let before = try cli.read("t.vault")
        let vault = ["--vault", cli.path("t.vault")]
        // The agent opens the vault for reading and writing entries, but not for changing its slots.
        #expect(try cli.run(["get", "a"] + vault).text == "1")
        try cli.write("pw2", Array("second-password".utf8))
        for arguments in [["slot", "add", "password", "--new-password-file", cli.path("pw2")], ["slot", "add", "recovery"],
                          ["slot", "rm", "laptop"], ["slot", "label", "laptop", "desk"], ["rekey"],
                          ["passwd", "--new-password-file", cli.path("pw2")]] {
            let result = try cli.run(arguments + vault)
            #expect(result.status == 2 && result.stderr.contains(noSource), "\(arguments): \(result.status) \(result.stderr)")
            // The hint names the key sources and why the agent's key is not enough here.
            #expect(result.stderr.contains("--identity FILE, --keyfile FILE or --recovery-file FILE")
                    && result.stderr.contains("even while the agent holds the vault's key"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("'passwd', 'slot add', 'slot rm', 'slot label' and 'rekey'"), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): nothing printed (a recovery code least of all)")
        }
        #expect(try cli.read("t.vault") == before, "nothing was written")
        #expect(try heldKeys(cli) == 1)
        // With a slot's secret they run, the agent running or not: here the keyfile.
        let added = try cli.run(["slot", "add", "password", "--new-password-file", cli.path("pw2"), "--keyfile", cli.path("key")] + vault)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try heldKeys(cli) == 1, "slot add keeps the file key: nothing new to hand over")
        #expect(try cli.run(["get", "a"] + vault).text == "1")
    }

    // MARK: - The new key beside the old

    @Test func test_slotRmAndRekey_whileUnlockedHandTheNewKeyBesideTheOld() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["keygen", "--keyfile", cli.path("key")]).status == 0)
        #expect(try cli.run(["slot", "add", "keyfile", cli.path("key"), "--label", "laptop"] + cli.unlock()).status == 0)
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let vault = ["--vault", cli.path("t.vault")]
        try cli.write("original.vault", try cli.read("t.vault"))

        let rekey = try cli.run(["rekey"] + cli.unlock())
        #expect(rekey.status == 0, "\(rekey.stderr)")
        #expect(!rekey.stderr.contains("warning"), "\(rekey.stderr)")
        #expect(try heldKeys(cli) == 2)
        #expect(try cli.run(["set", "b"] + vault, stdin: Array("2".utf8)).status == 0, "the agent writes under the new key")
        try cli.write("rekeyed.vault", try cli.read("t.vault"))

        let removed = try cli.run(["slot", "rm", "laptop"] + cli.unlock())
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try heldKeys(cli) == 3)
        #expect(try cli.run(["get", "b"] + vault).text == "2")
        // Every earlier copy still opens through the agent, with no secret source.
        #expect(try cli.run(["get", "a", "--vault", cli.path("original.vault")]).text == "1")
        #expect(try cli.run(["get", "b", "--vault", cli.path("rekeyed.vault")]).text == "2")
        // The removed keyfile opens only the copies from before the removal.
        #expect(try cli.run(["get", "b", "--no-agent", "--keyfile", cli.path("key")] + vault).status == 3)
        #expect(try cli.run(["get", "b", "--no-agent", "--keyfile", cli.path("key"), "--vault", cli.path("rekeyed.vault")]).text == "2")
        // lock forgets every key of the id.
        #expect(try cli.run(["lock"] + vault).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("original.vault")]).status == 2)
    }

    @Test func test_mergeCopies_acrossAPasswdMadeWhileUnlockedOpensBothThroughTheAgent() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        try cli.write("stick.vault", try cli.read("t.vault"))
        // Two copies changed apart (the setup's writes skip the rollback check, which would stop the second).
        let off = ["VAULTFILE_ROLLBACK_CHECK": "off"]
        #expect(try cli.run(["set", "x", "--vault", cli.path("stick.vault")], stdin: Array("on-the-stick".utf8), extra: off).status == 0)
        try cli.write("pw2", Array("new-password".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock(), extra: off).status == 0)
        #expect(try cli.run(["set", "y", "--vault", cli.path("t.vault")], stdin: Array("at-home".utf8), extra: off).status == 0)
        // No secret source: the agent holds the old key (the stick) and the new one (home).
        let merged = try cli.run(["merge", cli.path("t.vault"), cli.path("stick.vault")])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try cli.run(["get", "x", "--vault", cli.path("t.vault")]).text == "on-the-stick")
        #expect(try cli.run(["get", "y", "--vault", cli.path("t.vault")]).text == "at-home")
        #expect(try cli.run(["get", "x", "--no-agent", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]).text == "on-the-stick",
                "sealed under the new password's key")
    }

    @Test func test_rekey_doesNotUnlockAVaultTheAgentDoesNotHold() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        _ = try CLI.withVault(["b": "2"], name: "other.vault", in: cli)
        #expect(try cli.run(["unlock"] + cli.unlock("other.vault")).status == 0)
        #expect(try cli.run(["rekey"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 2)
        #expect((try cli.agentStatus()["vaults"] as? [[String: Any]])?.count == 1)
    }
}
