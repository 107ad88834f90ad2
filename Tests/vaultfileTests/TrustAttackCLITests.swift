import Foundation
import TestSupport
import Testing

/// Issue 40's attack review, through the binary: an outsider's unsigned vault of a new id put where
/// a signed vault was seen, and a removed member signing with her key from before a re-salt, are
/// each refused on bob's machine (exit 7 on write and `exec`, nothing written), and the genuine copy
/// stays writable.
@Suite struct TrustAttackCLITests {
    private func setUp() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "on"
        for name in ["alice", "bob"] { try cli.write(name + ".pub", try cli.run(["keygen", "-o", cli.path(name + ".id")]).stdout) }
        for (name, text) in [("apw", "alice-pw"), ("epw", "eve-pw"), ("mpw", "mallory-pw"), ("mpw2", "mallory-pw-2")] {
            try cli.write(name, Array(text.utf8))
        }
        return cli
    }

    private func key(_ cli: CLI, _ name: String) throws -> String {
        String(decoding: try cli.read(name + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs on `machine`'s state folder; expects `status`.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], on machine: String, stdin: String = "", status: Int32 = 0) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: ["VAULTFILE_STATE_DIR": cli.path(machine + "-state")])
        #expect(result.status == status, "\(arguments.prefix(4)): \(result.stderr)")
        return result
    }

    /// bob's `exec` and `set` on t.vault exit 7 and change nothing.
    private func expectRefusedOnBobsMachine(_ cli: CLI, saying reason: String) throws {
        let bob = ["--vault", cli.path("t.vault"), "--identity", cli.path("bob.id")]
        let before = try cli.read("t.vault")
        let exec = try run(cli, ["exec"] + bob + ["--", "/bin/sh", "-c", "echo got $DB"], on: "bob", status: 7)
        #expect(exec.text.isEmpty && exec.stderr.contains(reason), "\(exec.stderr)")
        let set = try run(cli, ["set", "token"] + bob, on: "bob", stdin: "bob-secret", status: 7)
        #expect(set.stderr.contains("nothing was written"), "\(set.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_set_onAnUnsignedVaultOfANewIDWhereASignedOneWasSeenExits7() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let fast = CLI.fastKDF
        try run(cli, ["init", "--vault", cli.path("t.vault"), "--password-file", cli.path("apw"), "--recipient", try key(cli, "bob")] + fast, on: "alice")
        try run(cli, ["get", "x", "--vault", cli.path("t.vault"), "--identity", cli.path("bob.id")], on: "bob", status: 1)
        // eve knows only bob's age1… key.
        try run(cli, ["init", "--unsigned", "--vault", cli.path("evil.vault"), "--password-file", cli.path("epw"), "--recipient", try key(cli, "bob")] + fast,
                on: "eve")
        try run(cli, ["set", "DB", "--vault", cli.path("evil.vault"), "--password-file", cli.path("epw")], on: "eve", stdin: "attacker")
        try cli.write("t.vault", try cli.read("evil.vault"))
        try expectRefusedOnBobsMachine(cli, saying: "this path held another vault")
    }

    @Test func test_set_onACopySignedByARemovedMembersKeyFromBeforeHerResaltExits7() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let fast = CLI.fastKDF, vault = ["--vault", cli.path("t.vault")]
        let alice = vault + ["--identity", cli.path("alice.id")], bob = vault + ["--identity", cli.path("bob.id")]
        try run(cli, ["init"] + vault + ["--password-file", cli.path("apw"), "--recipient", try key(cli, "alice")] + fast, on: "alice")
        try run(cli, ["slot", "add", "password", "--label", "mallory", "--new-password-file", cli.path("mpw")] + alice + fast, on: "alice")
        try cli.write("old.vault", try cli.read("t.vault"))  // mallory keeps it: her key K0, attested by alice
        try run(cli, ["passwd", "--password-file", cli.path("mpw"), "--new-password-file", cli.path("mpw2")] + vault + fast, on: "mallory")
        try run(cli, ["slot", "add", "recipient", "--label", "bob", try key(cli, "bob")] + alice, on: "alice")
        try run(cli, ["set", "k"] + alice, on: "alice", stdin: "1")
        try run(cli, ["get", "k"] + bob, on: "bob")  // bob first sees the vault after mallory's re-salt (K1, attested by K0)
        try run(cli, ["slot", "rm", "mallory"] + alice, on: "alice")
        try run(cli, ["get", "k"] + bob, on: "bob")  // and learns K1's removal
        let genuine = try cli.read("t.vault")
        // mallory, with her old copy and old password, adds bob and writes well past bob's generations.
        let old = ["--vault", cli.path("old.vault"), "--password-file", cli.path("mpw")]
        try run(cli, ["slot", "add", "recipient", "--label", "bob", try key(cli, "bob")] + old, on: "mallory2")
        for index in 0..<12 { try run(cli, ["set", "k"] + old, on: "mallory2", stdin: "evil\(index)") }
        try run(cli, ["set", "DB"] + old, on: "mallory2", stdin: "attacker")
        try cli.write("t.vault", try cli.read("old.vault"))
        try expectRefusedOnBobsMachine(cli, saying: "a key a member replaced")
        try cli.write("t.vault", genuine)
        try run(cli, ["set", "k2"] + bob, on: "bob", stdin: "2")
    }

    // MARK: - The second review

    /// A vault of alice (password, age) with mal and bob (age), copied as base.vault, main.vault and feature.vault.
    private func branches(_ cli: CLI) throws -> [String] {
        for name in ["mal", "dave"] { try cli.write(name + ".pub", try cli.run(["keygen", "-o", cli.path(name + ".id")]).stdout) }
        let alice = ["--vault", cli.path("t.vault"), "--identity", cli.path("alice.id")]
        try run(cli, ["init", "--vault", cli.path("t.vault"), "--password-file", cli.path("apw"), "--recipient", try key(cli, "alice")] + CLI.fastKDF,
                on: "alice")
        for name in ["mal", "bob"] { try run(cli, ["slot", "add", "recipient", "--label", name, try key(cli, name)] + alice, on: "alice") }
        try run(cli, ["set", "k1"] + alice, on: "alice", stdin: "before")
        for copy in ["base", "main", "feature"] { try cli.write(copy + ".vault", try cli.read("t.vault")) }
        return alice
    }

    @Test func test_merge_ofABranchFromBeforeARemovalThatKeepsItsSlotsIsRefused() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        _ = try branches(cli)
        try run(cli, ["slot", "add", "recipient", "--label", "dave", try key(cli, "dave"), "--vault", cli.path("feature.vault"),
                      "--identity", cli.path("bob.id")], on: "bob")
        let main = ["--vault", cli.path("main.vault"), "--identity", cli.path("alice.id")]
        try run(cli, ["slot", "rm", "mal"] + main, on: "alice")
        try run(cli, ["set", "k1"] + main, on: "alice", stdin: "after the removal")
        let feature = try cli.read("feature.vault")
        let merge = try run(cli, ["merge", cli.path("feature.vault"), cli.path("main.vault"), "--base", cli.path("base.vault"),
                                  "--identity", cli.path("bob.id")], on: "bob", status: 2)
        #expect(merge.stderr.contains("removed the key that OURS's keyslot 2 ('mal') holds") && merge.stderr.contains("would be undone"),
                "\(merge.stderr)")
        #expect(try cli.read("feature.vault") == feature, "nothing merged: mal reads nothing written after her removal")
    }

    @Test func test_set_onABranchWhoseNewMemberANewerCopyLacksStillWrites() throws {
        // bob adds dave on his branch, then reads alice's newer copy (no dave): dave is unpinned, not retired.
        let cli = try setUp(); defer { cli.directory.remove() }
        _ = try branches(cli)
        let feature = ["--vault", cli.path("feature.vault"), "--identity", cli.path("bob.id")]
        try run(cli, ["slot", "add", "recipient", "--label", "dave", try key(cli, "dave")] + feature, on: "bob")
        let main = ["--vault", cli.path("main.vault"), "--identity", cli.path("alice.id")]
        for index in 0..<3 { try run(cli, ["set", "m\(index)"] + main, on: "alice", stdin: "x") }
        try run(cli, ["get", "m2", "--vault", cli.path("main.vault"), "--identity", cli.path("bob.id")], on: "bob")
        try run(cli, ["set", "f"] + feature + ["--allow-rollback"], on: "bob", stdin: "branch work")
    }
}

