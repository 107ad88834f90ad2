import Testing
@testable import VaultInterchange
@testable import VaultModel

/// How the builder stores attachments (`ForeignItem.attachments`): binary fields `attachment.NAME`,
/// names cleaned and numbered as labels are (the original kept in `labels`), and what no field can
/// hold counted in a warning instead of failing the import.
@Suite struct ForeignAttachmentTests {
    private func build(_ items: [ForeignItem]) throws -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        return try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions())
    }

    private func item(_ attachments: [(String, [UInt8])]) -> ForeignItem {
        var item = ForeignItem(title: "t", value: Array("pw".utf8))
        item.attachments = attachments.map { ForeignAttachment(name: $0.0, bytes: $0.1) }
        return item
    }

    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    // MARK: - Success

    @Test func test_entries_storeEachAttachmentAsItsBinaryField() throws {
        let imported = try build([item([("a.bin", [0, 1, 0xFF]), ("notes.txt", Array("hi\n".utf8))])])
        let entry = try #require(imported.entries.first?.entry)
        #expect(entry.fields["attachment.a.bin"] == [0, 1, 0xFF] && text(entry.fields["attachment.notes.txt"]) == "hi\n")
        #expect(entry.fields["labels"] == nil, "names kept as they are need no label")
        #expect(imported.warnings.isEmpty)
    }

    // MARK: - Failure: what no field holds is said

    @Test func test_entries_countAttachmentsBeyondTheFieldsOfAnEntry() throws {
        let many = (0..<70).map { ("f\($0)", [UInt8(truncatingIfNeeded: $0)]) }
        let imported = try build([item(many)])
        let entry = try #require(imported.entries.first?.entry)
        #expect(entry.fields.count == VaultLimits.maxFieldsPerEntry - 1 && entry.fields["attachment.f62"] == [62] && entry.fields["attachment.f63"] == nil)
        #expect(imported.warnings.contains(.notKept(what: ForeignBuilder.crowdedAttachments, count: 7, reason: .noPlace)))
    }

    // MARK: - Edge

    @Test func test_entries_cleanAndNumberAttachmentNamesKeepingTheOriginals() throws {
        let imported = try build([item([("ключ.bin", [1]), ("a b.txt", [2]), ("a b.txt", [3]), ("empty", [])])])
        let entry = try #require(imported.entries.first?.entry)
        #expect(entry.fields["attachment.xn--.bin-k5dg8f9b"] == [1] && entry.fields["attachment.a_b.txt"] == [2] && entry.fields["attachment.a_b.txt_2"] == [3])
        #expect(entry.fields["attachment.empty"] == [], "an empty file is kept as an empty field")
        let labels = text(entry.fields["labels"]) ?? ""
        #expect(labels.contains("attachment.xn--.bin-k5dg8f9b\tattachment.ключ.bin\n") && labels.contains("attachment.a_b.txt_2\tattachment.a b.txt\n"))
    }

    @Test func test_entries_cutALongAttachmentNameToAFieldName() throws {
        let long = String(repeating: "x", count: 100) + ".pdf"
        let imported = try build([item([(long, [7])])])
        let entry = try #require(imported.entries.first?.entry)
        let name = "attachment." + String(repeating: "x", count: VaultLimits.maxFieldNameLength - 11)
        #expect(entry.fields[name] == [7])
        #expect(text(entry.fields["labels"]) == "\(name)\tattachment.\(long)\n")
    }
}
