import Foundation
import TestSupport
import Testing
import VaultFormat

/// Post-quantum keys as people name and see them (issue 41, the reviews' findings): one
/// `mlkem768x25519:` fingerprint everywhere, `slot rm`/`slot label` by recipient or fingerprint,
/// `slot list`'s short recipient, and keys refused before a slot is wrapped to them.
@Suite struct PostQuantumKeysCLITests {
    static func pqKey(_ cli: CLI, _ name: String) throws -> String { try PostQuantumCLITests.pqKey(cli, name) }

    /// The `mlkem768x25519:` fingerprint of a recipient: 16 hex digits of its key's SHA-256.
    static func fingerprint(_ recipient: String) throws -> String {
        HybridSlot.fingerprint(of: try AgePQRecipient(parsing: recipient).publicKey.bytes)
    }

    // MARK: - Naming slots

    @Test func test_slotList_showsTheFingerprintAndACutRecipientTextAndTheWholeOneInJSON() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let recipient = try Self.pqKey(cli, "pq.txt")
        #expect(try cli.run(["slot", "add", "recipient", recipient, "--label", "quantum"] + cli.unlock()).status == 0)
        let listed = try cli.run(["slot", "list"] + cli.unlock())
        let row = listed.text.split(separator: "\n").first { $0.contains("quantum") }.map(String.init) ?? ""
        let fingerprint = try Self.fingerprint(recipient)
        #expect(row.contains(fingerprint) && row.contains("age1pq1…" + recipient.suffix(8)), "\(listed.text)")
        #expect(!listed.text.contains(recipient) && row.count < 200, "\(row)")
        let json = try JSONSerialization.jsonObject(with: Data(try cli.run(["slot", "list", "--json"] + cli.unlock()).stdout)) as? [[String: Any]] ?? []
        let slot = json.first { $0["kind"] as? String == "mlkem768x25519" }
        #expect(slot?["recipient"] as? String == recipient && slot?["fingerprint"] as? String == fingerprint)
    }

    @Test func test_slotLabelAndRm_nameAPostQuantumSlotByRecipientAndByFingerprint() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let first = try Self.pqKey(cli, "pq1.txt"), second = try Self.pqKey(cli, "pq2.txt")
        for recipient in [first, second] { #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock()).status == 0) }
        let labelled = try cli.run(["slot", "label", first, "alice"] + cli.unlock())
        #expect(labelled.status == 0, "\(labelled.stderr)")
        #expect(try cli.run(["slot", "list"] + cli.unlock()).text.split(separator: "\n").contains { $0.contains("alice") && $0.contains(first.suffix(8)) })
        let secondFingerprint = try Self.fingerprint(second)
        let removed = try cli.run(["slot", "rm", secondFingerprint] + cli.unlock())
        #expect(removed.status == 0 && removed.stderr.contains(secondFingerprint), "\(removed.stderr)")
        #expect(try cli.run(["get", "db", "--vault", cli.path("t.vault"), "--identity", cli.path("pq2.txt")]).status == 3)
        let byKey = try cli.run(["slot", "rm", first] + cli.unlock())
        #expect(byKey.status == 0, "\(byKey.stderr)")
        #expect(!(try cli.run(["slot", "list"] + cli.unlock()).text.contains("mlkem768x25519")))
    }

    @Test func test_slotLabelAndRm_takeTheCutRecipientSlotListShows() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let recipient = try Self.pqKey(cli, "pq.txt")
        #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock()).status == 0)
        let shown = "age1pq1…" + recipient.suffix(8)
        #expect(try cli.run(["slot", "list"] + cli.unlock()).text.contains(shown))
        let labelled = try cli.run(["slot", "label", shown, "quantum"] + cli.unlock())
        #expect(labelled.status == 0, "\(labelled.stderr)")
        let unknown = try cli.run(["slot", "rm", "age1pq1…zzzzzzzz"] + cli.unlock())
        #expect(unknown.status == 1 && unknown.stderr.contains("age1pq1…zzzzzzzz") && !unknown.stderr.contains("Bech32"), "\(unknown.stderr)")
        let removed = try cli.run(["slot", "rm", shown] + cli.unlock())
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!(try cli.run(["slot", "list"] + cli.unlock()).text.contains("mlkem768x25519")))
    }

    @Test func test_slotRm_ofAPostQuantumKeyNoSlotHoldsIsStatus1AndABrokenOneStatus2() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let stranger = try Self.pqKey(cli, "pq.txt")
        let missing = try cli.run(["slot", "rm", stranger] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("no keyslot"), "\(missing.stderr)")
        let unknownPrint = try cli.run(["slot", "rm", try Self.fingerprint(stranger)] + cli.unlock())
        #expect(unknownPrint.status == 1, "\(unknownPrint.stderr)")
        let broken = String(stranger.dropLast()) + (stranger.last == "q" ? "p" : "q")
        let refused = try cli.run(["slot", "rm", broken] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("checksum") && !refused.stderr.contains("longer than 90"), "\(refused.stderr)")
    }

    // MARK: - Keys refused before a slot is wrapped to them

    @Test(arguments: [("pq-recipient-t-hat-zero.txt", "all zeros"), ("pq-recipient-x25519-high-bit.txt", "not canonical")])
    func test_initSlotAddAndShare_refuseADegenerateKeyNamingWhy(file: String, reason: String) throws {
        let cli = try CLI.withVault(["db": "secret"])
        let text = try String(contentsOf: KeyCorpusCLITests.folder.appendingPathComponent(file), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let made = try cli.run(["init", "--vault", cli.path("q.vault"), "--recipient", text])
        #expect(made.status == 2 && made.stderr.contains(reason) && !FileManager.default.fileExists(atPath: cli.path("q.vault")), "\(made.stderr)")
        let added = try cli.run(["slot", "add", "recipient", text] + cli.unlock())
        #expect(added.status == 2 && added.stderr.contains(reason), "\(added.stderr)")
        let shared = try cli.run(["share", "db", "--recipient", text, "--out", cli.path("o.age")] + cli.unlock())
        #expect(shared.status != 0 && shared.stderr.contains(reason) && !FileManager.default.fileExists(atPath: cli.path("o.age")), "\(shared.stderr)")
    }

    // MARK: - What the commands say

    @Test func test_slotAddAllowClassical_warnsThatTheVaultIsNoLongerPostQuantum() throws {
        let cli = try CLI.withVault(["db": "secret"])
        #expect(try cli.run(["slot", "add", "recipient", try Self.pqKey(cli, "pq.txt")] + cli.unlock()).status == 0)
        let before = try jsonObject(try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).stdout)
        #expect(before["post_quantum"] as? String == "post-quantum against outsiders")
        let classical = AgeIdentity.generate().recipient.description
        let added = try cli.run(["slot", "add", "recipient", classical, "--allow-classical"] + cli.unlock())
        #expect(added.status == 0 && added.stderr.contains("was post-quantum against outsiders and no longer is"), "\(added.stderr)")
        let after = try jsonObject(try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).stdout)
        #expect(after["post_quantum"] as? String == "no")
        let again = try cli.run(["slot", "add", "recipient", AgeIdentity.generate().recipient.description, "--allow-classical"] + cli.unlock())
        #expect(again.status == 0 && !again.stderr.contains("no longer is"), "a classical vault says nothing: \(again.stderr)")
    }

    @Test func test_share_toAPostQuantumRecipientSaysOlderAgeCannotOpenIt() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let shared = try cli.run(["share", "db", "--recipient", try Self.pqKey(cli, "pq.txt"), "--out", cli.path("o.age")] + cli.unlock())
        #expect(shared.status == 0 && shared.stderr.contains("age 1.3 or later") && shared.stderr.contains("1.1.1"), "\(shared.stderr)")
        let classical = try cli.run(["share", "db", "--recipient", AgeIdentity.generate().recipient.description, "--out", cli.path("c.age")] + cli.unlock())
        #expect(classical.status == 0 && !classical.stderr.contains("age 1.3"), "\(classical.stderr)")
    }

    @Test func test_ageIdentityLend_ofAPostQuantumIdentitySaysItCannotBeLent() throws {
        let cli = try CLI.withVault([:])
        _ = try Self.pqKey(cli, "pq.txt")
        #expect(try cli.run(["set", "age/pq"] + cli.unlock(), stdin: try cli.read("pq.txt")).status == 0)
        let lent = try cli.run(["age-identity", "age/pq", "--lend"] + cli.unlock())
        #expect(lent.status == 2 && lent.stderr.contains("post-quantum identities cannot be lent") && !lent.stderr.contains("not an age identity"), "\(lent.stderr)")
        #expect(!lent.stderr.contains("AGE-SECRET-KEY-PQ-1Q") && lent.stdout.isEmpty)
    }
}
