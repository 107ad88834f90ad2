import Foundation
import TestSupport
import Testing

/// Imports past one buffer of records (512 KiB), whose records go to encrypted runs on disk and are
/// merged by the seal (issue 44's memory rule): the same vault as the in-memory path, the same
/// errors, and no file left beside the vault, whatever the outcome.
@Suite struct ImportRunsCLITests {
    /// `count` entries in a vaultfile JSON export, names out of order (so that runs overlap), with
    /// fixed times: about 100 bytes of records each, so 25,000 make three runs.
    private static func export(_ count: Int, repeating: (index: Int, of: Int)? = nil) -> String {
        var indices = Array(0..<count)
        var generator = SplitMix(seed: 44)
        indices.shuffle(using: &generator)
        let items = indices.enumerated().map { position, index in
            let name = repeating.map { position == $0.index ? indices[$0.of] : index } ?? index
            return #"{"name":"app/entry-\#(String(format: "%06d", name))","value":"value-\#(index)-\#(generator.next() % 1_000_000)","#
                + #""fields":{"username":"user\#(index)"},"created":1700000000000,"modified":1700000000\#(index % 1000)}"#
        }
        return #"{"vaultfile_export":1,"entries":["# + items.joined(separator: ",") + "]}"
    }

    /// The folder's names but the state folder's and the locks' (the runs' file has none).
    private static func listing(_ cli: CLI) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path).filter { $0 != "state" && !$0.hasSuffix(".lock") }.sorted()
    }

    @Test func test_import_pastOneBufferGivesTheVaultOfTheInMemoryPath() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let input = cli.path("in.json")
        try Self.export(25_000).write(toFile: input, atomically: false, encoding: .utf8)
        let before = try Self.listing(cli)
        // Into an empty vault: through runs on disk.
        let result = try cli.run(["import", "--format", "json", input] + cli.unlock())
        #expect(result.status == 0 && result.stderr.contains("imported 25000 entries"), "\(result.stderr)")
        #expect(try Self.listing(cli) == before)
        // Into vaults holding an entry, that entry removed again after: merged by the seal, and (with
        // --skip-existing, which reads in memory) merged in memory.
        for (vault, options) in [("merged.vault", [String]()), ("memory.vault", ["--skip-existing"])] {
            try cli.initVault(vault)
            #expect(try cli.run(["set", "zz-other"] + cli.unlock(vault), stdin: bytes("x")).status == 0)
            #expect(try cli.run(["import", "--format", "json", input] + options + cli.unlock(vault)).status == 0)
            #expect(try cli.run(["rm", "zz-other"] + cli.unlock(vault)).status == 0)
        }
        let runs = try cli.run(["export", "--format", "json"] + cli.unlock())
        #expect(runs.status == 0 && runs.stdout.count > 2_000_000)
        #expect(try cli.run(["export", "--format", "json"] + cli.unlock("merged.vault")).stdout == runs.stdout)
        #expect(try cli.run(["export", "--format", "json"] + cli.unlock("memory.vault")).stdout == runs.stdout)
        // Again with --overwrite into the merged vault: every name replaced by the same entry.
        let again = try cli.run(["import", "--format", "json", "--overwrite", input] + cli.unlock("merged.vault"))
        #expect(again.status == 0 && again.stderr.contains("(0 new, 25000 replaced)"), "\(again.stderr)")
        #expect(try cli.run(["export", "--format", "json"] + cli.unlock("merged.vault")).stdout == runs.stdout)
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
    }

    @Test func test_import_pastOneBufferWithARepeatOrABadRowChangesNothing() throws {
        let cli = try CLI.withVault(["kept": "1"]); defer { cli.directory.remove() }
        let vault = try Data(contentsOf: URL(fileURLWithPath: cli.path("t.vault")))
        let before = try Self.listing(cli)
        // A name repeated in another run: said as the in-memory path says it.
        let repeated = cli.path("repeated.json")
        try Self.export(25_000, repeating: (index: 24_990, of: 3)).write(toFile: repeated, atomically: false, encoding: .utf8)
        try cli.initVault("empty.vault")
        let refused = try cli.run(["import", "--format", "json", repeated] + cli.unlock("empty.vault"))
        #expect(refused.status == 2 && refused.stderr.contains("appears twice in the input"), "\(refused.stderr)")
        #expect(try cli.run(["list"] + cli.unlock("empty.vault")).text.isEmpty)
        // A bad row after the runs were written: nothing imported, the vault's bytes as they were.
        let bad = cli.path("bad.csv")
        var rows = (0..<30_000).map { "entry-\(($0 * 7_919) % 30_000),value-\($0)" }
        rows.append("bad//name,x")
        try ("name,value\n" + rows.joined(separator: "\n") + "\n").write(toFile: bad, atomically: false, encoding: .utf8)
        let failed = try cli.run(["import", "--format", "csv", bad] + cli.unlock())
        #expect(failed.status == 2 && failed.stderr.contains("line 30002"), "\(failed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("t.vault"))) == vault)
        // Only the inputs and the second vault (with its lock) are new: no run file, no temporary file.
        let added = Set(try Self.listing(cli)).subtracting(before)
        #expect(added == ["repeated.json", "bad.csv", "empty.vault"], "\(added)")
    }

    /// A folder with room for the new vault but not for it beside the import's runs (a tmpfs of
    /// 6 MiB, mounted in a private mount namespace: `unshare -m`, as root): the seal finds no room,
    /// brings the runs into memory, frees their file and seals again, so the import succeeds as it
    /// did before runs, and the vault holds what an import elsewhere gives.
    @Test func test_import_intoAFolderWithoutRoomForTheRunsSealsFromMemory() throws {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            print("skipped: mounting a small tmpfs needs root and unshare(1) (a private mount namespace)")
            return
        }
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let input = cli.path("in.json")
        try Self.export(50_000).write(toFile: input, atomically: false, encoding: .utf8)
        // The reference: the same import where there is room.
        try cli.initVault("reference.vault")
        #expect(try cli.run(["import", "--format", "json", input] + cli.unlock("reference.vault")).status == 0)
        let reference = try cli.run(["export", "--format", "json"] + cli.unlock("reference.vault"))
        let size = try FileManager.default.attributesOfItem(atPath: cli.path("reference.vault"))[.size] as? Int ?? 0
        // It fits the folder alone, not beside its runs (about its size once more).
        #expect(size < 6 << 20 && size * 2 > 6 << 20, "the vault of 50,000 entries: \(size) bytes")
        try FileManager.default.createDirectory(atPath: cli.path("small"), withIntermediateDirectories: false)
        let script = #"""
            unshare -m sh -c 'mount -t tmpfs -o size=6m tmpfs "$D" || exit 90
            cp "$T/t.vault" "$T/pw" "$D/" || exit 91
            "$VF" import --format json "$T/in.json" --vault "$D/t.vault" --password-file "$D/pw" || exit $?
            "$VF" verify --vault "$D/t.vault" --password-file "$D/pw" >&2 || exit 92
            ls -A "$D" >&2
            "$VF" export --format json --vault "$D/t.vault" --password-file "$D/pw"'
            """#
        let result = try cli.shell(script, extra: ["D": cli.path("small"), "T": cli.directory.url.path, "VAULTFILE_STATE_DIR": cli.stateDirectory])
        guard result.status != 90 else {
            print("skipped: mounting a tmpfs failed here (\(result.stderr))")
            return
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("imported 50000 entries"), "\(result.stderr)")
        #expect(result.stdout == reference.stdout)
        // Nothing but the vault, its copy of the password and its lock in the small folder: no temporary file left.
        #expect(!result.stderr.contains("vaultfile-tmp"), "\(result.stderr)")
    }
}
