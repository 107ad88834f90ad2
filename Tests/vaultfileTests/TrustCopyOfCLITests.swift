import Foundation
import TestSupport
import Testing

/// `init --copy-of` of a planted copy: a copy signed by a removed member's key is refused on a
/// machine that knows of the removal (exit 7, as a write to it is), and with `--allow-untrusted`
/// the copy is made without the removed member's slot.
@Suite struct TrustCopyOfCLITests {
    /// Runs on `machine`'s state folder; expects `status`.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], on machine: String, stdin: String = "", status: Int32 = 0) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: ["VAULTFILE_STATE_DIR": cli.path(machine + "-state")])
        #expect(result.status == status, "\(arguments.prefix(4)): \(result.stderr)")
        return result
    }

    /// alice's vault with bob (age) and mallory (password); mallory is removed after keeping a copy,
    /// then plants that copy, written past bob's generations, at t.vault.
    private func plantedCopy() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "on"
        var keys: [String: String] = [:]
        for name in ["alice", "bob"] {
            try cli.write(name + ".pub", try cli.run(["keygen", "-o", cli.path(name + ".id")]).stdout)
            keys[name] = String(decoding: try cli.read(name + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try cli.write("mpw", Array("mallory-pw".utf8))
        let vault = ["--vault", cli.path("t.vault")]
        let alice = vault + ["--identity", cli.path("alice.id")], bob = vault + ["--identity", cli.path("bob.id")]
        try run(cli, ["init"] + vault + ["--recipient", keys["alice"]!, "--recipient", keys["bob"]!], on: "alice")
        try run(cli, ["slot", "add", "password", "--label", "mallory", "--new-password-file", cli.path("mpw")] + alice + CLI.fastKDF, on: "alice")
        try run(cli, ["set", "DB"] + alice, on: "alice", stdin: "genuine")
        try cli.write("old.vault", try cli.read("t.vault"))  // mallory keeps a copy
        try run(cli, ["get", "DB"] + bob, on: "bob")
        try run(cli, ["slot", "rm", "mallory"] + alice, on: "alice")
        try run(cli, ["get", "DB"] + bob, on: "bob")  // bob learns of her removal
        let old = ["--vault", cli.path("old.vault"), "--password-file", cli.path("mpw")]
        for index in 0..<8 { try run(cli, ["set", "k"] + old, on: "mallory", stdin: "x\(index)") }
        try run(cli, ["set", "DB"] + old, on: "mallory", stdin: "attacker")
        try cli.write("t.vault", try cli.read("old.vault"))
        return cli
    }

    @Test func test_initCopyOf_ofACopySignedByARemovedMemberExits7() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let bob = ["--identity", cli.path("bob.id")]
        // What a write to it says, and what the copy must say alike.
        let set = try run(cli, ["set", "x", "--vault", cli.path("t.vault")] + bob, on: "bob", stdin: "1", status: 7)
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault")] + bob, on: "bob", status: 7)
        #expect(copy.stderr.contains("not trusted") && copy.stderr.contains("removed") && copy.stderr.contains("--allow-untrusted"), "\(copy.stderr)")
        #expect(set.stderr.contains("removed"), "\(set.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("new.vault")))
    }

    @Test func test_initCopyOf_withAllowUntrustedLeavesTheRemovedMembersSlotOut() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let bob = ["--identity", cli.path("bob.id")]
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault"), "--allow-untrusted"] + bob, on: "bob")
        #expect(copy.stderr.contains("left out of the copy"), "\(copy.stderr)")
        let slots = try run(cli, ["slot", "list", "--vault", cli.path("new.vault")] + bob, on: "bob")
        #expect(!slots.text.contains("mallory") && slots.text.contains("age1"), "\(slots.text)")
        // mallory's password opens nothing in the copy.
        try run(cli, ["get", "DB", "--vault", cli.path("new.vault"), "--password-file", cli.path("mpw")], on: "mallory", status: 3)
    }

    @Test func test_initCopyOf_onAMachineThatNeverSawTheVaultCopiesIt() throws {
        // Trust is this machine's knowledge: where the vault was never seen, the copy is a first open.
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault"), "--identity", cli.path("bob.id")],
                           on: "carol")
        #expect(!copy.stderr.contains("left out"), "\(copy.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.path("new.vault")))
    }
}
