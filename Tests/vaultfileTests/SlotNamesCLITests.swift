import Foundation
import TestSupport
import Testing

/// Slots in a team (issue 47): `slot rm` and `slot label` name a slot by id, key or label (a
/// unique prefix), several slots go in one rotation, a recipients file's comment lines label its
/// members, and a label changes without a rotation while a signed vault's seals stay trusted.
@Suite struct SlotNamesCLITests {
    private static let ssh = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea carol@laptop"

    /// `slot list --json` of `t.vault`, as (id, kind, label, fingerprint) rows.
    private func slots(_ cli: CLI) throws -> [(id: Int, kind: String, label: String, key: String)] {
        let result = try cli.run(["slot", "list", "--json"] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
        return rows.map { ($0["id"] as? Int ?? -1, $0["kind"] as? String ?? "", $0["label"] as? String ?? "", $0["fingerprint"] as? String ?? "") }
    }

    /// A vault (password slot 0) with a recipient per name in `members`, labelled as given; their `age1…` keys.
    private func team(_ members: [String]) throws -> (CLI, [String]) {
        let (cli, _) = try KeyslotCLITests.vaultAndIdentity()
        var keys: [String] = []
        for member in members {
            let key = try cli.run(["keygen", "-o", cli.path(member + ".txt")]).text.trimmingCharacters(in: .newlines)
            let added = try cli.run(["slot", "add", "recipient", key, "--label", member] + cli.unlock())
            #expect(added.status == 0, "\(added.stderr)")
            keys.append(key)
        }
        return (cli, keys)
    }

    /// Whether `member`'s identity opens `t.vault`.
    private func opens(_ cli: CLI, _ member: String) throws -> Bool {
        try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path(member + ".txt")]).status == 0
    }

    // MARK: - slot rm by key and label prefix

    @Test func test_slotRm_acceptsARecipientAnSSHKeyLineAndAUniqueLabelPrefix() throws {
        let (cli, keys) = try team(["ann-laptop", "bob"]); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", Self.ssh] + cli.unlock()).status == 0)
        // By bob's age1… recipient.
        let byKey = try cli.run(["slot", "rm", keys[1]] + cli.unlock())
        #expect(byKey.status == 0 && byKey.stderr.contains("removed keyslot 2 (recipient, bob, \(keys[1]))"), "\(byKey.stderr)")
        #expect(try !opens(cli, "bob") && opens(cli, "ann-laptop"))
        // By the ssh key line, under another comment: the key is what counts.
        let bySSH = try cli.run(["slot", "rm", Self.ssh.replacingOccurrences(of: "carol@laptop", with: "carol@desktop")] + cli.unlock())
        #expect(bySSH.status == 0 && bySSH.stderr.contains("removed keyslot 2 (ssh-ed25519, carol@laptop, SHA256:"), "\(bySSH.stderr)")
        // By a prefix of one label.
        let byPrefix = try cli.run(["slot", "rm", "ann-l"] + cli.unlock())
        #expect(byPrefix.status == 0 && byPrefix.stderr.contains("removed keyslot 1 (recipient, ann-laptop"), "\(byPrefix.stderr)")
        #expect(try slots(cli).map(\.kind) == ["password"])
    }

    @Test func test_slotRm_byFingerprintAsSlotListShowsIt() throws {
        let (cli, _) = try team(["ann"]); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", Self.ssh] + cli.unlock()).status == 0)
        let fingerprint = try slots(cli).first { $0.kind == "ssh-ed25519" }?.key ?? ""
        #expect(fingerprint.hasPrefix("SHA256:"))
        let removed = try cli.run(["slot", "rm", fingerprint] + cli.unlock())
        #expect(removed.status == 0 && removed.stderr.contains("removed keyslot 2 (ssh-ed25519"), "\(removed.stderr)")
    }

    @Test func test_slotRm_refusesAnAmbiguousPrefixListingTheCandidatesAndChangesNothing() throws {
        let (cli, _) = try team(["bob-laptop", "bob-phone"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let ambiguous = try cli.run(["slot", "rm", "bob"] + cli.unlock())
        #expect(ambiguous.status == 2, "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("'bob' names 2 keyslots: 1 (recipient, bob-laptop), 2 (recipient, bob-phone)"), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("hint:") && ambiguous.stderr.contains("longer label"), "\(ambiguous.stderr)")
        #expect(try cli.read("t.vault") == before, "nothing was written")
        // A key no slot holds is not found (exit 1); a malformed age1… is bad input (exit 2); nothing written either way.
        let stranger = try cli.run(["keygen", "-o", cli.path("stranger.txt")]).text.trimmingCharacters(in: .newlines)
        let notHeld = try cli.run(["slot", "rm", stranger] + cli.unlock())
        #expect(notHeld.status == 1 && notHeld.stderr.contains("no keyslot with the id, key or label"), "\(notHeld.stderr)")
        #expect(try cli.run(["slot", "rm", "age1notakey"] + cli.unlock()).status == 2)
        // One of several names unknown: none is removed.
        #expect(try cli.run(["slot", "rm", "bob-laptop", "nobody"] + cli.unlock()).status == 1)
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_slotRm_aWholeLabelWinsOverLongerLabelsItPrefixes() throws {
        let (cli, _) = try team(["bob", "bobby"]); defer { cli.directory.remove() }
        let removed = try cli.run(["slot", "rm", "bob"] + cli.unlock())
        #expect(removed.status == 0 && removed.stderr.contains("removed keyslot 1 (recipient, bob,"), "\(removed.stderr)")
        #expect(try slots(cli).map(\.label) == ["", "bobby"])
    }

    // MARK: - slot rm of several

    @Test func test_slotRm_ofSeveralSlotsRemovesExactlyTheOnesNamedInOneRotation() throws {
        let (cli, keys) = try team(["a", "b", "c", "d"]); defer { cli.directory.remove() }
        let generation = { () throws -> Int in
            (try jsonObject(cli.run(["info", "--json", "--vault", cli.path("t.vault")]).stdout))["generation"] as? Int ?? -1
        }
        let before = try generation()
        // Ids as listed before the command: 1 (a) and 3 (c), not the ids after a first removal.
        let removed = try cli.run(["slot", "rm", "1", "3", "c"] + cli.unlock())
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stderr.components(separatedBy: "the file key was rotated").count == 2, "one rotation: \(removed.stderr)")
        #expect(removed.stderr.contains("removed keyslot 1 (recipient, a") && removed.stderr.contains("removed keyslot 3 (recipient, c"))
        #expect(try generation() == before + 1)
        let left = try slots(cli)
        #expect(left.map(\.label) == ["", "b", "d"] && Array(left.map(\.key).dropFirst()) == [keys[1], keys[3]], "\(left)")
        #expect(try !opens(cli, "a") && opens(cli, "b") && !opens(cli, "c") && opens(cli, "d"))
    }

    // MARK: - Labels from a recipients file

    @Test func test_slotAddRecipientsFile_takesLabelsFromTheCommentLineBeforeEachRecipient() throws {
        let (cli, _) = try KeyslotCLITests.vaultAndIdentity(); defer { cli.directory.remove() }
        var keys: [String: String] = [:]
        for member in ["amy", "bob", "dave", "erin"] {
            keys[member] = try cli.run(["keygen", "-o", cli.path(member + ".txt")]).text.trimmingCharacters(in: .newlines)
        }
        let long = String(repeating: "é", count: 40)
        let file = """
            # The team's recipients

            # Amy Example
            \(keys["amy"]!)
            # an older comment
            ## Bob (laptop)\t2024
            \(keys["bob"]!)
            \(Self.ssh)
            # dave, far away

            \(keys["dave"]!)
            # \(long)
            \(keys["erin"]!)
            """
        try cli.write("team.txt", Array((file + "\n").utf8))
        let added = try cli.run(["slot", "add", "recipients-file", cli.path("team.txt")] + cli.unlock())
        #expect(added.status == 0, "\(added.stderr)")
        let labels = try slots(cli).map(\.label)
        // The comment right before a recipient; an ssh key's own comment without one; none after a blank line;
        // a long comment cut to 64 bytes at a character boundary (32 two-byte characters).
        #expect(labels == ["", "Amy Example", "Bob (laptop) 2024", "carol@laptop", "", String(repeating: "é", count: 32)], "\(labels)")
        // init takes them too; --label still gives every slot the same label.
        let created = try cli.run(["init", "--vault", cli.path("u.vault"), "--recipients-file", cli.path("team.txt")])
        #expect(created.status == 0, "\(created.stderr)")
        let listed = try cli.run(["slot", "list", "--vault", cli.path("u.vault"), "--identity", cli.path("amy.txt")]).text
        #expect(listed.contains("Amy Example") && listed.contains("Bob (laptop) 2024"), "\(listed)")
    }

    // MARK: - slot label

    @Test func test_slotLabel_renamesWithoutRotatingAndASignedVaultStaysTrusted() throws {
        let made = try TrustTeam.make(); let cli = made.cli; defer { cli.directory.remove() }
        let alice = TrustTeam.as_(cli, "alice")
        let info = { () throws -> [String: Any] in try jsonObject(cli.run(["info", "--json", "--vault", cli.path("t.vault")]).stdout) }
        let before = try info()
        // Bob's slot (id 2) named by his key, renamed by alice.
        let renamed = try TrustTeam.run(cli, ["slot", "label", try TrustTeam.recipient(cli, "bob"), "Bob Builder"] + alice)
        #expect(renamed.stderr.contains("keyslot 2 of") && renamed.stderr.contains("now has 'Bob Builder'") && renamed.stderr.contains("file key was kept"),
                "\(renamed.stderr)")
        let listed = try TrustTeam.run(cli, ["slot", "list", "--json"] + alice).text
        #expect(listed.contains("\"Bob Builder\""), "\(listed)")
        // One seal, no rotation (the generation moved by one); every member's machine takes the relabelled copy
        // (the new attestation verifies), reading and writing, and a machine that first sees it pins it.
        #expect((try info())["generation"] as? Int == (before["generation"] as? Int ?? -9) + 1)
        let bobGet = try TrustTeam.run(cli, ["get", "db/password"] + TrustTeam.as_(cli, "bob"), on: "bob")
        #expect(bobGet.text == "s3cret" && !bobGet.stderr.contains("trust"), "\(bobGet.stderr)")
        let bobSet = try TrustTeam.run(cli, ["set", "db/user"] + TrustTeam.as_(cli, "bob"), stdin: "admin", on: "bob")
        #expect(!bobSet.stderr.contains("not trusted"), "\(bobSet.stderr)")
        let mallorysFirst = try TrustTeam.run(cli, ["get", "db/user"] + TrustTeam.as_(cli, "mallory"), on: "mallory")
        #expect(mallorysFirst.text == "admin")
        // Relabelling by a label prefix, then removing the label.
        #expect(try TrustTeam.run(cli, ["slot", "label", "Bob B", ""] + alice).stderr.contains("now has no label (it had 'Bob Builder')"))
    }

    @Test func test_slotLabel_refusesBadLabelsUnknownSlotsAndAFormat10Vault() throws {
        let (cli, _) = try team(["ann"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        #expect(try cli.run(["slot", "label", "1", "tab\there"] + cli.unlock()).status == 64)
        #expect(try cli.run(["slot", "label", "1", String(repeating: "x", count: 65)] + cli.unlock()).status == 64)
        #expect(try cli.run(["slot", "label", "nobody", "x"] + cli.unlock()).status == 1)
        // The same label again writes nothing.
        let same = try cli.run(["slot", "label", "ann", "ann"] + cli.unlock())
        #expect(same.status == 0 && same.stderr.contains("labelled 'ann' already; nothing was written"), "\(same.stderr)")
        #expect(try cli.read("t.vault") == before)
        // A 1.0 vault has no labels, and is not upgraded by a label.
        let old = try CLI(); defer { old.directory.remove() }
        try old.initVault()
        let refused = try old.run(["slot", "label", "0", "me"] + old.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("format 1.0 keeps no slot labels"), "\(refused.stderr)")
    }
}
