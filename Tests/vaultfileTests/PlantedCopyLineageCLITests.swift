import Foundation
import TestSupport
import Testing

/// Issue 39, item 1, the re-test's gaps, through the real binary: a planted copy after a genuine
/// `--accept-rotation` (F1), a stick rekeyed by a member before her removal (F2), a `rekey` of a
/// clone from before a removal (F7), what the user is shown (the cold user's A, B, F), and a merge
/// refusing a planted side (the final re-test).
@Suite struct PlantedCopyLineageCLITests {
    /// Runs `arguments` (on alice's machine with `asAlice`) and expects success.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], stdin: String = "", asAlice: Bool = false) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: asAlice ? ["VAULTFILE_STATE_DIR": cli.path("alice-state")] : [:])
        #expect(result.status == 0, "\(arguments.prefix(3)): \(result.stderr)")
        return result
    }

    private var ownerIdentity: (CLI) -> [String] { { ["--vault", $0.path("t.vault"), "--identity", $0.path("owner.txt")] } }

    /// The fingerprint `slot list --json` shows for keyslot `index` of `vault`, opened with `unlock`.
    private func fingerprint(_ cli: CLI, slot index: Int, _ unlock: [String]) throws -> String {
        let list = try run(cli, ["slot", "list", "--json"] + unlock)
        let slots = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        return try #require(slots.first { $0["id"] as? Int == index }?["fingerprint"] as? String)
    }

    /// Alice turns her clone `alice.vault` into a copy that the owner's slots alone open (a keyfile
    /// slot of hers added, used to remove her own slot, written past the owner's generation, then
    /// removed), and hands it back over `t.vault` (the owner's copy is kept in `own.vault`).
    private func plant(_ cli: CLI, from clone: String, aliceUnlock: [String]) throws {
        let alice = ["--vault", cli.path(clone)]
        try run(cli, ["keygen", "--keyfile", cli.path("a.key")])
        try run(cli, ["slot", "add", "keyfile", cli.path("a.key")] + alice + aliceUnlock, asAlice: true)
        let keyfile = alice + ["--keyfile", cli.path("a.key")]
        try run(cli, ["slot", "rm", "alice"] + keyfile, asAlice: true)
        for index in 1...6 { try run(cli, ["set", "p\(index)"] + keyfile, stdin: "x", asAlice: true) }
        let slots = try run(cli, ["slot", "list", "--json"] + keyfile, asAlice: true)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(slots.stdout)) as? [[String: Any]])
        let keyfileSlot = try #require(all.first { $0["kind"] as? String == "keyfile" }?["id"] as? Int)
        try run(cli, ["slot", "rm", String(keyfileSlot)] + keyfile, asAlice: true)
        try cli.write("own.vault", try cli.read("t.vault"))
        try cli.write("t.vault", try cli.read(clone))
    }

    /// The owner's write through his identity is refused (exit 7) and leaves the file as it was.
    private func expectWriteRefused(_ cli: CLI, saying: [String]) throws {
        let planted = try cli.read("t.vault")
        let set = try cli.run(["set", "db/password"] + ownerIdentity(cli), stdin: Array("NEW".utf8))
        #expect(set.status == 7, "\(set.stderr)")
        for text in saying + ["nothing was written", "may have been written by someone who no longer holds a slot"] {
            #expect(set.stderr.contains(text), "lacks '\(text)': \(set.stderr)")
        }
        #expect(try cli.read("t.vault") == planted, "the file is byte-identical")
    }

    @Test func test_set_onACopyPlantedAfterAnAcceptedRotationExits7() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        let minted = try fingerprint(cli, slot: 0, cli.unlock())
        // The owner's passwd on his laptop, refused here (the refusal names the key minted here), then accepted.
        try cli.write("pw2", Array("pw2".utf8))
        let laptop = try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock(), extra: ["VAULTFILE_STATE_DIR": cli.path("laptop")])
        #expect(laptop.status == 0, "\(laptop.stderr)")
        let pw2 = ["--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]
        let refused = try cli.run(["set", "k"] + pw2, stdin: Array("v".utf8))
        #expect(refused.status == 7 && refused.stderr.contains("(\(minted))"), "names the key expected: \(refused.stderr)")
        let accepted = try cli.run(["set", "k", "--accept-rotation"] + pw2, stdin: Array("v".utf8))
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stderr.contains("--accept-rotation: this machine now takes") && accepted.stderr.contains("does not descend"),
                "says what it took: \(accepted.stderr)")
        try plant(cli, from: "alice.vault", aliceUnlock: ["--password-file", cli.path("alice-pw")])
        // It holds the owner's first password slot, retired here by the removal.
        let retired = try fingerprint(cli, slot: 0, ownerIdentity(cli))
        try expectWriteRefused(cli, saying: ["holds keyslot 0 (\(retired)), whose public key was retired here"])
        // The genuine copy is not made older or superseded.
        try cli.write("t.vault", try cli.read("own.vault"))
        let own = try cli.run(["set", "db/password"] + pw2, stdin: Array("owner".utf8))
        #expect(own.status == 0 && own.stderr.isEmpty, "\(own.stderr)")
    }

    @Test func test_set_onAPlantedCopyWithoutTheOwnersOldSlotExits7AfterAnAcceptedRotation() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try cli.write("pw2", Array("pw2".utf8))
        try run(cli, ["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock())
        let pw2 = ["--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]
        try cli.write("pw3", Array("pw3".utf8))
        let laptop = try cli.run(["passwd", "--new-password-file", cli.path("pw3")] + pw2, extra: ["VAULTFILE_STATE_DIR": cli.path("laptop")])
        #expect(laptop.status == 0, "\(laptop.stderr)")
        let pw3 = ["--vault", cli.path("t.vault"), "--password-file", cli.path("pw3")]
        try run(cli, ["set", "k", "--accept-rotation"] + pw3, stdin: "v")
        let expected = try fingerprint(cli, slot: 0, pw3)
        // Her clone without the owner's password slot: only his identity opens it.
        try run(cli, ["slot", "rm", "0", "--vault", cli.path("alice.vault"), "--password-file", cli.path("alice-pw")], asAlice: true)
        try plant(cli, from: "alice.vault", aliceUnlock: ["--password-file", cli.path("alice-pw")])
        try expectWriteRefused(cli, saying: ["is sealed under a file key this machine has not seen", "(\(expected))"])
    }

    @Test func test_set_onAStickRekeyedByAMemberBeforeHerRemovalExits7() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        try cli.write("stick.vault", try cli.read("t.vault"))
        let stickAlice = ["--vault", cli.path("stick.vault"), "--password-file", cli.path("alice-pw")]
        try run(cli, ["rekey"] + stickAlice, asAlice: true)
        try run(cli, ["set", "more"] + cli.unlock(), stdin: "y")
        #expect(try run(cli, ["get", "db/password"] + cli.unlock("stick.vault")).text == "before-removal")
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try run(cli, ["set", "db/password"] + cli.unlock(), stdin: "after")
        for index in 1...6 { try run(cli, ["set", "p\(index)"] + stickAlice, stdin: "x", asAlice: true) }
        try cli.write("own.vault", try cli.read("t.vault"))
        try cli.write("t.vault", try cli.read("stick.vault"))
        try expectWriteRefused(cli, saying: ["is sealed under a file key that a newer copy under another key replaced"])
    }

    @Test func test_rekey_ofACloneFromBeforeARemovalRefusesToKeepTheRemovedSlot() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try run(cli, ["set", "db/password"] + cli.unlock(), stdin: "after")
        try cli.write("t.vault", try cli.read("alice.vault"))
        let clone = try cli.read("t.vault")
        let aliceKey = try fingerprint(cli, slot: 2, cli.unlock())
        let rekey = try cli.run(["rekey", "--allow-rollback"] + cli.unlock())
        #expect(rekey.status == 7 && rekey.stderr.contains("would keep keyslot 2 (\(aliceKey))")
                && rekey.stderr.contains("'vaultfile slot rm 2'"), "\(rekey.stderr)")
        #expect(try cli.read("t.vault") == clone, "nothing written")
        // Removing her slot is the way out; the copy is then this machine's.
        try run(cli, ["slot", "rm", "2", "--allow-rollback"] + cli.unlock())
        let set = try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("kept".utf8))
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set.stderr)")
    }

    @Test func test_slotList_showsEachSecretSlotsFingerprintAndNoHintToRunItself() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        let list = try run(cli, ["slot", "list"] + cli.unlock())
        let alice = try fingerprint(cli, slot: 2, cli.unlock())
        #expect(list.text.contains("FINGERPRINT") && list.text.split(separator: "\n").contains { $0.contains("alice") && $0.contains(alice) },
                "\(list.text)")
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        // A rotation made on another machine, refused here as of another lineage.
        try cli.write("pw2", Array("pw2".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock(), extra: ["VAULTFILE_STATE_DIR": cli.path("laptop")]).status == 0)
        let refused = try cli.run(["slot", "list", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")])
        #expect(refused.status == 0 && refused.stderr.contains("a write to it is refused (exit 7)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("with 'vaultfile slot list'") && refused.stderr.contains("compare the keyslots listed"),
                "no hint to run the command itself: \(refused.stderr)")
    }

    @Test func test_merge_refusesARefusedSideAndNamesItWithoutMergingIt() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        try plant(cli, from: "alice.vault", aliceUnlock: ["--password-file", cli.path("alice-pw")])
        let own = try cli.read("own.vault")
        let merge = try cli.run(["merge", cli.path("own.vault"), cli.path("t.vault"), "--password-file", cli.path("pw")])
        #expect(merge.status == 7, "\(merge.stderr)")
        #expect(merge.stderr.contains("THEIRS (the other copy) at \(cli.path("t.vault"))") && merge.stderr.contains("whose public key was retired here")
                && merge.stderr.contains("nothing was written") && merge.stderr.contains("--accept-rotation")
                && !merge.stderr.contains("vaultfile merge YOUR-COPY"), "no hint to merge it: \(merge.stderr)")
        #expect(try cli.read("own.vault") == own, "nothing written")
    }

    @Test func test_info_showsTheLineageAndAGenerationAbove2To63Unsigned() throws {
        let cli = try PlantedCopyCLITests().sharedVault(); defer { cli.directory.remove() }
        let before = try run(cli, ["info", "--vault", cli.path("t.vault")])
        #expect(before.text.contains("lineage:     no rotation ran here"), "\(before.text)")
        try run(cli, ["slot", "rm", "alice"] + cli.unlock())
        let info = try run(cli, ["info", "--vault", cli.path("t.vault")])
        #expect(info.text.contains("lineage:     a rotation ran here") && info.text.contains("judged when it is opened"), "\(info.text)")
        try cli.craftGeneration("t.vault", to: 1 << 63, password: "owner-pw")
        let json = try run(cli, ["info", "--json", "--vault", cli.path("t.vault")])
        #expect(json.text.contains("\"generation\":9223372036854775808,") && json.text.contains("\"lineage\":\"judged_when_opened\""),
                "\(json.text)")
    }
}
