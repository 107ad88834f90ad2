import Foundation
import SecureMemory
import Testing
@testable import VaultFile
@testable import VaultFormat

/// One slot per key: a recipient, ssh key or keyfile that already opens the vault is not given a
/// second slot, since `slot rm` of one would leave its holder in through the other (a cold user's
/// finding: re-running `slot add recipients-file` after the team file grew doubled every member).
@Suite struct KeyslotRepeatCLITests {
    private static let ssh = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea carol@laptop"

    /// The slots `slot list` shows (its lines but the heading).
    private func slotCount(_ cli: CLI) throws -> Int {
        try cli.run(["slot", "list"] + cli.unlock()).text.split(separator: "\n").count - 1
    }

    // MARK: - slot add

    @Test func test_slotAdd_aKeyASlotAlreadyHoldsIsRefusedNamingThatSlot() throws {
        let (cli, alice) = try KeyslotCLITests.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", alice, "--label", "alice"] + cli.unlock()).status == 0)
        let again = try cli.run(["slot", "add", "recipient", alice, "--label", "alice-2"] + cli.unlock())
        #expect(again.status == 2, "\(again.stderr)")
        #expect(again.stderr.contains("keyslot 1 (recipient, alice) already holds \(alice)"), "\(again.stderr)")
        // The same ssh key under another comment is the same key.
        #expect(try cli.run(["slot", "add", "recipient", Self.ssh] + cli.unlock()).status == 0)
        let renamed = try cli.run(["slot", "add", "recipient", Self.ssh.replacingOccurrences(of: "carol@laptop", with: "carol@desktop")] + cli.unlock())
        #expect(renamed.status == 2 && renamed.stderr.contains("keyslot 2 (ssh-ed25519, carol@laptop) already holds SHA256:"), "\(renamed.stderr)")
        // A keyfile is salted in its slot: found by deriving under each keyfile slot's salt.
        #expect(try cli.run(["keygen", "--keyfile", cli.path("ci.key")]).status == 0)
        #expect(try cli.run(["slot", "add", "keyfile", cli.path("ci.key"), "--label", "CI"] + cli.unlock()).status == 0)
        let keyfile = try cli.run(["slot", "add", "keyfile", cli.path("ci.key")] + cli.unlock())
        #expect(keyfile.status == 2 && keyfile.stderr.contains("keyslot 3 (keyfile, CI) already holds \(cli.path("ci.key"))"), "\(keyfile.stderr)")
        #expect(try slotCount(cli) == 4, "nothing was added by the refusals")
    }

    @Test func test_slotAddRecipientsFile_skipsKeysThatHaveASlotAndSaysSo() throws {
        let (cli, alice) = try KeyslotCLITests.vaultAndIdentity(); defer { cli.directory.remove() }
        let bob = try cli.run(["keygen", "-o", cli.path("bob.txt")]).text.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["slot", "add", "recipient", alice] + cli.unlock()).status == 0)
        // Alice already in, Bob twice in the file.
        try cli.write("team.txt", Array("\(alice)\n\(bob)\n\(bob)\n".utf8))
        let add = try cli.run(["slot", "add", "recipients-file", cli.path("team.txt")] + cli.unlock())
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stderr.contains("skipped \(alice): keyslot 1 (recipient) already holds it"), "\(add.stderr)")
        #expect(add.stderr.contains("skipped \(bob): keyslot 2 (recipient) already holds it"), "\(add.stderr)")
        #expect(add.stderr.contains("added keyslot 2"), "\(add.stderr)")
        #expect(try slotCount(cli) == 3)
        // Run again, as after an edit of the team file: nothing to add, nothing written.
        let before = try cli.read("t.vault")
        let rerun = try cli.run(["slot", "add", "recipients-file", cli.path("team.txt")] + cli.unlock())
        #expect(rerun.status == 0 && rerun.stderr.contains("no keyslot added"), "\(rerun.stderr)")
        #expect(try cli.read("t.vault") == before)
        // Removing Bob's one slot removes Bob; the message names his key and the ids that moved.
        let rm = try cli.run(["slot", "rm", "1"] + cli.unlock())
        #expect(rm.stderr.contains("removed keyslot 1 (recipient, \(alice)) from"), "\(rm.stderr)")
        #expect(rm.stderr.contains("the keyslots after it moved down one id (2 is now 1)"), "\(rm.stderr)")
        #expect(try cli.run(["slot", "rm", "1"] + cli.unlock()).status == 0)
        let bobTries = try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path("bob.txt")])
        #expect(bobTries.status == 3, "\(bobTries.stderr)")
    }

    @Test func test_slotRm_namesEveryIdThatMoved() throws {
        let (cli, alice) = try KeyslotCLITests.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", alice] + cli.unlock()).status == 0)
        for name in ["b", "c", "d"] {
            let key = try cli.run(["keygen", "-o", cli.path("\(name).txt")]).text.trimmingCharacters(in: .newlines)
            #expect(try cli.run(["slot", "add", "recipient", key] + cli.unlock()).status == 0)
        }
        #expect(try slotCount(cli) == 5)
        let one = try cli.run(["slot", "rm", "1"] + cli.unlock())
        #expect(one.status == 0 && one.stderr.contains("the keyslots after it moved down one id (2–4 are now 1–3)"), "\(one.stderr)")
        let two = try cli.run(["slot", "rm", "1", "2"] + cli.unlock())
        #expect(two.status == 0 && two.stderr.contains("the keyslots after them moved down (3 is now 1)"), "\(two.stderr)")
        let last = try cli.run(["slot", "rm", "1"] + cli.unlock())
        #expect(last.status == 0 && !last.stderr.contains("moved down"), "the last slot: nothing moved: \(last.stderr)")
    }

    // MARK: - init

    @Test func test_init_aRecipientGivenTwiceGetsOneSlot() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let alice = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
        try cli.write("team.txt", Array("\(alice)\n\(Self.ssh)\n".utf8))
        let created = try cli.run(["init", "--vault", cli.path("t.vault"), "--recipient", alice, "--recipients-file", cli.path("team.txt")])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stderr.contains("skipped a repeat of \(alice)"), "\(created.stderr)")
        #expect(created.stderr.contains("keyslots: recipient, ssh-ed25519"), "\(created.stderr)")
    }

    // MARK: - slot rm of a vault made before

    @Test func test_slotRm_warnsWhenAnotherSlotHoldsTheRemovedKey() throws {
        let (cli, alice) = try KeyslotCLITests.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", alice, "--label", "alice"] + cli.unlock()).status == 0)
        // Alice's key in a second slot, as an older vaultfile let `slot add` make it.
        try VaultStore(path: cli.path("t.vault")).update(password: SecureBytes(copying: Array("pw".utf8)), limits: .defaults) { unlocked in
            let (slot, publicKey) = try UnlockedVault.makeSlot(.recipient(try AgeRecipient(parsing: alice)), fileKey: unlocked.fileKey,
                                                               vaultID: unlocked.header.vaultID)
            unlocked.header.keyslots.append(slot)
            unlocked.slotMetadata!.append(SlotMetadata(type: slot.typeByte, label: "twin", publicKey: publicKey, added: 0))
            unlocked.headerChanged = true
        }
        let rm = try cli.run(["slot", "rm", "alice"] + cli.unlock())
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(rm.stderr.contains("keyslot 1 (recipient, twin) holds the same key as the removed slot, so \(alice) still opens"), "\(rm.stderr)")
        #expect(rm.stderr.contains("'vaultfile slot rm 1'"), "\(rm.stderr)")
    }
}
