import Foundation
import TestSupport
import Testing

/// Issue 40, the members a machine trusts, through the real binary: a signed team vault (two age
/// members, a password, a keyfile); carol added by a member writes and bob, who saw neither seal,
/// reads and writes; a removed member's planted copy, an outsider's copy under the vault's id and a
/// relabelled metadata block are refused on write (exit 7, file unchanged) and warned about on
/// read; `exec` and `inject` refuse them; `--allow-untrusted` takes one for one command; `vaultfile
/// trust --yes` pins; older fixtures open and stay unsigned.
@Suite struct TrustCLITests {
    /// The team: `t.vault` with a password (`pw`), alice and bob (age identities `alice.txt`,
    /// `bob.txt`), mallory (`mallory.txt`) and a keyfile (`team.key`); bob's machine (`bob-state`)
    /// has opened it once. Runs are on alice's machine (the test's state folder) unless `as` names another.
    private func team(inGit: Bool = false) throws -> CLI {
        let made = try TrustTeam.make(members: ["alice", "bob", "carol", "mallory", "eve"], inGit: inGit)
        #expect(made.firstSet.stderr.isEmpty, "init pinned the members on the creator's machine: \(made.firstSet.stderr)")
        #expect(made.bobsFirst.stderr.contains("seen here for the first time") && made.bobsFirst.stderr.contains("pinned"), "\(made.bobsFirst.stderr)")
        #expect(try run(made.cli, ["get", "db/password"] + as_(made.cli, "bob"), on: "bob").stderr.isEmpty, "the notice is shown once")
        return made.cli
    }

    private func recipient(_ cli: CLI, _ member: String) throws -> String { try TrustTeam.recipient(cli, member) }

    /// The unlock options of `member` (an age identity) on `vault`.
    private func as_(_ cli: CLI, _ member: String, vault: String = "t.vault") -> [String] { TrustTeam.as_(cli, member, vault: vault) }

    /// Runs `arguments` on the machine of `on` (its own state folder; nil: the test's) and expects success.
    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], stdin: String = "", on machine: String? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try TrustTeam.run(cli, arguments, stdin: stdin, on: machine, sourceLocation: sourceLocation)
    }

    /// On bob's machine, the copy at t.vault: every write exits 7 and leaves it as it was, `exec` and
    /// `inject` exit 7, a read goes on with a warning saying `reason`.
    private func expectUntrusted(_ cli: CLI, saying reason: String, extra: [String: String] = [:]) throws {
        let bob = as_(cli, "bob")
        var environment = extra
        environment["VAULTFILE_STATE_DIR"] = cli.path("bob-state")
        let copy = try cli.read("t.vault")
        for write in [["set", "db/password"], ["slot", "add", "recovery"], ["rekey"]] {
            let result = try cli.run(write + bob, stdin: Array("new".utf8), extra: environment)
            #expect(result.status == 7, "\(write): \(result.stderr)")
            #expect(result.stderr.contains("nothing was written"), "\(write): \(result.stderr)")
            #expect(try cli.read("t.vault") == copy, "\(write): the file is unchanged")
        }
        let exec = try cli.run(["exec"] + bob + ["--", "/bin/sh", "-c", "echo ran"], extra: environment)
        #expect(exec.status == 7 && exec.text.isEmpty && exec.stderr.contains("not trusted"), "\(exec.stderr)")
        let inject = try cli.run(["inject"] + bob, stdin: Array("x={{ db/password }}".utf8), extra: environment)
        #expect(inject.status == 7 && inject.text.isEmpty, "\(inject.stderr)")
        let read = try cli.run(["list"] + bob, extra: environment)
        #expect(read.status == 0 && read.stderr.contains("not trusted") && read.stderr.contains(reason), "\(read.stderr)")
        #expect(read.stderr.contains("--allow-untrusted"), "\(read.stderr)")
    }

    // MARK: - Members

    @Test func test_set_carolAddedByAMemberWritesAndBobWhoSawNeitherSealWrites() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try run(cli, ["slot", "add", "recipient", try recipient(cli, "carol"), "--label", "carol"] + as_(cli, "alice"))
        try run(cli, ["set", "carol/note"] + as_(cli, "carol"), stdin: "from carol", on: "carol")
        let read = try run(cli, ["get", "carol/note"] + as_(cli, "bob"), on: "bob")
        #expect(read.text == "from carol" && read.stderr.isEmpty, "\(read.stderr)")
        let write = try run(cli, ["set", "bob/note"] + as_(cli, "bob"), stdin: "from bob", on: "bob")
        #expect(write.stderr.isEmpty, "\(write.stderr)")
        // The password and the keyfile sign too.
        try run(cli, ["set", "pw/note", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw")], stdin: "p", on: "bob")
        try run(cli, ["set", "kf/note", "--vault", cli.path("t.vault"), "--keyfile", cli.path("team.key")], stdin: "k", on: "bob")
        #expect(try cli.isSigned("t.vault"))
    }

    // MARK: - Copies no member wrote

    @Test(arguments: [false, true])
    func test_set_onARemovedMembersPlantedCopyExits7(inGit: Bool) throws {
        let cli = try team(inGit: inGit); defer { cli.directory.remove() }
        try cli.write("mallory.vault", try cli.read("t.vault"))
        try run(cli, ["slot", "rm", "3"] + as_(cli, "alice"))
        let genuine = try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob")
        #expect(genuine.stderr.isEmpty, "bob learns the removal from the copy after it: \(genuine.stderr)")
        for index in 0..<3 { try run(cli, ["set", "planted/\(index)"] + as_(cli, "mallory", vault: "mallory.vault"), stdin: "x", on: "mallory") }
        try cli.write("t.vault", try cli.read("mallory.vault"))
        try expectUntrusted(cli, saying: "a key removed from the vault")
    }

    @Test func test_set_onAnOutsidersCopyUnderTheVaultsIDExits7EvenWithTheCheckOff() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.outsiderCopy(of: "t.vault", to: "eve.vault", recipients: [try recipient(cli, "alice"), try recipient(cli, "bob")])
        try cli.write("t.vault", try cli.read("eve.vault"))
        try expectUntrusted(cli, saying: "not a member pinned on this machine")
        try expectUntrusted(cli, saying: "not a member pinned on this machine", extra: ["VAULTFILE_ROLLBACK_CHECK": "off"])
    }

    @Test func test_set_onARelabelledMetadataBlockExits7() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.write("mallory.vault", try cli.read("t.vault"))
        try run(cli, ["slot", "rm", "3"] + as_(cli, "alice"))
        try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob")
        // Mallory's slot, relabelled as bob's, so that a rekey would seem to wrap the key to him.
        try cli.relabelledCopy(of: "mallory.vault", to: "relabelled.vault", slot: 3, label: "bob", identityFile: "mallory.txt")
        try cli.write("t.vault", try cli.read("relabelled.vault"))
        try expectUntrusted(cli, saying: "a key removed from the vault")
    }

    // MARK: - Taking a copy

    @Test func test_allowUntrusted_takesACopyForOneCommandAndPinsNothing() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.outsiderCopy(of: "t.vault", to: "eve.vault", recipients: [try recipient(cli, "alice"), try recipient(cli, "bob")])
        try cli.write("t.vault", try cli.read("eve.vault"))
        let exec = try run(cli, ["exec", "--allow-untrusted"] + as_(cli, "bob") + ["--", "/bin/sh", "-c", "echo ran"], on: "bob")
        #expect(exec.text == "ran\n" && exec.stderr.contains("--allow-untrusted"), "\(exec.stderr)")
        try run(cli, ["set", "x", "--allow-untrusted"] + as_(cli, "bob"), stdin: "y", on: "bob")
        let next = try cli.run(["set", "x"] + as_(cli, "bob"), stdin: Array("z".utf8), extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
        #expect(next.status == 7, "nothing was pinned: \(next.stderr)")
    }

    @Test func test_trust_showsTheSlotsAndPinsWithYesThenWritesPass() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.outsiderCopy(of: "t.vault", to: "eve.vault", recipients: [try recipient(cli, "alice"), try recipient(cli, "bob")])
        try cli.write("t.vault", try cli.read("eve.vault"))
        let declined = try cli.run(["trust"] + as_(cli, "bob"), extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
        #expect(declined.status == 1, "no terminal to ask: \(declined.stderr)")
        #expect(declined.text.contains("vault id: ") && declined.text.contains("signed by: x25519:") && declined.text.contains("not trusted:"))
        #expect(declined.text.contains(try recipient(cli, "bob")) && declined.text.contains("pinned") && declined.text.contains("changed (was x25519:"),
                "\(declined.text)")
        let pinned = try run(cli, ["trust", "--yes"] + as_(cli, "bob"), on: "bob")
        #expect(pinned.stderr.contains("pinned"), "\(pinned.stderr)")
        let write = try run(cli, ["set", "x"] + as_(cli, "bob"), stdin: "y", on: "bob")
        #expect(write.stderr.isEmpty, "\(write.stderr)")
        #expect(try run(cli, ["trust"] + as_(cli, "bob"), on: "bob").stderr.contains("trusted on this machine: nothing to pin"))
    }

    @Test func test_set_onAnotherVaultAtAPathIsRefusedUntilTrusted() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try run(cli, ["init", "--vault", cli.path("other.vault"), "--password-file", cli.path("pw"), "--recipient", try recipient(cli, "bob")] + CLI.fastKDF)
        try run(cli, ["set", "k", "--vault", cli.path("other.vault"), "--password-file", cli.path("pw")], stdin: "v")
        try cli.write("t.vault", try cli.read("other.vault"))
        let set = try cli.run(["set", "k"] + as_(cli, "bob"), stdin: Array("w".utf8), extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
        #expect(set.status == 7 && set.stderr.contains("held another vault"), "\(set.stderr)")
        try run(cli, ["trust", "--yes"] + as_(cli, "bob"), on: "bob")
        try run(cli, ["set", "k"] + as_(cli, "bob"), stdin: "w", on: "bob")
    }

    // MARK: - Readmission

    @Test func test_slotAdd_ofARemovedKeyNeedsReadmit() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try run(cli, ["slot", "rm", "3"] + as_(cli, "alice"))
        try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob")
        let mallory = try recipient(cli, "mallory")
        let refused = try cli.run(["slot", "add", "recipient", mallory] + as_(cli, "alice"))
        #expect(refused.status == 2 && refused.stderr.contains("was removed") && refused.stderr.contains("--readmit"), "\(refused.stderr)")
        let readmitted = try run(cli, ["slot", "add", "recipient", mallory, "--readmit"] + as_(cli, "alice"))
        #expect(readmitted.stderr.contains("added keyslot"), "\(readmitted.stderr)")
        let next = try run(cli, ["set", "k"] + as_(cli, "alice"), stdin: "v")
        #expect(next.stderr.isEmpty, "the copy no longer records her removal, nor does alice's machine: \(next.stderr)")
        // Bob's machine learned the removal: it refuses the copy (the key lineage too) until a person confirms it there.
        let bob = try cli.run(["set", "k"] + as_(cli, "bob"), stdin: Array("w".utf8), extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
        #expect(bob.status == 7, "\(bob.stderr)")
        let list = try run(cli, ["list"] + as_(cli, "bob"), on: "bob")
        #expect(list.stderr.contains("a key removed from the vault"), "\(list.stderr)")
        try run(cli, ["trust", "--yes", "--readmit"] + as_(cli, "bob"), on: "bob")
        try run(cli, ["set", "k", "--accept-rotation"] + as_(cli, "bob"), stdin: "w", on: "bob")
    }

    // MARK: - What slot list and info say

    @Test func test_slotListAndInfo_sayWhoCanSignAndWhatIsPinnedHere() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try run(cli, ["slot", "add", "recipient", try recipient(cli, "carol"), "--label", "carol"] + as_(cli, "alice"))
        let list = try run(cli, ["slot", "list", "--json"] + as_(cli, "bob"), on: "bob")
        let slots = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        #expect(slots.allSatisfy { $0["can_sign"] as? Bool == true }, "\(slots)")
        // Carol, traced through alice's attestation, is pinned by this very open (the copy is accepted).
        #expect(slots.map { $0["pinned_here"] as? Bool } == [true, true, true, true, true, true], "\(slots)")
        let text = try run(cli, ["slot", "list"] + as_(cli, "bob"), on: "bob").text
        #expect(text.contains("SIGNS") && text.contains("HERE") && text.contains("pinned"), "\(text)")
        let info = try jsonObject(try run(cli, ["info", "--json", "--vault", cli.path("t.vault")], on: "bob").stdout)
        #expect(info["signed"] as? Bool == true && info["members_pinned"] as? Int == 6 && info["first_signed_generation"] as? Int == 2, "\(info)")
        let plain = try run(cli, ["info", "--vault", cli.path("t.vault")], on: "bob").text
        #expect(plain.contains("signed:      yes"), "\(plain)")
    }

    // MARK: - Merges

    @Test func test_merge_refusesAnUntrustedOrUnsignedSideNamingItUnlessAllowed() throws {
        let cli = try team(); defer { cli.directory.remove() }
        let members = [try recipient(cli, "alice"), try recipient(cli, "bob")]
        try cli.outsiderCopy(of: "t.vault", to: "eve.vault", recipients: members)
        try cli.outsiderCopy(of: "t.vault", to: "unsigned.vault", recipients: members, signed: false)
        #expect(try !cli.isSigned("unsigned.vault"))
        let bob = ["--identity", cli.path("bob.txt")], state = ["VAULTFILE_STATE_DIR": cli.path("bob-state")]
        let ours = try cli.read("t.vault")
        for side in ["eve.vault", "unsigned.vault"] {
            let merge = try cli.run(["merge", cli.path("t.vault"), cli.path(side)] + bob, extra: state)
            #expect(merge.status == 7 && merge.stderr.contains("THEIRS") && merge.stderr.contains(side) && merge.stderr.contains("not trusted"),
                    "\(side): \(merge.stderr)")
            #expect(try cli.read("t.vault") == ours, "\(side): nothing written")
        }
        #expect(try cli.run(["merge", cli.path("t.vault"), cli.path("unsigned.vault")] + bob, extra: state).stderr.contains("unsigned"))
        let taken = try run(cli, ["merge", "--allow-untrusted", cli.path("t.vault"), cli.path("eve.vault")] + bob, on: "bob")
        #expect(taken.stderr.contains("merged"), "\(taken.stderr)")
        #expect(try cli.isSigned("t.vault"), "the result is signed by the merging member")
        #expect(try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob").stderr.isEmpty, "bob's own merge is trusted")
    }

    // MARK: - Older vaults

    @Test func test_set_anOlderFixtureOpensAndStaysUnsigned() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        let fixture = ProjectPaths.root.appendingPathComponent("Fixtures/v1.2/history-keyslots.vault")
        try cli.write("old.vault", Array(try Data(contentsOf: fixture)))
        try cli.write("pw", Array("fixture 1.2 pässword".utf8))
        let unlock = ["--vault", cli.path("old.vault"), "--password-file", cli.path("pw")]
        let set = try run(cli, ["set", "new/entry"] + unlock, stdin: "v")
        #expect(set.stderr.isEmpty, "\(set.stderr)")
        #expect(try !cli.isSigned("old.vault"))
        #expect(try run(cli, ["get", "new/entry"] + unlock).text == "v")
        let records = try FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)
        #expect(!records.contains { $0.hasSuffix(".members") }, "an unsigned vault pins nobody: \(records)")
    }
}
