import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The builder's record path (`ForeignBuilder.build`, entries written as vault records) against its
/// plain reference (`build(asEntries:)`, an `Entry` per item): the same entries, renamings,
/// warnings, history and errors, and the same vault once put.
@Suite struct ForeignRecordsTests {
    private func described(_ build: () throws(VaultError) -> ImportedEntries) -> String {
        ForeignBuildText.described { () throws(VaultError) in try build() }
    }

    private func same(_ items: [ForeignItem], keepsHistory: Bool = false, prefix: [String] = [], notKept: [String: Int] = [:]) {
        var source = ForeignImport(format: "test")
        source.items = items
        source.notKept = notKept
        let options = ForeignBuildOptions(keepsHistory: keepsHistory, prefix: prefix)
        let records = described { () throws(VaultError) in try ForeignBuilder.build(source, now: 5, options: options) }
        let entries = described { () throws(VaultError) in try ForeignBuilder.build(asEntries: source, now: 5, options: options) }
        #expect(records == entries)
        #expect(!records.isEmpty)
    }

    private func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        ForeignBuildText.item(title, folders: folders, user: user, url: url, value: value)
    }

    // MARK: - Success

    @Test func test_build_recordsMatchEntriesForPlainItems() {
        let full = ForeignBuildText.fullItem(attachments: true)
        same([full, item("", url: "https://x.example/a/"), item("", user: "bob"), item(""), item("https://news.ycombinator.com")])
        same([full], keepsHistory: true, prefix: ["imported"], notKept: ["a column": 2])
    }

    @Test func test_build_recordsMatchEntriesWhenNumbering() {
        same([item("t", user: "b"), item("t", user: "a"), item("t (2)"), item("t", user: "a", url: "u"), item("", user: ""), item("")])
    }

    // MARK: - Failure

    @Test func test_build_recordsMatchEntriesOnErrors() {
        same([item(String(repeating: "n", count: VaultLimits.maxNameLength + 1))])
        var crowded = item("c")
        crowded.fields = (0..<70).map { ForeignField(label: "f\($0)", value: [1]) }
        same([item("a"), crowded])
    }

    // MARK: - Edge

    @Test func test_build_recordsMatchEntriesForNonASCIINames() {
        same([item("café", folders: ["Ünïcode"]), item("plain"), item("DYLD_INSERT_LIBRARIES"), item(" spaced "), item(".."), item("a/b")])
        same([item("café"), item("cafe\u{301}")])
    }
}
