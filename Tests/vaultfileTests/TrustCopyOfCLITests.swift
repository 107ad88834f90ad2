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

    /// The team vault (`TrustTeam`: alice, bob, mallory at keyslot 3); mallory keeps a copy, is
    /// removed, bob learns of it, and she plants her copy, written to, at t.vault.
    private func plantedCopy() throws -> CLI {
        let cli = try TrustTeam.make().cli
        try cli.write("mallory.vault", try cli.read("t.vault"))
        try TrustTeam.run(cli, ["slot", "rm", "3"] + TrustTeam.as_(cli, "alice"))
        try TrustTeam.run(cli, ["get", "db/password"] + TrustTeam.as_(cli, "bob"), on: "bob")
        try TrustTeam.run(cli, ["set", "DB"] + TrustTeam.as_(cli, "mallory", vault: "mallory.vault"), stdin: "attacker", on: "mallory")
        try cli.write("t.vault", try cli.read("mallory.vault"))
        return cli
    }

    @Test func test_initCopyOf_ofACopySignedByARemovedMemberExits7() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let bob = ["--identity", cli.path("bob.txt")]
        // What a write to it says, and what the copy must say alike.
        let set = try run(cli, ["set", "x", "--vault", cli.path("t.vault")] + bob, on: "bob", stdin: "1", status: 7)
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault")] + bob, on: "bob", status: 7)
        #expect(copy.stderr.contains("not trusted") && copy.stderr.contains("removed") && copy.stderr.contains("--allow-untrusted"), "\(copy.stderr)")
        #expect(set.stderr.contains("removed"), "\(set.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("new.vault")))
    }

    @Test func test_initCopyOf_withAllowUntrustedLeavesTheRemovedMembersSlotOut() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let bob = ["--identity", cli.path("bob.txt")]
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault"), "--allow-untrusted"] + bob, on: "bob")
        #expect(copy.stderr.contains("left out of the copy"), "\(copy.stderr)")
        let slots = try run(cli, ["slot", "list", "--vault", cli.path("new.vault")] + bob, on: "bob")
        #expect(!slots.text.contains(try TrustTeam.recipient(cli, "mallory")), "\(slots.text)")
        // mallory's identity opens nothing in the copy.
        try run(cli, ["get", "DB", "--vault", cli.path("new.vault"), "--identity", cli.path("mallory.txt")], on: "mallory", status: 3)
    }

    @Test func test_initCopyOf_onAMachineThatNeverSawTheVaultCopiesIt() throws {
        // Trust is this machine's knowledge: where the vault was never seen, the copy is a first open.
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let copy = try run(cli, ["init", "--copy-of", cli.path("t.vault"), "--vault", cli.path("new.vault"), "--identity", cli.path("bob.txt")],
                           on: "carol")
        #expect(!copy.stderr.contains("left out"), "\(copy.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.path("new.vault")))
    }
}
