import Foundation
import TestSupport
import Testing

/// Issue 39, item 1, the final re-test's two holes, through the real binary: a slot added to a
/// clone under the retired file key must not survive the rotation out of it, and a copy the key
/// lineage refuses must not merge its entries in.
@Suite struct PlantedCopyWayOutCLITests {
    /// Runs `arguments` (on alice's machine with `asAlice`) and expects success.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], stdin: String = "", asAlice: Bool = false) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: asAlice ? ["VAULTFILE_STATE_DIR": cli.path("alice-state")] : [:])
        #expect(result.status == 0, "\(arguments.prefix(3)): \(result.stderr)")
        return result
    }

    /// The fingerprint `slot list --json` shows for keyslot `index` of the vault `unlock` opens.
    private func fingerprint(_ cli: CLI, slot index: Int, _ unlock: [String]) throws -> String {
        let list = try run(cli, ["slot", "list", "--json"] + unlock)
        let slots = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        return try #require(slots.first { $0["id"] as? Int == index }?["fingerprint"] as? String)
    }

    // MARK: - A slot added under the retired key

    /// The re-test's hole 1: alice's clone from before her removal (under the file key the removal
    /// retired) gets a keyfile slot of hers and a few writes, and comes back (over the file, or as a
    /// branch of the repository). `set` and `rekey` were refused already; `slot rm alice`, the way
    /// out the hints lead to, gave her keyfile the new file key. It is refused now, naming the slot.
    @Test(arguments: [false, true])
    func test_slotRm_ofACloneGivenASlotUnderTheRetiredKeyRefusesToKeepIt(inGit: Bool) throws {
        let cli = try PlantedCopyCLITests().sharedVault(inGit: inGit); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try run(cli, ["set", "db/password"] + cli.unlock(), stdin: "after-removal")
        let alice = ["--vault", cli.path("alice.vault")]
        try run(cli, ["keygen", "--keyfile", cli.path("akf")])
        try run(cli, ["slot", "add", "keyfile", cli.path("akf"), "--label", "laptop", "--password-file", cli.path("alice-pw")] + alice, asAlice: true)
        for index in 1...3 { try run(cli, ["set", "p\(index)", "--keyfile", cli.path("akf")] + alice, stdin: "x", asAlice: true) }
        if inGit {
            try git(cli, "add t.vault && git commit -qm owner && git checkout -qb from-alice")
            try cli.write("t.vault", try cli.read("alice.vault"))
            try git(cli, "commit -qam 'from alice'")
        } else {
            try cli.write("t.vault", try cli.read("alice.vault"))
        }
        let planted = try cli.read("t.vault")
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 7)
        #expect(try cli.run(["rekey"] + cli.unlock()).status == 7)
        let laptop = try fingerprint(cli, slot: 3, cli.unlock())
        let rm = try cli.run(["slot", "rm", "alice"] + cli.unlock())
        #expect(rm.status == 7, "\(rm.stderr)")
        #expect(rm.stderr.contains("would give the new file key to keyslot 3 (keyfile 'laptop', \(laptop))")
                && rm.stderr.contains("which the copy taken here last does not hold") && rm.stderr.contains("nothing was written")
                && rm.stderr.contains("'vaultfile slot rm 3'") && rm.stderr.contains("--drop-slot") && rm.stderr.contains("--accept-rotation"),
                "\(rm.stderr)")
        #expect(try cli.read("t.vault") == planted, "nothing written")
        // Dropped in the same rotation, the copy is the owner's again; alice's keyfile opens nothing.
        try run(cli, ["slot", "rm", "alice", "--drop-slot", "3"] + cli.unlock())
        let set = try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("secret".utf8))
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set.stderr)")
        let read = try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--keyfile", cli.path("akf")],
                               extra: ["VAULTFILE_STATE_DIR": cli.path("alice-state")])
        #expect(read.status != 0 && !read.text.contains("secret"), "\(read.stderr)")
    }

    // MARK: - A refused side in a merge

    /// The re-test's hole 2: the planted copy's entries no longer come in through `merge`,
    /// `merge --both` or the git merge driver: the whole merge is refused (exit 7), nothing written.
    @Test func test_merge_ofARefusedSideIsRefusedWholeAndWritesNothing() throws {
        let cli = try PlantedCopyCLITests().plantedCopy(); defer { cli.directory.remove() }
        let (own, planted) = (try cli.read("own.vault"), try cli.read("t.vault"))
        let password = ["--password-file", cli.path("pw")]
        for (command, role) in [(["merge"], "THEIRS (the other copy)"), (["merge", "--both"], "THEIRS (the other copy)"),
                                (["git", "merge", cli.path("own.vault")], "THEIRS (the branch being merged)")] {
            let merge = try cli.run(command + [cli.path("own.vault"), cli.path("t.vault")] + password)
            #expect(merge.status == 7, "\(command): \(merge.stderr)")
            #expect(merge.stderr.contains("\(role) at \(cli.path("t.vault")) was opened through keyslot 0")
                    && merge.stderr.contains("nothing was written") && !merge.stderr.contains("vaultfile merge YOUR-COPY"), "\(command): \(merge.stderr)")
            #expect(try cli.read("own.vault") == own && cli.read("t.vault") == planted, "\(command): nothing written")
        }
        #expect(try cli.run(["get", "planted/0"] + cli.unlock("own.vault")).status == 1, "no planted entry")
        // A person who checked the slots takes it.
        let accepted = try cli.run(["merge", "--accept-rotation", cli.path("own.vault"), cli.path("t.vault")] + password)
        #expect(accepted.status == 0 || accepted.status == 1, "\(accepted.stderr)")
        #expect(try run(cli, ["get", "planted/0"] + cli.unlock("own.vault")).text == "x")
    }

    /// A genuine copy from before a rotation run here (an old branch) still merges, keys left out,
    /// and the warning names the entries it brought, since a removed member could have written them.
    @Test func test_merge_ofACopyUnderAKeyRetiredHereNamesTheEntriesItBrings() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        let alice = ["--vault", cli.path("alice.vault"), "--password-file", cli.path("alice-pw")]
        for index in 1...22 { try run(cli, ["set", "branch/\(String(format: "%02d", index))"] + alice, stdin: "b", asAlice: true) }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        let merge = try cli.run(["merge", cli.path("t.vault"), cli.path("alice.vault"), "--password-file", cli.path("pw")])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stderr.contains("left out the keyslots, file key and generation of THEIRS (the other copy)")
                && merge.stderr.contains("its entries come from a copy that a removed member could have written")
                && merge.stderr.contains("branch/01, branch/02") && merge.stderr.contains("branch/20 and 2 more")
                && !merge.stderr.contains("branch/21"), "\(merge.stderr)")
        #expect(try run(cli, ["get", "branch/22"] + cli.unlock()).text == "b")
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault")] + ["--password-file", cli.path("alice-pw")]).status != 0)
    }
}
