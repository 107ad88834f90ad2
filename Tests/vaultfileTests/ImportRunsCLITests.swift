import Foundation
import TestSupport
import Testing

/// Imports past one buffer of records (1 MiB), whose records go to encrypted runs on disk and are
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
}
