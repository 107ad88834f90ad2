import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// att60 F6: a title (or folders) too long to be a name is cut at a character boundary so that
/// the name and any ` (n)` fit the name limit, the title kept in `title`, the renaming listed as
/// `shortened`; the cut title is not exact, numbers never collide, and every build path agrees.
@Suite struct ForeignNamingShortTests {
    private func item(_ title: String, folders: [String] = [], user: String? = nil, value: String) -> ForeignItem {
        ForeignBuildText.item(title, folders: folders, user: user, value: value)
    }

    /// The builds of `items`: the plain reference, the plan's stream and the one-read groups'.
    private func builds(_ items: [ForeignItem], prefix: [String] = []) throws -> [ImportedEntries] {
        var source = ForeignImport(format: "test")
        source.items = items
        var all = [try ForeignBuilder.build(asEntries: source, now: 5, options: ForeignBuildOptions(prefix: prefix))]
        for holding in [false, true] {
            let streamed = try ForeignBuilder.build(streaming: { sink throws(VaultError) in
                var source = ForeignImport(format: "test")
                for var item in items { source.add(&item, to: sink) }
                return source
            }, capacity: 16, now: 5, options: ForeignBuildOptions(prefix: prefix), holding: holding)
            if let streamed { all.append(streamed) }
        }
        return all
    }

    private func namesByValue(_ imported: ImportedEntries) -> [String: String] {
        Dictionary(uniqueKeysWithValues: imported.entries.map { (String(decoding: $0.entry.value, as: UTF8.self), $0.name) })
    }

    private func fieldsByValue(_ imported: ImportedEntries, _ field: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: imported.entries.map {
            (String(decoding: $0.entry.value, as: UTF8.self), $0.entry.fields[field].map { String(decoding: $0, as: UTF8.self) } ?? "")
        })
    }

    @Test func test_names_longTitlesFolderAndNumberFitTheLimit() throws {
        let long = String(repeating: "t", count: 1100)
        let twin = String(repeating: "d", count: 1022)
        let items = [item("a", value: "1"), item(long, value: "2"), item("b", value: "3"),
                     item(String(repeating: "g", count: 500), folders: [String(repeating: "f", count: 600)], value: "4"),
                     item(twin, value: "5"), item(twin, value: "6"), item(String(repeating: "x", count: 2000), value: "7")]
        let built = try builds(items)
        #expect(built.count == 3, "every path builds")
        for imported in built {
            let names = namesByValue(imported)
            #expect(names.values.allSatisfy { $0.utf8.count <= VaultLimits.maxNameLength && EntryName.isValid($0) }, "\(names.mapValues(\.utf8.count))")
            #expect(Set(names.values).count == items.count)
            #expect(names["1"] == "a" && names["3"] == "b")
            #expect(names["2"] == String(repeating: "t", count: ForeignNaming.maxBaseLength))
            #expect(names["4"]!.hasPrefix(String(repeating: "f", count: 600) + "/ggg"))
            let titles = fieldsByValue(imported, "title")
            #expect(titles["2"] == long && titles["7"]?.utf8.count == 2000 && titles["1"] == "")
            let shortened = imported.renamings.filter { $0.reasons.contains(.shortened) }
            #expect(shortened.count == 5, "\(imported.renamings.map { ($0.name.utf8.count, $0.reasons) })")
            #expect(shortened.allSatisfy { $0.reasons.contains(.titleKept) && $0.reasons.map(\.name).contains("shortened") })
        }
        #expect(built.dropFirst().allSatisfy { namesByValue($0) == namesByValue(built[0]) }, "every path gives the same names")
    }

    @Test func test_names_sameFirstBytesNeverCollideAndTheExactTitleKeepsItsName() throws {
        let head = String(repeating: "p", count: ForeignNaming.maxBaseLength)
        // Two long titles alike in their first 1,011 bytes, and an exact title of just those bytes.
        let items = [item(head + "ONE", user: "a", value: "long1"), item(head, user: "z", value: "exact"), item(head + "TWO", user: "b", value: "long2")]
        let built = try builds(items)
        #expect(built.count == 3)
        for imported in built {
            let names = namesByValue(imported)
            #expect(names["exact"] == head, "the exact title keeps its name: a shortened one is not exact")
            #expect(Set([names["long1"], names["long2"]]) == [head + " (2)", head + " (3)"])
            #expect(imported.renamings.filter { $0.reasons.contains(.yieldedToExactTitle) }.count == 2)
        }
        #expect(built.dropFirst().allSatisfy { namesByValue($0) == namesByValue(built[0]) })
        // Exactness: the shortened title counts as cleaned.
        let base = ForeignNaming.base(of: items[0], prefix: [])
        #expect(!base.exact.title && base.named.title == head + "ONE" && base.reasons.contains(.shortened))
    }

    @Test func test_cut_neverSplitsACharacterAndKeepsNFC() throws {
        // Two-byte letters (an odd limit falls between bytes), a letter under 2,000 combining marks
        // (one grapheme longer than the limit: cut between scalars), Hangul syllables, emoji.
        let titles = [String(repeating: "é", count: 700), "a" + String(repeating: "\u{0301}", count: 2000), String(repeating: "각", count: 500),
                      String(repeating: "👩‍👩‍👧", count: 100)]
        for (index, title) in titles.enumerated() {
            for folders in [[], ["Ω" + String(repeating: "ß", count: 495)], [String(repeating: "f", count: 1500), "sub"]] {
                let base = ForeignNaming.base(of: item(title, folders: folders, value: "v"), prefix: ["pre"])
                let name = base.named.name
                #expect(name.utf8.count <= ForeignNaming.maxBaseLength && EntryName.isValid(name), "\(index) \(name.utf8.count)")
                #expect(sameUTF8(EntryName.normalized(name), name), "in NFC")
                #expect(name.hasPrefix("pre/"), "the prefix is never cut")
                #expect(base.named.title == title && base.reasons.contains(.shortened))
            }
        }
        #expect(ForeignNaming.cut("abc  def", to: 5) == "abc", "no space left at the end")
        #expect(ForeignNaming.cut("éé", to: 3) == "é")
    }

    @Test func test_explains_aShortenedTitleNumberedOrNot() {
        let long = String(repeating: "k", count: 1500)
        let leaf = String(repeating: "k", count: ForeignNaming.maxBaseLength)
        #expect(ForeignNaming.explains(long, leaf: leaf) && ForeignNaming.explains(long, leaf: leaf + " (2)"))
        #expect(ForeignNaming.explains(long, leaf: String(repeating: "k", count: 64)), "a title cut short beside long folders")
        #expect(!ForeignNaming.explains(long, leaf: "kk") && !ForeignNaming.explains("GitHub", leaf: "Git"))
    }

    /// att62 F3: a non-ASCII prefix (300 `é`, 600 bytes) and emoji folders: the folder cut counts
    /// bytes, so it ends whole and the build succeeds (the entries path: the streamed ones write
    /// ASCII names only); cut folders are said
    /// (`foldersCut`), and the title the cut left whole is neither kept in `title` nor cleaned (F8).
    @Test func test_names_nonASCIIPrefixCutsFoldersByBytes() throws {
        let prefix = [String(repeating: "\u{E9}", count: 300)]
        let items = [item("db", folders: [String(repeating: "\u{1F600}", count: 101), String(repeating: "\u{1F600}", count: 200)], value: "1"),
                     item("ok", value: "2"), item("a", value: "3"), item("a", value: "4")]
        let built = try builds(items, prefix: prefix)
        #expect(built.count == 1, "the entries path builds")
        for imported in built {
            let names = namesByValue(imported)
            let name = try #require(names["1"])
            #expect(Set([names["3"], names["4"]]) == [prefix[0] + "/a", prefix[0] + "/a (2)"])
            #expect(name.hasPrefix(prefix[0] + "/\u{1F600}") && name.hasSuffix("/db") && name.utf8.count <= ForeignNaming.maxBaseLength, "\(name.utf8.count)")
            #expect(EntryName.isValid(name) && names["2"] == prefix[0] + "/ok")
            let reasons = imported.renamings.first { $0.name == name }?.reasons ?? []
            #expect(reasons.contains(.shortened) && reasons.contains(.foldersCut) && !reasons.contains(.titleKept), "\(reasons)")
            #expect(fieldsByValue(imported, "title")["1"] == "")
        }
        let base = ForeignNaming.base(of: items[0], prefix: prefix)
        #expect(base.exact.title && !base.exact.folders && base.named.title == nil)
    }
}
