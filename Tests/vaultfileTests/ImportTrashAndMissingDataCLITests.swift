import Foundation
import TestSupport
import Testing

/// One rule for every source's trash (KeePass's recycle bin, 1Password's and Enpass's trash): the
/// items there are not imported, and a warning counts them; archived items are imported with the
/// field `archived`. A KeePass XML whose attachments refer to data it does not hold (KeePassXC's
/// XML export may leave Meta/Binaries out) imports its entries, the missing attachments counted.
@Suite struct ImportTrashAndMissingDataCLITests {
    private static let fixtures = ProjectPaths.fixtures.appendingPathComponent("import")

    /// A KeePass XML: one entry with an attachment by reference to `ref`, one with a pooled file,
    /// and the pool holding `pool` (ID 0 when given).
    private func keepassXML(pool: String?, ref: Int) -> String {
        let binaries = pool.map { "<Binaries><Binary ID=\"0\">\(Data($0.utf8).base64EncodedString())</Binary></Binaries>" } ?? ""
        func entry(_ title: String, _ attachments: String) -> String {
            "<Entry><String><Key>Title</Key><Value>\(title)</Value></String><String><Key>Password</Key><Value>pw-\(title)</Value></String>\(attachments)</Entry>"
        }
        return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<KeePassFile><Meta><Generator>KeePassXC</Generator>\(binaries)</Meta><Root><Group><Name>Root</Name>"
            + entry("Mail", "<Binary><Key>key.txt</Key><Value Ref=\"\(ref)\"/></Binary>")
            + entry("Bank", "")
            + "</Group></Root></KeePassFile>\n"
    }

    /// An Enpass export of three items: one active, one archived, one in the trash.
    private static let enpass = """
        {"folders": [], "items": [
          {"title": "Active", "category": "login", "template_type": "login.default", "archived": 0, "trashed": 0,
           "fields": [{"label": "Password", "type": "password", "value": "a-pw", "sensitive": 1, "deleted": 0}]},
          {"title": "Old", "category": "login", "template_type": "login.default", "archived": 1, "trashed": 0,
           "fields": [{"label": "Password", "type": "password", "value": "o-pw", "sensitive": 1, "deleted": 0}]},
          {"title": "Deleted", "category": "login", "template_type": "login.default", "archived": 0, "trashed": 1,
           "fields": [{"label": "Password", "type": "password", "value": "d-pw", "sensitive": 1, "deleted": 0}]}
        ]}
        """

    // MARK: - Success

    @Test func test_import_keepassAttachmentWithoutDataImportsTheEntriesAndCountsIt() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("kp.xml", bytes(keepassXML(pool: nil, ref: 0)))
        let result = try cli.run(["import", "--format", "keepass-xml", cli.path("kp.xml")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["Bank", "Mail"])
        #expect(try cli.run(["get", "Mail"] + cli.unlock()).text == "pw-Mail")
        // The entry is named, so that the export the warning suggests can be aimed; nothing untrue
        // ("vaultfile has no place for it") is added.
        #expect(result.stderr.contains("not kept: KeePass attachments whose data the XML does not hold, in 1 item ('Mail'); "), "\(result.stderr)")
        #expect(result.stderr.contains("'keepassxc-cli attachment-export DATABASE ENTRY NAME FILE'"), "\(result.stderr)")
        #expect(!result.stderr.contains("has no place for it"), "\(result.stderr)")
        let field = try cli.run(["get", "Mail", "--field", "attachment.key.txt"] + cli.unlock())
        #expect(field.status != 0, "no field for an attachment without data")
    }

    @Test func test_import_enpassTrashIsLeftOutAndCountedArchivedIsKept() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "enpass-json"] + cli.unlock(), stdin: bytes(Self.enpass))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["Active", "Old"])
        #expect(try cli.run(["get", "Old", "--field", "archived"] + cli.unlock()).text == "yes")
        #expect(result.stderr.contains("not kept: Enpass items in the trash (not imported), in 1 item"), "\(result.stderr)")
    }

    @Test func test_import_1puxTrashIsLeftOutAndCountedArchivedIsKept() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "1pux", Self.fixtures.appendingPathComponent("1password.1pux").path] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!(try names(cli)).contains { $0.contains("Deleted thing") })
        #expect(try cli.run(["get", "Private/Bike lock", "--field", "archived"] + cli.unlock()).text == "yes")
        #expect(result.stderr.contains("not kept: 1Password items in the trash (not imported), in 1 item"), "\(result.stderr)")
    }

    // MARK: - Failure

    @Test func test_import_keepassPoolBinaryThatIsNotBase64IsStillRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let xml = keepassXML(pool: "x", ref: 0).replacingOccurrences(of: Data("x".utf8).base64EncodedString(), with: "!!not base64!!")
        try cli.write("kp.xml", bytes(xml))
        let result = try cli.run(["import", "--format", "keepass-xml", cli.path("kp.xml")] + cli.unlock())
        #expect(result.status == 2 && result.stderr.contains("base64"), "\(result.stderr)")
        #expect(try names(cli).isEmpty, "a damaged pool is damage, not a missing attachment")
    }

    // MARK: - Edge

    @Test func test_import_keepassReferenceToAnotherIDThanThePoolHoldsIsCountedToo() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("kp.xml", bytes(keepassXML(pool: "pooled", ref: 7)))
        let result = try cli.run(["import", "--format", "keepass-xml", "--dry-run", cli.path("kp.xml")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("KeePass attachments whose data the XML does not hold"), "\(result.stderr)")
        #expect(try names(cli).isEmpty, "--dry-run")
        let present = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock(), stdin: bytes(keepassXML(pool: "pooled", ref: 0)))
        #expect(present.status == 0 && !present.stderr.contains("does not hold"), "\(present.stderr)")
        #expect(try cli.run(["get", "Mail", "--field", "attachment.key.txt"] + cli.unlock()).text == "pooled")
    }
}
