import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultFormat
import VaultModel

/// Writes through the agent to a signed vault (issue 40, docs/AGENT.md "Delegations"), with the
/// real binary and a real agent: `unlock` delegates signing, `set` writes a scheme-3 seal that
/// opens and verifies, the confirm command decides each signature, and writes stop with `lock`,
/// a refusal or an expired delegation, with nothing written. Each test stops the agent it starts.
@Suite struct AgentSigningCLITests {
    private let noSource = "no password source, and no terminal to ask on"

    /// A folder with a signed vault `t.vault` (password in `pw`), made by `init`.
    private func signedVault() throws -> CLI {
        let cli = try CLI()
        try cli.write("pw", Array("pw".utf8))
        let created = try cli.run(["init"] + cli.unlock() + CLI.fastKDF)
        precondition(created.status == 0 && created.stdout.isEmpty, created.stderr)
        precondition(created.stderr.contains("signed"), created.stderr)
        return cli
    }

    /// The vault opened in-process with its password: its entries and how its last seal was signed.
    private func opened(_ cli: CLI, password: String = "pw") throws -> UnlockedVault {
        let credential = UnlockCredential(.password(SecureBytes(copying: Array(password.utf8))), source: "the test")
        return try VaultStore(path: cli.path("t.vault")).read(with: Unlocker(credentials: [credential], limits: .defaults))
    }

    // MARK: - Success

    @Test func test_unlock_ofASignedVaultLetsTheAgentSignWritesThatOpenAndVerify() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let before = UInt64(Date().timeIntervalSince1970)
        #expect(try cli.run(["unlock", "--timeout", "10m"] + cli.unlock()).status == 0)
        let status = try #require((try cli.agentStatus()["vaults"] as? [[String: Any]])?.first)
        #expect(status["can_sign"] as? Bool == true, "\(status)")
        let until = try #require(status["signs_until"] as? String)
        #expect(until.hasPrefix(UTCTime.rfc3339(seconds: Int64(before + 12 * 3600)).prefix(15)), "expiry is now + 12 hours, the least: \(until)")
        #expect(try cli.run(["agent", "status"]).text.contains("signs writes until"))
        // No password source anywhere: the key and the signature come from the agent.
        let set = try cli.run(["set", "db/password", "--vault", cli.path("t.vault")], stdin: Array("s3cret".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault")]).text == "s3cret")
        // Opened with the password, every signature checked: a seal of the agent's delegated key.
        let read = try opened(cli)
        let evidence = try #require(read.sealEvidence)
        let value = try read.vault.value(of: "db/password")
        #expect(evidence.scheme == .delegated && evidence.signerPosition == 0 && value == Array("s3cret".utf8))
        let get = try cli.run(["get", "db/password", "--no-agent"] + cli.unlock())
        #expect(get.status == 0 && get.text == "s3cret", "\(get.stderr)")
    }

    @Test func test_write_throughTheAgentRunsTheConfirmCommandWithActionSign() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let log = cli.path("actions")
        #expect(try cli.run(["unlock", "--confirm-command", "echo \"$VAULTFILE_CONFIRM_ACTION\" >> '\(log)'"] + cli.unlock()).status == 0)
        #expect(try cli.run(["set", "a", "--vault", cli.path("t.vault")], stdin: Array("1".utf8)).status == 0)
        let actions = try String(contentsOfFile: log, encoding: .utf8)
        #expect(actions == "hand-out\nsign\n", "\(actions)")
        #expect(try opened(cli).vault.value(of: "a") == Array("1".utf8))
    }

    // MARK: - Refusals: nothing written

    @Test func test_write_refusedByTheConfirmCommandFailsAndWritesNothing() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let command = "test \"$VAULTFILE_CONFIRM_ACTION\" != sign"
        #expect(try cli.run(["unlock", "--confirm-command", command] + cli.unlock()).status == 0)
        let before = try cli.read("t.vault")
        let set = try cli.run(["set", "a", "--vault", cli.path("t.vault")], stdin: Array("1".utf8))
        #expect(set.status == 2 && set.stderr.contains("refused to let the agent sign this write; nothing was written"), "\(set.stderr)")
        #expect(!set.stderr.contains("signing the seal failed"), "the agent's own error, not the library's text: \(set.stderr)")
        #expect(try cli.read("t.vault") == before, "nothing was written")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.path(".")).filter { $0.hasPrefix(".t.vault") || $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "no temporary file is left: \(leftovers)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).status == 1, "reads still work: no such entry")
    }

    @Test func test_write_afterLockAsksForThePasswordAndWritesNothing() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        let before = try cli.read("t.vault")
        let set = try cli.shell("printf 1 | \"$VF\" set a --vault t.vault")
        #expect(set.status == 2 && set.stderr.contains(noSource), "\(set.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_write_throughAVaultInUseOutlivesItsIdleTimeout() throws {
        // The idle timeout slides with each use; the delegation's expiry is at least 12 hours, so
        // writes keep being signed while the vault is used (they stopped after the timeout once).
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock", "--timeout", "3s"] + cli.unlock()).status == 0)
        for round in 0..<3 {
            Thread.sleep(forTimeInterval: 2)
            let set = try cli.run(["set", "a\(round)", "--vault", cli.path("t.vault")], stdin: Array("1".utf8))
            #expect(set.status == 0, "write \(round), \(2 * (round + 1)) s after a 3 s unlock: \(set.stderr)")
        }
        #expect(try opened(cli).sealEvidence?.scheme == .delegated)
    }

    // MARK: - Rotations

    @Test func test_rotation_whileUnlockedHandsANewDelegationAndWritesStillSign() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        try cli.write("pw2", Array("new-password".utf8))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock())
        #expect(passwd.status == 0 && !passwd.stderr.contains("warning: the agent"), "\(passwd.stderr)")
        let status = try #require((try cli.agentStatus()["vaults"] as? [[String: Any]])?.first)
        #expect(status["keys"] as? Int == 2 && status["can_sign"] as? Bool == true, "\(status)")
        let set = try cli.run(["set", "after", "--vault", cli.path("t.vault")], stdin: Array("2".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let read = try opened(cli, password: "new-password")
        let value = try read.vault.value(of: "after")
        #expect(read.sealEvidence?.scheme == .delegated && value == Array("2".utf8))
    }

    // MARK: - Merges

    @Test func test_merge_withTheAgentsKeyIsSignedUnderItsDelegation() throws {
        let cli = try signedVault(); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        try FileManager.default.copyItem(atPath: cli.path("t.vault"), toPath: cli.path("copy.vault"))
        #expect(try cli.run(["set", "a", "--vault", cli.path("t.vault")], stdin: Array("1".utf8)).status == 0)
        // Both sides open with the agent's key: no password source, and the result is the agent's seal.
        let merged = try cli.run(["merge", cli.path("t.vault"), cli.path("copy.vault")])
        #expect(merged.status == 0, "\(merged.stderr)")
        let read = try opened(cli)
        let value = try read.vault.value(of: "a")
        #expect(read.sealEvidence?.scheme == .delegated && value == Array("1".utf8))
    }
}
