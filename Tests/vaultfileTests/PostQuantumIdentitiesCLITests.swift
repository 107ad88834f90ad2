import Foundation
import TestSupport
import Testing

/// Post-quantum identities where classical ones already work (issue 41): an `age -p` file over an
/// `AGE-SECRET-KEY-PQ-1…` identity (made now by the real age, its passphrase typed by `script`) as
/// `--identity` and as the default identity, and a post-quantum identity handed to the agent by
/// `vaultfile unlock`, then used with no identity given. Each test stops the agent it starts.
@Suite struct PostQuantumIdentitiesCLITests {
    static let hasAgeAndScript = ShareCLITests.hasAge && CLI.hasScript
    static let passphrase = "pq pass phrase"

    /// A post-quantum key `pq.txt` and a vault `q.vault` of its recipient alone, holding `a` = `v`.
    static func pqVault(_ cli: CLI) throws {
        let recipient = try PostQuantumCLITests.pqKey(cli, "pq.txt")
        #expect(try cli.run(["init", "--vault", cli.path("q.vault"), "--recipient", recipient]).status == 0)
        let set = try cli.run(["set", "a", "--vault", cli.path("q.vault"), "--no-agent", "--identity", cli.path("pq.txt")], stdin: Array("v".utf8))
        #expect(set.status == 0, "\(set.stderr)")
    }

    /// `age -p [-a] -o OUT pq.txt`, the passphrase typed twice on a terminal (util-linux script).
    static func agePassphraseFile(_ cli: CLI, _ out: String, armor: Bool = false) throws {
        let typed = "(sleep 1; printf '\(passphrase)\\n'; sleep 1; printf '\(passphrase)\\n'; sleep 3)"
        let command = "\(typed) | script -qec \"age -p \(armor ? "-a " : "")-o \(out) pq.txt\" /dev/null >/dev/null"
        #expect(try ShareCLITests.tool(cli, "/bin/sh", ["-c", command]).ending == .exit(0))
        let made = try cli.read(out)
        #expect(made.starts(with: Array((armor ? "-----BEGIN AGE ENCRYPTED FILE-----" : "age-encryption.org/v1\n-> scrypt ").utf8)))
    }

    // MARK: - age -p over a post-quantum identity

    @Test(.enabled(if: hasAgeAndScript, "age or script (util-linux) is not installed: skipped"))
    func test_identity_anAgeDashPFileOfAPostQuantumIdentityOpensItsSlot() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.pqVault(cli)
        try Self.agePassphraseFile(cli, "pq.age")
        try cli.write("pass", Array(Self.passphrase.utf8))
        let get = ["get", "a", "--vault", cli.path("q.vault"), "--no-agent", "--identity", cli.path("pq.age")]
        let opened = try cli.run(get + ["--identity-passphrase-file", cli.path("pass")])
        #expect(opened.status == 0 && opened.stdout == Array("v".utf8), "\(opened.stderr)")
        #expect(!opened.stderr.contains(Self.passphrase))
        try cli.write("wrong", Array("not it".utf8))
        let wrong = try cli.run(get + ["--identity-passphrase-file", cli.path("wrong")])
        #expect(wrong.status == 3 && wrong.stderr.contains("does not decrypt the protected key"), "\(wrong.stderr)")
    }

    @Test(.enabled(if: hasAgeAndScript, "age or script (util-linux) is not installed: skipped"))
    func test_defaultIdentity_anArmoredAgeDashPFileOfAPostQuantumIdentityOpensItsSlot() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.pqVault(cli)
        try Self.agePassphraseFile(cli, "pq.age", armor: true)
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", try cli.read("pq.age"))
        try cli.write("pass", Array(Self.passphrase.utf8))
        let opened = try cli.run(["get", "a", "--vault", cli.path("q.vault"), "--no-agent"],
                                 extra: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": cli.path("pass")])
        #expect(opened.status == 0 && opened.stdout == Array("v".utf8), "\(opened.stderr)")
        // Written through the protected default identity too (an unsigned vault: every member writes).
        let set = try cli.run(["set", "b", "--vault", cli.path("q.vault"), "--no-agent"], stdin: Array("w".utf8),
                              extra: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": cli.path("pass")])
        #expect(set.status == 0, "\(set.stderr)")
    }

    // MARK: - The agent

    @Test func test_unlock_withAPostQuantumIdentityLetsGetAndSetGoThroughTheAgent() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        try Self.pqVault(cli)
        let unlocked = try cli.run(["unlock", "--timeout", "5m", "--vault", cli.path("q.vault"), "--identity", cli.path("pq.txt")])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        // No identity anywhere (none given, no default identity file): the agent's key opens it.
        let got = try cli.run(["get", "a", "--vault", cli.path("q.vault")])
        #expect(got.status == 0 && got.stdout == Array("v".utf8), "\(got.stderr)")
        let set = try cli.run(["set", "b", "--vault", cli.path("q.vault")], stdin: Array("w".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try cli.run(["lock", "--vault", cli.path("q.vault")]).status == 0)
        let after = try cli.run(["get", "b", "--vault", cli.path("q.vault"), "--identity", cli.path("pq.txt")])
        #expect(after.status == 0 && after.stdout == Array("w".utf8), "\(after.stderr)")
    }

    @Test func test_unlock_ofASignedVaultWithAPostQuantumIdentityReadsAndRefusesWritesSayingWhy() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        let recipient = try PostQuantumMembersCLITests.keys(cli)
        #expect(try cli.run(["init", "--recipient", recipient, "--with-keyfile", cli.path("kf")] + PostQuantumMembersCLITests.vault(cli)).status == 0)
        #expect(try cli.run(["set", "a", "--keyfile", cli.path("kf")] + PostQuantumMembersCLITests.vault(cli), stdin: Array("v".utf8)).status == 0)
        let unlocked = try cli.run(["unlock", "--vault", cli.path("s.vault"), "--identity", cli.path("pq.txt")])
        #expect(unlocked.status == 0 && unlocked.stderr.contains("cannot sign"), "\(unlocked.stderr)")
        let got = try cli.run(["get", "a", "--vault", cli.path("s.vault")])
        #expect(got.status == 0 && got.stdout == Array("v".utf8), "\(got.stderr)")
        let before = try cli.read("s.vault")
        let set = try cli.run(["set", "b", "--vault", cli.path("s.vault")], stdin: Array("w".utf8))
        #expect(set.status != 0 && set.stderr.contains("sign"), "\(set.stderr)")
        #expect(try cli.read("s.vault") == before)
    }
}
