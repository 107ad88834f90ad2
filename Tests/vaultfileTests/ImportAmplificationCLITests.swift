import Foundation
import TestSupport
import Testing

/// How far an import may grow its input (docs/INTERCHANGE.md): a 1pux file named by many items is
/// inflated once and counted once per item, a KeePass gzip binary is refused above 250 times its
/// size, and copies of a pool binary count too; all against 250 times the input (at least 32 MiB).
/// The hostile files of Fixtures/import/hostile (make-hostile.py) are a few kilobytes each; they
/// are refused with exit 6 quickly and under a memory ceiling that the honest imports pass.
@Suite struct ImportAmplificationCLITests {
    private static let hostile = ProjectPaths.fixtures.appendingPathComponent("import/hostile")
    /// Virtual memory the import runs under (`ulimit -v`, KiB): far below what the hostile files
    /// would take if copied (500 MiB, 200 MiB inflated plus their copies).
    private static let memoryCeiling = 600 * 1024

    /// `import --format FORMAT FIXTURE` under the memory ceiling, and how long it took.
    private func imported(_ cli: CLI, _ fixture: String, format: String, extra: [String] = []) throws -> (CLI.Result, TimeInterval) {
        let started = Date()
        let arguments = ["import", "--format", format] + extra + cli.unlock() + [Self.hostile.appendingPathComponent(fixture).path]
        let result = try cli.run(["-c", "ulimit -v \(Self.memoryCeiling) && exec \"$0\" \"$@\"", CLI.binary] + arguments, executable: "/bin/sh")
        return (result, Date().timeIntervalSince(started))
    }

    // MARK: - Success

    @Test func test_import_1puxFileNamedByThreeItemsIsInflatedOnceAndGivenToEach() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let (result, _) = try imported(cli, "shared-file-3.1pux", format: "1pux")
        #expect(result.status == 0, "\(result.stderr)")
        for index in 0..<3 {
            let file = try cli.run(["get", "doc \(index)", "--field", "attachment.zeros.bin"] + cli.unlock())
            #expect(file.status == 0 && file.stdout == [UInt8](repeating: 0, count: 1 << 20), "doc \(index): \(file.stderr)")
        }
    }

    // MARK: - Failure

    @Test func test_import_1puxFileNamedBy500ItemsIsRefusedQuicklyWithTheLimit() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let (result, seconds) = try imported(cli, "shared-file-500.1pux", format: "1pux")
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("the 1pux file grows to more than 33554432 bytes (32 MiB)"), "\(result.stderr)")
        #expect(result.stderr.contains("250 times the file's size"), "the limit is named: \(result.stderr)")
        #expect(result.stderr.contains("files/doc1__zeros.bin"), "\(result.stderr)")
        #expect(seconds < 10, "refused in \(seconds) s")
        #expect(try cli.read("t.vault") == before, "nothing was imported")
    }

    @Test func test_import_keepassGzipBinaryAbove250TimesIsRefusedBeforeInflating() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let (result, seconds) = try imported(cli, "gzip-ratio.xml", format: "keepass-xml")
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("the binary 0 would inflate"), "\(result.stderr)")
        #expect(result.stderr.contains("the limit is 250 times"), "\(result.stderr)")
        #expect(seconds < 10, "refused in \(seconds) s")
        #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
    }

    @Test func test_import_keepassPoolBinaryCopiedInto200EntriesIsRefused() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let (result, seconds) = try imported(cli, "gzip-shared-200.xml", format: "keepass-xml")
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("the KeePass XML grows to more than 33554432 bytes"), "\(result.stderr)")
        #expect(result.stderr.contains("'zeros.bin' passed it"), "\(result.stderr)")
        #expect(seconds < 10, "refused in \(seconds) s")
        #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
    }

    // MARK: - Edge

    @Test func test_import_dryRunOfTheHostile1puxIsRefusedAlike() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let (result, _) = try imported(cli, "shared-file-500.1pux", format: "1pux", extra: ["--dry-run"])
        #expect(result.status == 6 && result.stdout.isEmpty, "\(result.stderr)")
        // --format auto finds the 1pux and applies the same limit.
        let (auto, _) = try imported(cli, "shared-file-500.1pux", format: "auto")
        #expect(auto.status == 6, "\(auto.stderr)")
    }
}
