import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The library side of cold review 58: earlier passwords built as the item with that password
/// (and their own replacement times), the title a renamed item keeps on its whole versions,
/// Bitwarden passkeys and unknown keys, Dashlane's other CSV files, the reasons losses give, and
/// what the sniffer tells of them.
@Suite struct ImportColdReview58Tests {
    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    private func build(_ items: [ForeignItem], keepsHistory: Bool = true) throws -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        return try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions(keepsHistory: keepsHistory))
    }

    // MARK: - Earlier versions

    @Test func test_versions_aPasswordOnlyVersionIsTheItemNowWithThatPassword() throws {
        var site = ForeignItem(title: "GitHub", value: Array("now".utf8))
        (site.username, site.urls, site.totp) = ("alice", ["https://github.com"], "JBSWY3DPEHPK3PXP")
        site.fields = [ForeignField(label: "Recovery codes", value: Array("r1 r2".utf8))]
        site.modified = 300
        site.history = [ForeignVersion(value: Array("old".utf8), modified: 100)]
        let imported = try build([site])
        let now = try #require(imported.entries.first?.entry)
        let versions = try #require(imported.history?.first?.versions)
        #expect(versions.count == 1 && text(versions[0].entry.value) == "old" && versions[0].replaced == 300)
        #expect(versions[0].entry.fields == now.fields, "every field the item has now, labels included: \(versions[0].entry.fields.keys.sorted())")
        #expect(now.fields["labels"] != nil)
    }

    @Test func test_versions_replacedAtTheTimeTheSourceGivesThem() throws {
        var site = ForeignItem(title: "s", value: Array("now".utf8))
        site.modified = 500
        var older = ForeignVersion(value: Array("a".utf8), modified: 10)
        older.replaced = 200
        var newer = ForeignVersion(value: Array("b".utf8), modified: 200)
        newer.replaced = 400
        site.history = [older, newer]
        let versions = try #require(try build([site]).history?.first?.versions)
        #expect(versions.map { text($0.entry.value) } == ["b", "a"] && versions.map(\.replaced) == [400, 200])
    }

    @Test func test_versions_aWholeVersionOfARenamedItemKeepsItsTitle() throws {
        func item(_ user: String) -> ForeignItem {
            var item = ForeignItem(title: "db01", value: Array("pw-\(user)".utf8))
            item.username = user
            var version = ForeignVersion(value: Array("old-\(user)".utf8), username: user, modified: 5)
            version.wholeItem = true
            item.history = [version]
            return item
        }
        let imported = try build([item("amy"), item("zed")])
        let numbered = try #require(imported.history?.first { $0.name == "db01 (2)" }?.versions.first)
        #expect(text(numbered.entry.fields["title"]) == "db01" && text(numbered.entry.fields["username"]) == "zed")
        let plain = try #require(imported.history?.first { $0.name == "db01" }?.versions.first)
        #expect(plain.entry.fields["title"] == nil)
    }
}
