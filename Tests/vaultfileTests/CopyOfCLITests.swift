import Foundation
import TestSupport
import Testing

/// Copies (issue 47): `cp a.vault b.vault` makes a second state of one vault (the same vault id),
/// so a write to the copy makes the original look older; `init --copy-of` makes an independent
/// vault (a new id and file key, the same entries and slots), and the older-copy refusal says
/// what a same-id copy is and how to make one independent.
@Suite struct CopyOfCLITests {
    /// `info --json` of `name`.
    private func info(_ cli: CLI, _ name: String) throws -> [String: Any] {
        try jsonObject(cli.run(["info", "--json", "--vault", cli.path(name)]).stdout)
    }

    /// A signed vault `a.vault` (password in `pw`) made by `init`, with two entries set.
    private func original() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.write("pw", Array("pw".utf8))
        let created = try cli.run(["init", "--vault", cli.path("a.vault"), "--password-file", cli.path("pw")] + CLI.fastKDF)
        #expect(created.status == 0, "\(created.stderr)")
        for (name, value) in [("db/password", "s3cret"), ("web/token", "t")] {
            #expect(try cli.run(["set", name] + cli.unlock("a.vault"), stdin: Array(value.utf8)).status == 0)
        }
        return cli
    }

    // MARK: - Success

    @Test func test_initCopyOf_makesAVaultWhoseWritesNeverMakeTheOriginalOlder() throws {
        let cli = try original(); defer { cli.directory.remove() }
        let before = try cli.read("a.vault")
        let copied = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--vault", cli.path("b.vault"), "--password-file", cli.path("pw")])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stderr.contains("an independent copy of \(cli.path("a.vault")): a new vault id and file key, 2 entries"), "\(copied.stderr)")
        #expect(copied.stderr.contains("signed (format 1.3)"), "\(copied.stderr)")
        #expect(try cli.read("a.vault") == before, "the source is only read")
        let (a, b) = (try info(cli, "a.vault"), try info(cli, "b.vault"))
        #expect(a["vault_id"] as? String != b["vault_id"] as? String && b["generation"] as? Int == 1 && b["format"] as? String == "1.3")
        #expect(try cli.run(["get", "db/password"] + cli.unlock("b.vault")).text == "s3cret")
        // Writes to the copy, then to the original: both go through.
        for value in ["1", "2"] { #expect(try cli.run(["set", "web/token"] + cli.unlock("b.vault"), stdin: Array(value.utf8)).status == 0) }
        let original = try cli.run(["set", "web/token"] + cli.unlock("a.vault"), stdin: Array("3".utf8))
        #expect(original.status == 0, "\(original.stderr)")
        #expect(try cli.run(["get", "web/token"] + cli.unlock("b.vault")).text == "2")
        // The slots came along (labels too), and the copy's password slot opens only the copy's key.
        let slots = try cli.run(["slot", "list"] + cli.unlock("b.vault"))
        #expect(slots.status == 0 && slots.text.contains("password"), "\(slots.stderr)")
    }

    @Test func test_staleCopy_ofACpCopySaysWhatASameIDCopyIsAndPointsToCopyOf() throws {
        let cli = try original(); defer { cli.directory.remove() }
        try cli.write("c.vault", try cli.read("a.vault"))
        #expect(try cli.run(["set", "web/token"] + cli.unlock("c.vault"), stdin: Array("new".utf8)).status == 0)
        let stale = try cli.run(["set", "web/token"] + cli.unlock("a.vault"), stdin: Array("x".utf8))
        #expect(stale.status == 7, "\(stale.stderr)")
        #expect(stale.stderr.contains("copies of one vault, from cp, git or a backup, share its vault id"), "\(stale.stderr)")
        #expect(stale.stderr.contains("'vaultfile init --copy-of COPY --vault NEW.vault' (a new vault id)"), "\(stale.stderr)")
        // The way out it names: one --allow-rollback, then the copy made independent writes alongside.
        #expect(try cli.run(["set", "web/token", "--allow-rollback"] + cli.unlock("a.vault"), stdin: Array("x".utf8)).status == 0)
        #expect(try cli.run(["init", "--copy-of", cli.path("c.vault"), "--vault", cli.path("d.vault"), "--password-file", cli.path("pw")]).status == 0)
        #expect(try cli.run(["set", "web/token"] + cli.unlock("d.vault"), stdin: Array("d".utf8)).status == 0)
        #expect(try cli.run(["set", "web/token"] + cli.unlock("a.vault"), stdin: Array("y".utf8)).status == 0)
    }

    @Test func test_initCopyOf_ofASignedTeamVaultIsSignedAfreshAndEveryMemberOpensIt() throws {
        let made = try TrustTeam.make(); let cli = made.cli; defer { cli.directory.remove() }
        let copied = try TrustTeam.run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("c.vault"),
                                             "--identity", cli.path("alice.txt")])
        #expect(copied.stderr.contains("keyslots: password, recipient, recipient, recipient, keyfile; signed"), "\(copied.stderr)")
        // Bob's machine has never seen the copy's id: his first open pins it, then he writes; mallory's key opens it too.
        let bob = try TrustTeam.run(cli, ["get", "db/password"] + TrustTeam.as_(cli, "bob", vault: "c.vault"), on: "bob")
        #expect(bob.text == "s3cret", "\(bob.stderr)")
        let bobSet = try TrustTeam.run(cli, ["set", "db/user"] + TrustTeam.as_(cli, "bob", vault: "c.vault"), stdin: "admin", on: "bob")
        #expect(!bobSet.stderr.contains("not trusted"), "\(bobSet.stderr)")
        #expect(try TrustTeam.run(cli, ["get", "db/user"] + TrustTeam.as_(cli, "mallory", vault: "c.vault")).text == "admin")
        // The original is untouched and its members keep writing it on their machines.
        #expect(try TrustTeam.run(cli, ["set", "db/user"] + TrustTeam.as_(cli, "bob"), stdin: "root", on: "bob").status == 0)
        #expect(try TrustTeam.run(cli, ["get", "db/user"] + TrustTeam.as_(cli, "bob", vault: "c.vault"), on: "bob").text == "admin")
    }

    // MARK: - Failures and edges

    @Test func test_initCopyOf_refusesAnExistingTargetSlotOptionsAndAWrongSecret() throws {
        let cli = try original(); defer { cli.directory.remove() }
        try cli.write("b.vault", Array("exists".utf8))
        let exists = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--vault", cli.path("b.vault"), "--password-file", cli.path("pw")])
        #expect(exists.status != 0 && exists.stderr.contains("exists already"), "\(exists.stderr)")
        #expect(try cli.read("b.vault") == Array("exists".utf8))
        let withSlots = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--vault", cli.path("n.vault"), "--unsigned", "--password-file", cli.path("pw")])
        #expect(withSlots.status == 64 && withSlots.stderr.contains("--copy-of keeps the source's keyslots"), "\(withSlots.stderr)")
        try cli.write("wrong", Array("nope".utf8))
        let wrong = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--vault", cli.path("n.vault"), "--password-file", cli.path("wrong")])
        #expect(wrong.status == 3, "\(wrong.stderr)")
        let same = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--vault", cli.path("a.vault"), "--password-file", cli.path("pw")])
        #expect(same.status != 0)
        // Without --vault the copy would land at the default vault: refused, VAULTFILE_PATH set or not.
        for extra in [[:], ["VAULTFILE_PATH": cli.path("n.vault")], ["HOME": cli.path("home")]] {
            let noVault = try cli.run(["init", "--copy-of", cli.path("a.vault"), "--password-file", cli.path("pw")], extra: extra)
            #expect(noVault.status == 64 && noVault.stderr.contains("--copy-of needs --vault NEW"), "\(extra): \(noVault.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.path("home")), "no default vault made")
        #expect(!FileManager.default.fileExists(atPath: cli.path("n.vault")), "nothing created")
    }

    @Test func test_initCopyOf_ofAFormat10VaultStaysUnsignedAndOpensWithItsPassword() throws {
        let cli = try CLI.withVault(["k": "v"]); defer { cli.directory.remove() }
        let copied = try cli.run(["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("u.vault"), "--password-file", cli.path("pw")])
        #expect(copied.status == 0 && copied.stderr.contains("unsigned"), "\(copied.stderr)")
        let (t, u) = (try info(cli, "t.vault"), try info(cli, "u.vault"))
        #expect(u["format"] as? String == t["format"] as? String && u["vault_id"] as? String != t["vault_id"] as? String)
        #expect(try cli.run(["get", "k"] + cli.unlock("u.vault")).text == "v")
    }
}
