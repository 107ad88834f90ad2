import Foundation
import TestSupport
import Testing

/// Issue 40, what a new user met after `slot add --readmit` and in the hints of a refused write,
/// through the real binary: a readmit merged with a concurrent edit leaves the vault writable; on
/// another machine `vaultfile trust --yes` is enough to write to a readmitted copy (the key lineage
/// takes it too); the hints name the path as given and fit an unsigned copy.
@Suite struct TrustReadmitCLITests {
    private func team(inGit: Bool = false) throws -> CLI { try TrustTeam.make(inGit: inGit).cli }
    private func recipient(_ cli: CLI, _ member: String) throws -> String { try TrustTeam.recipient(cli, member) }
    private func as_(_ cli: CLI, _ member: String, vault: String = "t.vault") -> [String] { TrustTeam.as_(cli, member, vault: vault) }

    @discardableResult
    private func run(_ cli: CLI, _ arguments: [String], stdin: String = "", on machine: String? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try TrustTeam.run(cli, arguments, stdin: stdin, on: machine, sourceLocation: sourceLocation)
    }

    /// Runs `arguments` on bob's machine, whatever its exit status.
    private func bob(_ cli: CLI, _ arguments: [String], stdin: String = "") throws -> CLI.Result {
        try cli.run(arguments, stdin: Array(stdin.utf8), extra: ["VAULTFILE_STATE_DIR": cli.path("bob-state")])
    }

    /// Mallory removed by alice, the removal learned on bob's machine.
    private func removeMallory(_ cli: CLI) throws {
        try run(cli, ["slot", "rm", "3"] + as_(cli, "alice"))
        try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob")
    }

    // MARK: - A readmit merged with a concurrent edit

    @Test func test_merge_ofAReadmitWithAConcurrentEditLeavesTheVaultWritable() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try removeMallory(cli)
        try cli.write("bob.vault", try cli.read("t.vault"))
        try run(cli, ["slot", "add", "recipient", try recipient(cli, "mallory"), "--label", "mallory", "--readmit"] + as_(cli, "alice"))
        try run(cli, ["set", "e2"] + as_(cli, "bob", vault: "bob.vault"), stdin: "2", on: "bob")
        try run(cli, ["merge", cli.path("t.vault"), cli.path("bob.vault"), "--identity", cli.path("alice.txt")])
        let write = try run(cli, ["set", "e3"] + as_(cli, "alice"), stdin: "3")
        #expect(write.stderr.isEmpty, "the merge result records no removal of a key it holds: \(write.stderr)")
        #expect(try run(cli, ["get", "e2"] + as_(cli, "alice")).text == "2")
        // Bob's machine learned the removal: a person confirms the readmit there, then bob writes.
        #expect(try bob(cli, ["set", "e4"] + as_(cli, "bob"), stdin: "4").status == 7)
        #expect(try bob(cli, ["trust", "--yes"] + as_(cli, "bob")).status == 1, "a removed key held: trust asks for --readmit")
        try run(cli, ["trust", "--yes", "--readmit"] + as_(cli, "bob"), on: "bob")
        try run(cli, ["set", "e4"] + as_(cli, "bob"), stdin: "4", on: "bob")
    }

    // MARK: - A readmit on another machine

    @Test(arguments: [false, true])
    func test_trustReadmit_ofAReadmittedCopyLetsWritesThroughWithoutAcceptRotation(inGit: Bool) throws {
        let cli = try team(inGit: inGit); defer { cli.directory.remove() }
        try removeMallory(cli)
        try run(cli, ["slot", "add", "recipient", try recipient(cli, "mallory"), "--label", "mallory", "--readmit"] + as_(cli, "alice"))
        let refused = try bob(cli, ["set", "k"] + as_(cli, "bob"), stdin: "v")
        #expect(refused.status == 7, "\(refused.stderr)")
        let listed = try bob(cli, ["trust"] + as_(cli, "bob"))
        #expect(listed.text.contains("removed (by "), "\(listed.text)")
        // Always a person's word: nothing in a copy tells a readmit from a member's fork made before the removal.
        #expect(try bob(cli, ["trust", "--yes"] + as_(cli, "bob")).status == 1)
        try run(cli, ["trust", "--yes", "--readmit"] + as_(cli, "bob"), on: "bob")
        let write = try run(cli, ["set", "k"] + as_(cli, "bob"), stdin: "v", on: "bob")
        #expect(write.stderr.isEmpty, "\(write.stderr)")
        #expect(try run(cli, ["get", "k"] + as_(cli, "mallory"), on: "mallory").text == "v")
    }

    // MARK: - A removed member's planted copy

    /// Mallory, removed, plants on bob's machine a copy she signed (under the file key her removal superseded).
    private func plantedCopy(inGit: Bool) throws -> CLI {
        let cli = try team(inGit: inGit)
        try cli.write("mallory.vault", try cli.read("t.vault"))
        try removeMallory(cli)
        try cli.write("genuine.vault", try cli.read("t.vault"))
        try run(cli, ["set", "planted"] + as_(cli, "mallory", vault: "mallory.vault"), stdin: "x", on: "mallory")
        try cli.write("t.vault", try cli.read("mallory.vault"))
        return cli
    }

    @Test(arguments: [false, true])
    func test_set_onAPlantedCopyNamesTheMembersReasonAndNoRekey(inGit: Bool) throws {
        let cli = try plantedCopy(inGit: inGit); defer { cli.directory.remove() }
        for command in [["set", "k"], ["list"]] {
            let result = try bob(cli, command + as_(cli, "bob"), stdin: "v")
            #expect(result.stderr.contains("removed from the vault") && result.stderr.contains("git checkout HEAD -- "), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("rekey") && !result.stderr.contains("accept-rotation") && !result.stderr.contains("superseded"),
                    "\(command): \(result.stderr)")
        }
        let merge = try bob(cli, ["merge", cli.path("genuine.vault"), cli.path("t.vault"), "--identity", cli.path("bob.txt")])
        #expect(merge.status == 7 && merge.stderr.contains("not trusted") && !merge.stderr.contains("superseded"), "\(merge.stderr)")
        #expect(!merge.stderr.contains("accept-rotation") && !merge.stderr.contains("rekey"), "\(merge.stderr)")
    }

    @Test func test_trust_ofAPlantedCopyMarksTheRemovedSlotAndNeedsReadmit() throws {
        let cli = try plantedCopy(inGit: false); defer { cli.directory.remove() }
        let listed = try bob(cli, ["trust"] + as_(cli, "bob"))
        #expect(listed.text.contains("removed (by ") && listed.text.contains("at generation"), "\(listed.text)")
        #expect(!listed.text.contains("readmitted by"), "\(listed.text)")
        let refused = try bob(cli, ["trust", "--yes"] + as_(cli, "bob"))
        #expect(refused.status == 1 && refused.stderr.contains("--readmit") && refused.stderr.contains("not pinned"), "\(refused.stderr)")
        #expect(try bob(cli, ["set", "k"] + as_(cli, "bob"), stdin: "v").status == 7, "nothing was pinned")
        try run(cli, ["trust", "--yes", "--readmit"] + as_(cli, "bob"), on: "bob")
    }

    // MARK: - Hints

    @Test(arguments: ["t.vault", "./t.vault"])
    func test_set_trustHintNamesARelativePathAsGiven(vault: String) throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.outsiderCopy(of: "t.vault", to: "eve.vault", recipients: [try recipient(cli, "alice"), try recipient(cli, "bob")])
        try cli.write("t.vault", try cli.read("eve.vault"))
        let unlock = ["--identity", cli.path("bob.txt")]
        for (arguments, extra) in [(["--vault", vault], [String: String]()), ([], ["VAULTFILE_PATH": vault])] {
            var environment = extra
            environment["VAULTFILE_STATE_DIR"] = cli.path("bob-state")
            let set = try cli.run(["set", "k"] + arguments + unlock, stdin: Array("v".utf8), extra: environment)
            #expect(set.status == 7, "\(set.stderr)")
            // The path as given, in the command to paste (the way back to the genuine copy).
            #expect(set.stderr.contains("git checkout HEAD -- \(vault)\n") && !set.stderr.contains("-- /"), "\(set.stderr)")
        }
    }

    @Test func test_set_onAnUnsignedCopyOfASignedVaultHintsTheSignedCopyNotTrust() throws {
        let cli = try team(); defer { cli.directory.remove() }
        try cli.outsiderCopy(of: "t.vault", to: "unsigned.vault", recipients: [try recipient(cli, "alice"), try recipient(cli, "bob")], signed: false)
        try cli.write("t.vault", try cli.read("unsigned.vault"))
        let set = try bob(cli, ["set", "k"] + as_(cli, "bob"), stdin: "v")
        #expect(set.status == 7, "\(set.stderr)")
        #expect(set.stderr.contains("cannot be pinned") && set.stderr.contains("git checkout HEAD --") && set.stderr.contains("--allow-untrusted"),
                "\(set.stderr)")
        #expect(!set.stderr.contains("pin this copy with"), "\(set.stderr)")
        #expect(try bob(cli, ["trust", "--yes"] + as_(cli, "bob")).status == 1, "trust refuses an unsigned copy, as the hint says")
    }
}
