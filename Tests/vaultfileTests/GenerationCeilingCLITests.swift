import Foundation
import TestSupport
import Testing

/// Issue 39, item 3, through the built binary: one copy can no longer make a vault unwritable
/// everywhere. No writer seals above 2^63; a copy above it, or more than 2^32 past the record, is
/// never recorded and makes no copy older; writes to it exit 7; merge and --allow-rollback
/// ignore its generation.
@Suite struct GenerationCeilingCLITests {
    private static let aboveTheCeiling = "is at generation 18446744073709551615, above 2^63, the largest generation a writer seals"

    /// `t.vault` at generation 3, seen here (the test's state folder); the weak-KDF warning off.
    private func genuineVault() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault()
        for value in ["one", "two"] { try expectRun(cli, ["set", "k"], stdin: value) }
        return cli
    }

    @discardableResult
    private func expectRun(_ cli: CLI, _ arguments: [String], vault: String = "t.vault", stdin: String = "", state: String? = nil,
                           status: Int32 = 0) throws -> CLI.Result {
        let extra = state.map { ["VAULTFILE_STATE_DIR": cli.path($0)] } ?? [:]
        let result = try cli.run(arguments + cli.unlock(vault), stdin: Array(stdin.utf8), extra: extra)
        #expect(result.status == status, "\(arguments) on \(vault): \(result.stderr)")
        return result
    }

    // MARK: - The issue's attack

    /// The attack as the issue measured it: a member raises her own record to 2^64 − 2 and writes
    /// with --allow-rollback. This build ignores such a record; the copy an earlier release sealed
    /// at 2^64 − 1 (crafted here) is refused for writes everywhere, and the genuine copy still
    /// writes everywhere: on the machine that saw it, on one that opened the planted copy first,
    /// and on the attacker's.
    @Test func test_allowRollback_theIssuesAttackLeavesTheGenuineCopyWritableEverywhere() throws {
        let cli = try genuineVault(); defer { cli.directory.remove() }
        try cli.write("planted.vault", try cli.read("t.vault"))
        try expectRun(cli, ["get", "k"], vault: "planted.vault", state: "attacker")
        let record = try #require(try FileManager.default.contentsOfDirectory(atPath: cli.path("attacker")).first { $0.hasSuffix(".generation") })
        let text = String(decoding: try cli.read("attacker/" + record), as: UTF8.self)
        try cli.write("attacker/" + record, Array(text.replacingOccurrences(of: "generation 3\n", with: "generation \(UInt64.max - 1)\n").utf8))
        try expectRun(cli, ["set", "planted", "--allow-rollback"], vault: "planted.vault", stdin: "p", state: "attacker")
        #expect(try cli.generation(of: "planted.vault") == 4, "the raised record is not one this build reads: an ordinary write")
        // What an earlier release let her seal.
        try cli.craftGeneration("planted.vault", to: UInt64.max)
        let before = try cli.read("planted.vault")

        let read = try expectRun(cli, ["get", "planted"], vault: "planted.vault")
        #expect(read.text == "p" && read.stderr.contains(Self.aboveTheCeiling), "\(read.stderr)")
        #expect(read.stderr.contains("not recorded and makes no other copy older"), "\(read.stderr)")
        for (arguments, stdin) in [(["set", "k"], "x"), (["rekey"], ""), (["rm", "k"], "")] {
            let write = try expectRun(cli, arguments, vault: "planted.vault", stdin: stdin, status: 7)
            #expect(write.stderr.contains("vaultfile: error: \(cli.path("planted.vault")) \(Self.aboveTheCeiling)"), "\(write.stderr)")
            #expect(write.stderr.contains("not a plausible successor of what was seen here, so nothing was written"), "\(write.stderr)")
            #expect(write.stderr.contains("--allow-rollback: its generation is then ignored and the write gets generation 4"), "\(write.stderr)")
            #expect(write.stderr.contains("; or merge it into the copy seen here: vaultfile merge --both \(cli.path("t.vault")) \(cli.path("planted.vault"))\n"),
                    "\(write.stderr)")
        }
        #expect(try cli.read("planted.vault") == before, "nothing written")
        #expect(try cli.recordedGeneration(of: "t.vault") == 3, "never recorded")
        let genuine = try expectRun(cli, ["set", "k"], stdin: "genuine")
        #expect(genuine.stderr.isEmpty, "the genuine copy is not older: \(genuine.stderr)")
        // A machine whose first open is the planted copy records nothing, and writes the genuine copy.
        try expectRun(cli, ["get", "k"], vault: "planted.vault", state: "fresh")
        #expect(try cli.recordedGeneration(of: "t.vault", state: cli.path("fresh")) == nil)
        #expect(try expectRun(cli, ["set", "k"], stdin: "fresh", state: "fresh").stderr.isEmpty)
        #expect(try expectRun(cli, ["set", "k"], stdin: "attacker", state: "attacker").stderr.isEmpty)
        #expect(try cli.generation(of: "t.vault") == 6)
    }

    // MARK: - The ceiling

    /// A copy exactly at 2^63 is within the bounds on a first open, but no seal can follow it: the
    /// write fails clearly (exit 6) with nothing written, and --allow-rollback starts it again below.
    @Test func test_set_onACopyAtTheCeilingFailsClearlyAndAllowRollbackStartsItAgain() throws {
        let cli = try genuineVault(); defer { cli.directory.remove() }
        try cli.write("top.vault", try cli.read("t.vault"))
        try cli.craftGeneration("top.vault", to: 1 << 63)
        let before = try cli.read("top.vault")
        let refused = try expectRun(cli, ["set", "k"], vault: "top.vault", stdin: "x", state: "fresh", status: 6)
        #expect(refused.stderr.contains("vaultfile: error: the vault is at generation 9223372036854775808; another write would pass 2^63, "
                                        + "the largest generation a writer seals, so nothing was written"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--allow-rollback, which ignores its generation"), "\(refused.stderr)")
        #expect(try cli.read("top.vault") == before)
        // On the machine that saw generation 3, 2^63 is a jump of more than 2^32: not plausible (exit 7).
        try expectRun(cli, ["set", "k"], vault: "top.vault", stdin: "x", status: 7)
        try expectRun(cli, ["set", "k", "--allow-rollback"], vault: "top.vault", stdin: "x", state: "fresh")
        #expect(try cli.generation(of: "top.vault") == 1, "its generation and the record at the ceiling ignored")
        #expect(try cli.recordedGeneration(of: "top.vault", state: cli.path("fresh")) == 1, "the record at the ceiling replaced")
        try expectRun(cli, ["set", "k"], vault: "top.vault", stdin: "y", state: "fresh")
        #expect(try cli.generation(of: "top.vault") == 2)
    }

    // MARK: - The jump

    @Test func test_get_aJumpOfMoreThan2To32IsNotRecordedAndAWriteToItExits7() throws {
        let cli = try genuineVault(); defer { cli.directory.remove() }
        for (name, generation) in [("far.vault", UInt64(3 + (1 << 32) + 1)), ("near.vault", UInt64(3 + (1 << 32)))] {
            try cli.write(name, try cli.read("t.vault"))
            try cli.craftGeneration(name, to: generation)
        }
        let read = try expectRun(cli, ["get", "k"], vault: "far.vault")
        #expect(read.stderr.contains("is at generation 4294967300, more than 2^32 past generation 3, which was seen here on "), "\(read.stderr)")
        let write = try expectRun(cli, ["set", "k"], vault: "far.vault", stdin: "x", status: 7)
        #expect(write.stderr.contains("not a plausible successor of what was seen here"), "\(write.stderr)")
        #expect(try cli.recordedGeneration(of: "t.vault") == 3)
        #expect(try expectRun(cli, ["set", "k"], stdin: "genuine").stderr.isEmpty)
        // Exactly 2^32 past the record (which is now 4) is plausible: read silently and recorded.
        #expect(try expectRun(cli, ["get", "k"], vault: "near.vault").stderr.isEmpty)
        #expect(try cli.recordedGeneration(of: "t.vault") == 3 + (1 << 32))
    }

    // MARK: - merge

    @Test func test_merge_ignoresAnImplausibleSidesGeneration() throws {
        let cli = try genuineVault(); defer { cli.directory.remove() }
        try cli.write("planted.vault", try cli.read("t.vault"))
        try expectRun(cli, ["set", "planted"], vault: "planted.vault", stdin: "p", state: "elsewhere")
        try cli.craftGeneration("planted.vault", to: UInt64.max)
        let merge = try cli.run(["merge", cli.path("t.vault"), cli.path("planted.vault"), "--password-file", cli.path("pw")])
        #expect(merge.status == 0 && merge.stderr.contains("(generation 4)"), "one past ours and the record (3): \(merge.stderr)")
        #expect(try cli.generation(of: "t.vault") == 4 && cli.recordedGeneration(of: "t.vault") == 4)
        #expect(try expectRun(cli, ["get", "planted"]).text == "p")
        try expectRun(cli, ["set", "k"], stdin: "after")
        // --allow-rollback on the planted copy ignores its generation as well.
        try expectRun(cli, ["set", "k", "--allow-rollback"], vault: "planted.vault", stdin: "kept")
        #expect(try cli.generation(of: "planted.vault") == 6, "the record (5) plus one")
    }
}
