import Foundation
import TestSupport
import Testing

/// Attachments of other password managers' exports through the binary: each stored as the binary
/// field `attachment.NAME` (docs/INTERCHANGE.md), its bytes given back whole by `get --field`.
@Suite struct ForeignAttachmentsCLITests {
    private static let fixtures = ProjectPaths.fixtures.appendingPathComponent("import")

    /// A vault with `fixture` imported as `format`; the import's result.
    private func imported(_ fixture: String, format: String) throws -> (CLI, CLI.Result) {
        let cli = try CLI.withEntriesSet([])
        let result = try cli.run(["import", "--format", format] + cli.unlock() + [Self.fixtures.appendingPathComponent(fixture).path])
        return (cli, result)
    }

    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
        try cli.run(["get", name, "--field", field] + cli.unlock())
    }

    // MARK: - Success

    @Test func test_import_keepassXCXMLAttachmentsComeBackWithGetField() throws {
        let (cli, result) = try imported("keepassxc.xml", format: "keepass-xml")
        defer { cli.directory.remove() }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "Email/Work/Mail", "attachment.notes.txt").stdout == Array("hello attachment\n".utf8))
        // A binary file, gzip-compressed in the pool of the export: every byte back.
        let key = try field(cli, "Email/Work/Mail", "attachment.key.bin")
        #expect(key.status == 0 && key.stdout.count == 3000, "\(key.stderr)")
    }

    @Test func test_import_keepass2XMLPooledAndInlineAttachments() throws {
        let (cli, result) = try imported("keepass2.xml", format: "keepass-xml")
        defer { cli.directory.remove() }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "Home & Garden/Router", "attachment.pooled.txt").text == "pooled attachment")
        #expect(try field(cli, "Home & Garden/Router", "attachment.inline.txt").text == "inline attachment bytes")
    }

    @Test func test_import_1puxFilesComeBackWithGetField() throws {
        let (cli, result) = try imported("1password.1pux", format: "1pux")
        defer { cli.directory.remove() }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "Private/Example", "attachment.codes.txt").text == "1111-2222\n3333-4444\n55")
    }

    // MARK: - Failure

    @Test func test_get_attachmentNotInTheExportIsNoField() throws {
        let (cli, result) = try imported("1password.1pux", format: "1pux")
        defer { cli.directory.remove() }
        #expect(result.status == 0, "\(result.stderr)")
        let missing = try field(cli, "Private/Example", "attachment.other.txt")
        #expect(missing.status != 0 && missing.stdout.isEmpty, "\(missing.stderr)")
    }

    // MARK: - Edge

    @Test func test_import_dryRunStoresNoAttachment() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let dry = try cli.run(["import", "--format", "1pux", "--dry-run"] + cli.unlock() + [Self.fixtures.appendingPathComponent("1password.1pux").path])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try names(cli).isEmpty, "a dry run changes nothing")
    }
}
