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
            #expect(names["2"] == String(repeating: "t", count: VaultLimits.maxNameLength))
            #expect(names["5"] == twin && names["6"] == String(repeating: "d", count: 1020) + " (2)", "only the numbered twin is cut, as far as its number needs")
            #expect(names["4"]!.hasPrefix(String(repeating: "f", count: 600) + "/ggg"))
            let titles = fieldsByValue(imported, "title")
            #expect(titles["2"] == long && titles["7"]?.utf8.count == 2000 && titles["1"] == "")
            let shortened = imported.renamings.filter { $0.reasons.contains(.shortened) }
            #expect(shortened.count == 4, "\(imported.renamings.map { ($0.name.utf8.count, $0.reasons) })")
            #expect(shortened.allSatisfy { $0.reasons.contains(.titleKept) && $0.reasons.map(\.name).contains("shortened") })
        }
        #expect(built.dropFirst().allSatisfy { namesByValue($0) == namesByValue(built[0]) }, "every path gives the same names")
    }

    @Test func test_names_sameFirstBytesNeverCollideAndTheExactTitleKeepsItsName() throws {
        let head = String(repeating: "p", count: VaultLimits.maxNameLength)
        // Two long titles alike in their first 1,024 bytes, and an exact title of just those bytes.
        let items = [item(head + "ONE", user: "a", value: "long1"), item(head, user: "z", value: "exact"), item(head + "TWO", user: "b", value: "long2")]
        let built = try builds(items)
        #expect(built.count == 3)
        for imported in built {
            let names = namesByValue(imported)
            #expect(names["exact"] == head, "the exact title keeps its name: a shortened one is not exact")
            let numbered = String(repeating: "p", count: 1020)
            #expect(Set([names["long1"], names["long2"]]) == [numbered + " (2)", numbered + " (3)"])
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
            // The folders the cut left out are kept (cold62 L1): the source's, without the prefix.
            #expect(fieldsByValue(imported, "folder")["1"] == items[0].folders.joined(separator: "/"))
            #expect(fieldsByValue(imported, "folder")["2"] == "")
        }
        let base = ForeignNaming.base(of: items[0], prefix: prefix)
        #expect(base.exact.title && !base.exact.folders && base.named.title == nil)
    }

    /// att62 F8, cold62 L1: a name of 1,012 to 1,024 bytes fits and is not cut; a numbered one is
    /// cut only as far as its number needs, skipping a name another item holds as it is, on every
    /// build path; a name the file held as it is is never listed as renamed.
    @Test func test_names_cutOnlyAsFarAsTheNumberNeeds() throws {
        let literal = String(repeating: "A", count: 1009) + " (2)"  // 1,013 bytes, a title of its own
        let full = String(repeating: "B", count: 1024)
        let twin = String(repeating: "C", count: 1022)
        let other = String(repeating: "D", count: 1022)
        let taken = String(repeating: "D", count: 1020) + " (2)"  // what the second `other` would be
        let items = [item(literal, value: "1"), item(full, value: "2"), item(twin, user: "a", value: "3"), item(twin, user: "b", value: "4"),
                     item(String(repeating: "A", count: 1009), user: "x", value: "5"), item(String(repeating: "A", count: 1009), user: "y", value: "6"),
                     item(other, user: "a", value: "7"), item(other, user: "b", value: "8"), item(taken, value: "9")]
        let built = try builds(items)
        #expect(built.count == 3, "every path builds")
        for imported in built {
            let names = namesByValue(imported)
            #expect(names["1"] == literal && names["2"] == full && names["3"] == twin && names["7"] == other && names["9"] == taken, "fits: not cut")
            #expect(names["4"] == String(repeating: "C", count: 1020) + " (2)")
            #expect(names["5"] == String(repeating: "A", count: 1009) && names["6"] == String(repeating: "A", count: 1009) + " (3)", "a literal `(2)` keeps its name")
            #expect(names["8"] == String(repeating: "D", count: 1020) + " (3)", "a cut numbered name skips a name given")
            #expect(names.values.allSatisfy { $0.utf8.count <= VaultLimits.maxNameLength })
            let listed = Set(imported.renamings.map(\.name))
            #expect(listed == [names["4"]!, names["6"]!, names["8"]!], "\(imported.renamings.map { ($0.name.utf8.count, $0.reasons) })")
            #expect(imported.renamings.allSatisfy { !sameUTF8($0.original, $0.name) })
            let four = imported.renamings.first { $0.name == names["4"] }
            #expect(four?.reasons.contains(.shortened) == true && four?.reasons.contains(.titleKept) == true)
            #expect(fieldsByValue(imported, "title")["4"] == twin && fieldsByValue(imported, "title")["3"] == "")
        }
        #expect(built.dropFirst().allSatisfy { namesByValue($0) == namesByValue(built[0]) }, "every path gives the same names")
        // Under a prefix: the cut never reaches it, and every path agrees.
        let prefixed = try builds([item(twin, user: "a", value: "1"), item(twin, user: "b", value: "2"), item(twin, user: "c", value: "3")], prefix: ["pre"])
        #expect(prefixed.count == 3)
        for imported in prefixed {
            let names = namesByValue(imported)
            #expect(names["1"] == "pre/" + String(repeating: "C", count: 1020), "cut to the limit: \(names.mapValues(\.utf8.count))")
            #expect(names["2"] == "pre/" + String(repeating: "C", count: 1016) + " (2)" && names["3"] == "pre/" + String(repeating: "C", count: 1016) + " (3)")
        }
        #expect(prefixed.dropFirst().allSatisfy { namesByValue($0) == namesByValue(prefixed[0]) })
    }
}
