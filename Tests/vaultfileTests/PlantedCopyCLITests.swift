import Foundation
import TestSupport
import Testing

/// Issue 39, item 1, through the real binary: a removed member keeps a clone, makes it open with
/// the owner's slots only (a keyfile slot of hers, added, used and removed there) at a generation
/// past the owner's, and hands it back. The owner's machine, which ran the removal, refuses every
/// write to it (exit 7, nothing written) and warns on every read, whichever of his slots opens it;
/// a rotation made by a member elsewhere still opens with no warning, and one that does not hold
/// the key minted here is taken with --accept-rotation.
@Suite struct PlantedCopyCLITests {
    /// The owner (password `pw`, and the age identity in `owner.txt`) and alice (her own password
    /// slot) share `t.vault`; `alice.vault` is her clone, opened on her machine (`alice-state`).
    /// `inGit`: the folder is a git repository.
    func sharedVault(inGit: Bool = false) throws -> CLI {
        var cli = inGit ? try CLI.gitRepository() : try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        try cli.write("pw", Array("owner-pw".utf8))
        try cli.write("alice-pw", Array("alice-pw".utf8))
        let recipient = try cli.run(["keygen", "-o", cli.path("owner.txt")]).text.trimmingCharacters(in: .newlines)
        // Unsigned (issue 39's lineage rules alone): in a signed vault the slot that opened it cannot remove itself.
        try run(cli, ["init", "--unsigned", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw"), "--recipient", recipient] + CLI.fastKDF)
        try run(cli, ["slot", "add", "password", "--label", "alice", "--new-password-file", cli.path("alice-pw")] + cli.unlock() + CLI.fastKDF)
        try run(cli, ["set", "db/password"] + cli.unlock(), stdin: "before-removal")
        try cli.write("alice.vault", try cli.read("t.vault"))
        try run(cli, ["get", "db/password", "--vault", cli.path("alice.vault"), "--password-file", cli.path("alice-pw")], asAlice: true)
        return cli
    }

    /// Runs `arguments` (on alice's machine with `asAlice`) and expects success.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], stdin: String = "", asAlice: Bool = false) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: asAlice ? ["VAULTFILE_STATE_DIR": cli.path("alice-state")] : [:])
        #expect(result.status == 0, "\(arguments.prefix(3)): \(result.stderr)")
        return result
    }

    /// The issue's scenario: the owner removes alice with his password and writes; on her clone
    /// alice adds a keyfile slot, unlocks with it, removes herself, writes past the owner's
    /// generation, removes the keyfile slot, and her file is handed back over the owner's (kept
    /// aside in `own.vault`).
    func plantedCopy(inGit: Bool = false) throws -> CLI {
        let cli = try sharedVault(inGit: inGit)
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try run(cli, ["set", "db/password"] + cli.unlock(), stdin: "after-removal")
        let alice = ["--vault", cli.path("alice.vault")]
        try run(cli, ["keygen", "--keyfile", cli.path("alice.key")])
        try run(cli, ["slot", "add", "keyfile", cli.path("alice.key"), "--password-file", cli.path("alice-pw")] + alice, asAlice: true)
        let keyfile = alice + ["--keyfile", cli.path("alice.key")]
        try run(cli, ["slot", "rm", "alice"] + keyfile, asAlice: true)
        for index in 0..<4 { try run(cli, ["set", "planted/\(index)"] + keyfile, stdin: "x", asAlice: true) }
        let slots = try run(cli, ["slot", "list", "--json"] + keyfile, asAlice: true)
        let keyfileSlot = try #require(try jsonArray(slots.stdout).first { $0["kind"] as? String == "keyfile" }?["id"] as? Int)
        try run(cli, ["slot", "rm", String(keyfileSlot)] + keyfile, asAlice: true)
        #expect(try generation(cli, "alice.vault") > generation(cli, "t.vault"), "her copy passed the owner's generation")
        try cli.write("own.vault", try cli.read("t.vault"))
        try cli.write("t.vault", try cli.read("alice.vault"))
        return cli
    }

    private func generation(_ cli: CLI, _ vault: String) throws -> Int {
        let info = try cli.run(["info", "--json", "--vault", cli.path(vault)])
        return try #require((try JSONSerialization.jsonObject(with: Data(info.stdout)) as? [String: Any])?["generation"] as? Int)
    }

    private func jsonArray(_ bytes: [UInt8]) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [[String: Any]])
    }

    /// What the owner sees of the planted copy when `unlock` opens it: every write exits 7 and
    /// leaves it byte-identical, every read goes on with a warning, and nothing of it is recorded.
    func expectRefused(_ cli: CLI, unlock: [String], saying reason: String) throws {
        let planted = try cli.read("t.vault")
        // Every kind of write, a rotation too: a copy that may not be the members' is never rotated into theirs.
        let passwd = unlock.contains("--password-file") ? [["passwd", "--new-password-file", cli.path("pw")]] : []
        for write in [["set", "db/password"], ["rm", "planted/0"], ["slot", "add", "recovery"], ["rekey"]] + passwd {
            let result = try cli.run(write + unlock, stdin: Array("new-secret".utf8))
            #expect(result.status == 7, "\(write): \(result.stderr)")
            #expect(result.stderr.contains(reason) && result.stderr.contains("may have been written by someone who no longer holds a slot")
                    && result.stderr.contains("nothing was written") && result.stderr.contains("--accept-rotation"), "\(write): \(result.stderr)")
            #expect(try cli.read("t.vault") == planted, "\(write): the file is byte-identical")
        }
        let get = try cli.run(["get", "db/password"] + unlock)
        #expect(get.status == 0 && get.text == "before-removal")
        #expect(get.stderr.contains("vaultfile: warning: ") && get.stderr.contains(reason) && get.stderr.contains("a write to it is refused (exit 7)"),
                "\(get.stderr)")
        // Nothing was recorded of it: the owner's own copy is not an older copy now, and writes as before.
        try cli.write("t.vault", try cli.read("own.vault"))
        let own = try cli.run(["set", "db/password"] + unlock, stdin: Array("owner-again".utf8))
        #expect(own.status == 0 && own.stderr.isEmpty, "\(own.stderr)")
    }

    @Test func test_set_onACopyPlantedByARemovedMemberExits7WithTheOwnersPassword() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        try expectRefused(cli, unlock: cli.unlock(), saying: "was opened through keyslot 0 (x25519:")
    }

    @Test func test_set_onACopyPlantedByARemovedMemberExits7WithTheOwnersIdentity() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        // It holds the owner's old password slot, retired here (checked before the lineage since issue 39, F1).
        try expectRefused(cli, unlock: ["--vault", cli.path("t.vault"), "--identity", cli.path("owner.txt")],
                          saying: "holds keyslot 0 (x25519:")
    }

    @Test func test_merge_ofTheOwnersCopyWithAPlantedOneIsRefused() throws {
        let cli = try plantedCopy(); defer { cli.directory.remove() }
        let own = try cli.read("own.vault")
        let merge = try cli.run(["merge", cli.path("own.vault"), cli.path("t.vault"), "--password-file", cli.path("pw")])
        #expect(merge.status == 7 && merge.stderr.contains("THEIRS (the other copy) at \(cli.path("t.vault")) was opened through keyslot 0")
                && merge.stderr.contains("nothing was written"), "its entries may be the removed member's: \(merge.stderr)")
        #expect(try cli.read("own.vault") == own, "nothing written")
        #expect(try cli.run(["get", "planted/3"] + cli.unlock("own.vault")).status == 1, "no planted entry came in")
        let set = try cli.run(["set", "after-merge"] + cli.unlock("own.vault"), stdin: Array("x".utf8))
        #expect(set.status == 0 && set.stderr.isEmpty, "the owner's copy writes on: \(set.stderr)")
    }

    @Test func test_acceptRotation_letsARotationMadeOnAnotherMachineThrough() throws {
        let cli = try sharedVault(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        // The owner changes his password on his laptop: a genuine rotation, without the key minted here.
        let laptop = try cli.run(["passwd", "--new-password-file", cli.path("pw")] + cli.unlock(), extra: ["VAULTFILE_STATE_DIR": cli.path("laptop")])
        #expect(laptop.status == 0, "\(laptop.stderr)")
        let refused = try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8))
        #expect(refused.status == 7 && refused.stderr.contains("does not descend from that rotation"), "\(refused.stderr)")
        let help = try cli.run(["set", "--help"])
        #expect(help.text.contains("--accept-rotation"))
        try run(cli, ["slot", "list"] + cli.unlock())
        let accepted = try cli.run(["set", "k", "--accept-rotation"] + cli.unlock(), stdin: Array("v".utf8))
        #expect(accepted.status == 0 && accepted.stderr.hasPrefix("vaultfile: --accept-rotation: this machine now takes"), "\(accepted.stderr)")
        let after = try cli.run(["set", "k"] + cli.unlock(), stdin: Array("w".utf8))
        #expect(after.status == 0 && after.stderr.isEmpty, "taken from then on: \(after.stderr)")
    }

    @Test func test_get_aCopyRotatedByAMemberWhoKeptTheOwnersSlotOpensWithNoWarning() throws {
        let cli = try sharedVault(); defer { cli.directory.remove() }
        try cli.write("bob-pw", Array("bob-pw".utf8))
        try run(cli, ["slot", "add", "password", "--label", "bob", "--new-password-file", cli.path("bob-pw")] + cli.unlock() + CLI.fastKDF)
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        // Bob, on his machine, rekeys with his own password: the owner's slot is re-wrapped to the key minted here.
        let bob = try cli.run(["rekey", "--vault", cli.path("t.vault"), "--password-file", cli.path("bob-pw")],
                              extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
        #expect(bob.status == 0 && !bob.stderr.contains("protects nothing"), "\(bob.stderr)")
        var value = "before-removal"
        for unlock in [cli.unlock(), ["--vault", cli.path("t.vault"), "--identity", cli.path("owner.txt")]] {
            let get = try cli.run(["get", "db/password"] + unlock)
            #expect(get.status == 0 && get.text == value && get.stderr.isEmpty, "\(get.stderr)")
            value += "+"
            let set = try cli.run(["set", "db/password"] + unlock, stdin: Array(value.utf8))
            #expect(set.status == 0 && set.stderr.isEmpty, "\(set.stderr)")
        }
    }

    @Test func test_slotRm_openedWithAnIdentitySaysItProtectsNothing() throws {
        let cli = try sharedVault(); defer { cli.directory.remove() }
        let rm = try cli.run(["slot", "rm", "alice", "--vault", cli.path("t.vault"), "--identity", cli.path("owner.txt")])
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(rm.stderr.contains("vaultfile: warning: this rotation gave no slot a new key, since it was opened with an identity")
                && rm.stderr.contains("protects nothing") && rm.stderr.contains("'vaultfile passwd'"), "\(rm.stderr)")
        let rekey = try cli.run(["rekey"] + cli.unlock())
        #expect(rekey.status == 0 && !rekey.stderr.contains("protects nothing"), "a password's slot is re-salted: \(rekey.stderr)")
    }
}

extension ExternalTools {
    /// The planted copy arriving as a commit: the checks run inside a git work tree too.
    @Suite struct PlantedCopyGitCLITests {
        @Test func test_set_onAPlantedCopyCommittedToTheRepositoryExits7() throws {
            let scenario = PlantedCopyCLITests()
            let cli = try scenario.plantedCopy(inGit: true); defer { cli.directory.remove() }
            try git(cli, "add t.vault && git commit -qm 'from alice'")
            try scenario.expectRefused(cli, unlock: ["--vault", cli.path("t.vault"), "--identity", cli.path("owner.txt")],
                                       saying: "holds keyslot 0 (x25519:")
        }
    }
}
