import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// att58 F1: among items that land on one name, an item whose name is exactly what the source
/// held ranks before every item whose title had to be cleaned; only items equal in exactness are
/// ordered by username, URL and the value's hash. The plain naming (`ForeignNaming.names`), the
/// plan of a streamed build (`ForeignNaming.Plan`), the one-read groups (`numbersWithinGroup`)
/// and an export's check of its titles (`unstableTitles`) all order so.
@Suite struct ForeignNamingExactTests {
    private func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String) -> ForeignItem {
        ForeignBuildText.item(title, folders: folders, user: user, url: url, value: value)
    }

    /// Look-alikes of `db` that cleaning turns into `db`: a trailing space, a DEL, a tab, a
    /// zero-width space, a leading space, a decomposed form is not one (its NFC differs from `db`).
    private static let lookAlikes = ["db ", "db\u{7F}", "db\t", "db\u{200B}", " db", "\u{FEFF}db"]
    /// Values an attacker may try; att58 found that most hash below `REAL-db-password`'s.
    private static let attackerValues = ["hunter2", "Tr0ub4dor&3", "correcthorse", "zzzz", "0000", "qwerty", "S3cret!", "xyz", "evil1", "a"]

    /// The build of `items` as a stream (`holding`: the one-read groups may take it), and the plain reference's.
    private func streamed(_ items: [ForeignItem], holding: Bool, prefix: [String] = []) throws -> ImportedEntries? {
        try ForeignBuilder.build(streaming: { sink throws(VaultError) in
            var source = ForeignImport(format: "test")
            for var item in items { source.add(&item, to: sink) }
            return source
        }, capacity: 16, now: 5, options: ForeignBuildOptions(prefix: prefix), holding: holding)
    }

    private func reference(_ items: [ForeignItem], prefix: [String] = []) throws -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        return try ForeignBuilder.build(asEntries: source, now: 5, options: ForeignBuildOptions(prefix: prefix))
    }

    /// Each value's name.
    private func namesByValue(_ imported: ImportedEntries) -> [String: String] {
        Dictionary(uniqueKeysWithValues: imported.entries.map { (String(decoding: $0.entry.value, as: UTF8.self), $0.name) })
    }

    // MARK: - The plain naming

    @Test func test_names_exactTitleKeepsItsNameWhateverTheLookAlikesValueOrUsername() {
        for lookAlike in Self.lookAlikes {
            for value in Self.attackerValues {
                for (realUser, otherUser) in [(nil, nil), ("bob", "alice"), ("zed", "")] as [(String?, String?)] {
                    let real = item("db", folders: ["st"], user: realUser, value: "REAL-db-password")
                    let other = item(lookAlike, folders: ["st"], user: otherUser, value: value)
                    for items in [[real, other], [other, real]] {
                        let (named, renamings) = ForeignNaming.names(of: items, prefix: [])
                        let realIndex = items[0].title == "db" ? 0 : 1
                        #expect(named[realIndex].name == "st/db", "\(lookAlike.debugDescription) \(value) \(String(describing: otherUser))")
                        #expect(named[1 - realIndex].name == "st/db (2)")
                        #expect(named[1 - realIndex].title == lookAlike, "the look-alike's title is kept")
                        #expect(renamings.count == 1)
                        let renaming = renamings[0]
                        #expect(renaming.name == "st/db (2)" && renaming.original == "st/\(lookAlike)")
                        #expect(renaming.reasons.contains(.yieldedToExactTitle) && !renaming.reasons.contains(.numberedByAccount), "\(renaming.reasons)")
                        #expect(renaming.account == ForeignNaming.account(user: otherUser.flatMap { $0.isEmpty ? nil : $0 }, site: nil))
                    }
                }
            }
        }
    }

    /// Items equal in exactness keep the order by username, then URL, then value; a name made of
    /// the site (an untitled item) or cleaned from a URL title is not exact either.
    @Test func test_names_itemsEqualInExactnessAreOrderedByUsernameThenURLThenValue() {
        let items = [item("t ", user: "d", value: "1"), item("t", user: "b", value: "2"), item("t\u{7F}", user: "c", value: "3"),
                     item("t", user: "a", value: "4"), item("t", user: "a", url: "https://a.example", value: "5")]
        let (named, renamings) = ForeignNaming.names(of: items, prefix: [])
        #expect(named.map(\.name) == ["t (5)", "t (3)", "t (4)", "t", "t (2)"])
        let yielded = renamings.filter { $0.reasons.contains(.yieldedToExactTitle) }.map(\.name).sorted()
        #expect(yielded == ["t (4)", "t (5)"], "only the cleaned ones say an exact title keeps the name")
        #expect(renamings.filter { $0.reasons.contains(.numberedByAccount) }.map(\.name).sorted() == ["t (2)", "t (3)"])

        // Two cleaned items and no exact one: by username, and neither says an exact title keeps it.
        let cleaned = ForeignNaming.names(of: [item("u ", user: "z", value: "1"), item(" u", user: "y", value: "2")], prefix: [])
        #expect(cleaned.named.map(\.name) == ["u (2)", "u"])
        #expect(cleaned.renamings.allSatisfy { !$0.reasons.contains(.yieldedToExactTitle) })

        // An untitled item named after its site, and a URL title made its site, rank after the exact title.
        let sites = [item("", url: "https://x.example", value: "a"), item("https://x.example", value: "b"), item("x.example", user: "zz", value: "c")]
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let named = ForeignNaming.names(of: order.map { sites[$0] }, prefix: [])
            let byValue = Dictionary(uniqueKeysWithValues: zip(order, named.named).map { (["a", "b", "c"][$0.0], $0.1.name) })
            #expect(byValue["c"] == "x.example", "\(order)")
        }
    }

    /// With a prefix, an exact title is the prefix and the title as the source held them.
    @Test func test_names_anExactTitleUnderAPrefixKeepsItsName() {
        let items = [item("db\u{7F}", value: "hunter2"), item("db", value: "REAL")]
        #expect(ForeignNaming.names(of: items, prefix: ["imp"]).named.map(\.name) == ["imp/db (2)", "imp/db"])
    }

    // MARK: - The streamed builds

    /// Names out of order: the plan's reads number them; the plan says which item yielded.
    @Test func test_buildStreaming_planNumbersAnExactTitleFirst() throws {
        for value in Self.attackerValues {
            let items = [item("db ", value: value), item("other", value: "o"), item("db", value: "REAL-db-password"), item("a", value: "x")]
            let built = try #require(try streamed(items, holding: false))
            let plain = try reference(items)
            #expect(ForeignBuildText.described { built } == ForeignBuildText.described { plain })
            #expect(namesByValue(built)["REAL-db-password"] == "db" && namesByValue(built)[value] == "db (2)")
            #expect(built.renamings.map(\.reasons) == plain.renamings.map(\.reasons), "the packed renamings keep the reason")
            #expect(built.renamings.contains { $0.name == "db (2)" && $0.reasons.contains(.yieldedToExactTitle) })

            let plan = try #require(ForeignBuildText.decidedPlan(items))
            let numbers = items.enumerated().map { ForeignBuildText.planned(plan, $1, at: $0) }
            #expect(numbers.map { $0?.number } == [2, 0, 0, 0] && numbers.map { $0?.reason == .yieldedToExactTitle } == [true, false, false, false])
            // An item whose exactness changed between the reads is not the one the plan read.
            let changed = item("db", value: value)
            #expect(plan.number(of: changed, at: 0, base: "db", exact: .whole) == nil)
        }
    }

    /// Names in byte order, each name's items together: the one-read groups number an exact
    /// title first, whichever comes first in the file.
    @Test func test_buildStreamingGroups_numberAnExactTitleFirst() throws {
        for value in Self.attackerValues {
            for items in [[item("a", value: "x"), item("db ", value: value), item("db", value: "REAL-db-password"), item("db\t", user: "a", value: "t"), item("e", value: "y")],
                          [item("db", value: "REAL-db-password"), item("db\u{7F}", value: value)]] {
                let outcome = try ForeignBuildText.grouped(items)
                guard case .built(let grouped) = outcome, let grouped else {
                    Issue.record("not built in one read")
                    continue
                }
                let plain = try reference(items)
                #expect(ForeignBuildText.described { grouped } == ForeignBuildText.described { plain })
                #expect(grouped.renamings.map(\.reasons) == plain.renamings.map(\.reasons))
                #expect(namesByValue(grouped)["REAL-db-password"] == "db")
                #expect(grouped.renamings.filter { $0.reasons.contains(.yieldedToExactTitle) }.count == items.count - (items.count == 2 ? 1 : 3))
            }
        }
    }

    /// More items of one name than the groups hold: the plan's reads take it, exact title first.
    @Test func test_buildStreamingGroups_moreItemsThanHeldGoThePlanWayExactFirst() throws {
        var items = (0..<ForeignBuilder.heldItemsLimit).map { item("t ", user: "u\($0)", value: "v\($0)") }
        items.append(item("t", user: "zzz", value: "REAL"))
        let outcome = try ForeignBuildText.grouped(items)
        guard case .outOfOrder = outcome else {
            Issue.record("more items than held were not given to the plan")
            return
        }
        let built = try #require(try streamed(items, holding: true))
        let plain = try reference(items)
        #expect(ForeignBuildText.described { built } == ForeignBuildText.described { plain })
        #expect(namesByValue(built)["REAL"] == "t" && namesByValue(built)["v0"] == "t (2)")
        #expect(built.renamings.filter { $0.reasons.contains(.yieldedToExactTitle) }.count == ForeignBuilder.heldItemsLimit)
    }

    // MARK: - Exactness per part (att60 F1)

    /// Folders that need cleaning, as real exports have them: a KeePass group or 1Password vault
    /// holding '/', a group with a trailing space, an NFD folder from macOS; and their names.
    private static let cleanedFolders: [([String], String)] = [(["Email/Web"], "Email-Web"), (["Work "], "Work"), (["Cafe\u{301}"], "Caf\u{E9}"),
                                                               (["Dev/Ops"], "Dev-Ops"), (["a", "Work ", "b"], "a/Work/b")]

    /// Each part judged on its own, the prefix left out: the title as the source held it, then the folders.
    @Test func test_base_exactnessIsJudgedPerPartWithoutThePrefix() {
        func exact(_ title: String, _ folders: [String] = [], prefix: [String] = []) -> ForeignNaming.Exactness {
            ForeignNaming.base(of: item(title, folders: folders, value: "v"), prefix: prefix).exact
        }
        #expect(exact("db") == .whole && exact("db", ["Work"], prefix: ["imp"]) == .whole)
        #expect(exact("db", ["Email/Web"]) == ForeignNaming.Exactness(title: true, folders: false))
        #expect(exact("db", ["Cafe\u{301}"]) == ForeignNaming.Exactness(title: true, folders: false))
        #expect(exact("db", ["Work", ""]) == ForeignNaming.Exactness(title: true, folders: false), "an empty folder is dropped: cleaned")
        #expect(exact("db ", ["Work"]) == ForeignNaming.Exactness(title: false, folders: true))
        #expect(exact("db ", ["Work "]) == ForeignNaming.Exactness(title: false, folders: false))
        #expect(exact("Cafe\u{301}", ["Work"]) == ForeignNaming.Exactness(title: false, folders: true), "an NFD title is put in NFC")
        #expect(exact("https://x.example", ["Work"]) == ForeignNaming.Exactness(title: false, folders: true), "a URL title is made its site")
        #expect(exact("", ["Work"]) == ForeignNaming.Exactness(title: false, folders: true), "a name made of nothing is not the title")
        // The prefix is the user's own text: whatever it needs, the source's parts decide.
        for prefix in [["p5 "], ["cafe\u{301}"], ["a\u{7F}b", "c"]] {
            #expect(exact("db", prefix: prefix) == .whole, "\(prefix)")
            #expect(exact("db", ["Work"], prefix: prefix) == .whole, "\(prefix)")
            #expect(exact("db ", ["Work"], prefix: prefix) == ForeignNaming.Exactness(title: false, folders: true), "\(prefix)")
        }
        // The order: an exact title before any cleaned one, then exact folders.
        let ranks = [ForeignNaming.Exactness.whole, .init(title: true, folders: false), .init(title: false, folders: true), .init(title: false, folders: false)]
        for (a, b) in zip(ranks, ranks.dropFirst()) { #expect(a.ranksBefore(b) && !b.ranksBefore(a)) }
    }

    /// att60 F1: in a folder that needs cleaning, or under a prefix that does, the item titled
    /// `db` keeps the name from the look-alike `db `, whatever value or username the look-alike has.
    @Test func test_names_exactTitleInACleanedFolderOrUnderACleanedPrefixKeepsItsName() {
        var cases: [(folders: [String], prefix: [String], name: String)] = Self.cleanedFolders.map { ($0.0, [], $0.1 + "/db") }
        cases += [([], ["p5 "], "p5/db"), ([], ["cafe\u{301}"], "caf\u{E9}/db"), (["Email/Web"], ["p5 "], "p5/Email-Web/db"), (["Work"], ["p5 "], "p5/Work/db")]
        for (folders, prefix, name) in cases {
            for lookAlike in Self.lookAlikes {
                for value in Self.attackerValues {
                    for (realUser, otherUser) in [(nil, nil), ("bob", "alice")] as [(String?, String?)] {
                        let real = item("db", folders: folders, user: realUser, value: "REAL-db-password")
                        let other = item(lookAlike, folders: folders, user: otherUser, value: value)
                        for items in [[real, other], [other, real]] {
                            let (named, renamings) = ForeignNaming.names(of: items, prefix: prefix)
                            let realIndex = items[0].title == "db" ? 0 : 1
                            #expect(named[realIndex].name == name, "\(folders) \(prefix) \(lookAlike.debugDescription) \(value)")
                            #expect(named[1 - realIndex].name == name + " (2)")
                            let yielded = renamings.first { $0.name == name + " (2)" }
                            #expect(yielded?.reasons.contains(.yieldedToExactTitle) == true, "\(String(describing: yielded?.reasons))")
                        }
                    }
                }
            }
        }
    }

    /// The title decides before the folders: `db` in the group `Email/Web` keeps the name from
    /// `db ` in the group `Email-Web`; between two titles equally exact, the exact folder keeps it,
    /// whatever the usernames; only items equal in both are ordered by username.
    @Test func test_names_anExactTitleRanksFirstThenExactFolders() {
        let orders: [[Int]] = [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]]
        // Ranks 3, 2, 1, 0 in one name `Email-Web/db`, their usernames in the other order.
        let all = [item("db", folders: ["Email-Web"], user: "z", value: "whole"), item("db", folders: ["Email/Web"], user: "y", value: "title"),
                   item("db ", folders: ["Email-Web"], user: "x", value: "folders"), item("db\t", folders: ["Email/Web"], user: "a", value: "neither")]
        for order in orders {
            let items = order.map { all[$0] }
            let (named, renamings) = ForeignNaming.names(of: items, prefix: [])
            let byValue = Dictionary(uniqueKeysWithValues: zip(items, named).map { (String(decoding: $0.0.value, as: UTF8.self), $0.1.name) })
            #expect(byValue == ["whole": "Email-Web/db", "title": "Email-Web/db (2)", "folders": "Email-Web/db (3)", "neither": "Email-Web/db (4)"], "\(order)")
            // A cleaned title yields to an exact one; the exact title in a cleaned folder yields to the
            // exact folder, and says so (att62 F2), not the usernames.
            let reasons = Dictionary(uniqueKeysWithValues: renamings.map { ($0.name, $0.reasons) })
            #expect(reasons["Email-Web/db (2)"]?.contains(.yieldedToExactFolders) == true)
            #expect(reasons["Email-Web/db (2)"]?.contains(.numberedByAccount) == false)
            #expect(reasons["Email-Web/db (3)"]?.contains(.yieldedToExactTitle) == true && reasons["Email-Web/db (4)"]?.contains(.yieldedToExactTitle) == true)
        }
        // No exact title: the exact folder first, whatever the usernames; no line says an exact title keeps it.
        let cleaned = [item("db ", folders: ["Email/Web"], user: "a", value: "1"), item("db\u{7F}", folders: ["Email-Web"], user: "z", value: "2")]
        for items in [cleaned, cleaned.reversed()] {
            let (named, renamings) = ForeignNaming.names(of: items, prefix: [])
            #expect(zip(items, named).first { $0.0.value == Array("2".utf8) }?.1.name == "Email-Web/db")
            #expect(renamings.allSatisfy { !$0.reasons.contains(.yieldedToExactTitle) })
            #expect(renamings.first { $0.name == "Email-Web/db (2)" }?.reasons.contains(.yieldedToExactFolders) == true)
        }
    }

    /// The plan's reads (names out of order) and the one-read groups (names in byte order) number
    /// each cleaned folder and prefix as the plain naming does, every rank against every other.
    @Test func test_buildStreaming_cleanedFoldersAndPrefixesAreNumberedAsThePlainNaming() throws {
        for (folders, name) in Self.cleanedFolders {
            for value in Self.attackerValues.prefix(4) {
                for (prefix, named) in [([], ""), (["p5 "], "p5/"), (["in"], "in/")] as [([String], String)] {
                    let shown = named + name
                    // Out of order (the plan's reads): another name between the group's items.
                    let scattered = [item("db ", folders: folders, value: value), item("zz", folders: folders, value: "o"),
                                     item("db", folders: folders, value: "REAL-db-password"), item("a", value: "x")]
                    guard shown.utf8.allSatisfy({ $0 < 0x80 }) else {
                        // A non-ASCII name is declined by the streamed builds (the record writer): the plain naming names it.
                        #expect(try streamed(scattered, holding: true, prefix: prefix) == nil)
                        #expect(namesByValue(try reference(scattered, prefix: prefix))["REAL-db-password"] == shown + "/db")
                        continue
                    }
                    let built = try #require(try streamed(scattered, holding: false, prefix: prefix))
                    let plain = try reference(scattered, prefix: prefix)
                    #expect(ForeignBuildText.described { built } == ForeignBuildText.described { plain })
                    #expect(namesByValue(built)["REAL-db-password"] == shown + "/db", "\(folders) \(prefix)")
                    #expect(built.renamings.contains { $0.name == shown + "/db (2)" && $0.reasons.contains(.yieldedToExactTitle) })
                    // In byte order (one read, each name's items held together).
                    let ordered = [item("a", folders: folders, value: "x"), item("db ", folders: folders, value: value),
                                   item("db", folders: folders, value: "REAL-db-password"), item("db\t", folders: folders, user: "a", value: "t"),
                                   item("e", folders: folders, value: "y")]
                    let outcome = try ForeignBuildText.grouped(ordered, prefix: prefix)
                    guard case .built(let grouped) = outcome, let grouped else {
                        Issue.record("not built in one read: \(folders) \(prefix)")
                        continue
                    }
                    let reference = try reference(ordered, prefix: prefix)
                    #expect(ForeignBuildText.described { grouped } == ForeignBuildText.described { reference })
                    #expect(namesByValue(grouped)["REAL-db-password"] == shown + "/db")
                }
            }
        }
        // Every rank against every other, in each path.
        let all = [item("db", folders: ["Email-Web"], user: "z", value: "whole"), item("db", folders: ["Email/Web"], user: "y", value: "title"),
                   item("db ", folders: ["Email-Web"], user: "x", value: "folders"), item("db\t", folders: ["Email/Web"], user: "a", value: "neither")]
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]] {
            let items = order.map { all[$0] }
            let plain = try reference(items)
            let planned = try #require(try streamed(items, holding: false))
            #expect(ForeignBuildText.described { planned } == ForeignBuildText.described { plain }, "\(order)")
            guard case .built(let grouped) = try ForeignBuildText.grouped(items), let grouped else {
                Issue.record("not built in one read: \(order)")
                continue
            }
            #expect(ForeignBuildText.described { grouped } == ForeignBuildText.described { plain }, "\(order)")
            #expect(namesByValue(plain)["whole"] == "Email-Web/db" && namesByValue(plain)["title"] == "Email-Web/db (2)")
            // The plan's read of each: the rank is in its check, so an item whose folder changed is not the one read.
            let plan = try #require(ForeignBuildText.decidedPlan(items))
            for (index, item) in items.enumerated() {
                #expect(ForeignBuildText.planned(plan, item, at: index) != nil)
                let base = ForeignNaming.base(of: item, prefix: []).named.name
                for other in [ForeignNaming.Exactness.whole, .init(title: true, folders: false), .init(title: false, folders: true), .init(title: false, folders: false)]
                    where other != ForeignNaming.base(of: item, prefix: []).exact {
                    #expect(plan.number(of: item, at: index, base: base, exact: other) == nil)
                }
            }
        }
    }

    /// More items of one name in a cleaned folder than the groups hold: the plan's reads take it,
    /// the exact title first.
    @Test func test_buildStreamingGroups_moreItemsThanHeldInACleanedFolderGoThePlanWayExactTitleFirst() throws {
        var items = (0..<ForeignBuilder.heldItemsLimit).map { item("t ", folders: ["W/X"], user: "u\($0)", value: "v\($0)") }
        items.append(item("t", folders: ["W/X"], user: "zzz", value: "REAL"))
        guard case .outOfOrder = try ForeignBuildText.grouped(items, prefix: ["p5 "]) else {
            Issue.record("more items than held were not given to the plan")
            return
        }
        let built = try #require(try streamed(items, holding: true, prefix: ["p5 "]))
        let plain = try reference(items, prefix: ["p5 "])
        #expect(ForeignBuildText.described { built } == ForeignBuildText.described { plain })
        #expect(namesByValue(built)["REAL"] == "p5/W-X/t" && namesByValue(built)["v0"] == "p5/W-X/t (2)")
        #expect(built.renamings.filter { $0.reasons.contains(.yieldedToExactTitle) }.count == ForeignBuilder.heldItemsLimit)
    }

    // MARK: - The title an export gives back

    /// A vault the new rule named (`db` the exact one, `db (2)` the look-alike, title `db ` kept)
    /// exports both titles as they were and a re-import names them alike; a vault an earlier
    /// release named the other way round (the look-alike holds `db`) exports their names, so the
    /// round trip never swaps which value a name holds either.
    @Test func test_bitwardenJSON_roundTripKeepsWhichValueANameHoldsWithALookAlike() throws {
        func vault(_ entries: [(String, String, [String: String])]) throws -> Vault {
            var vault = Vault(history: .standard)
            for (name, value, fields) in entries {
                try vault.put(Entry(value: Array(value.utf8), fields: fields.mapValues { Array($0.utf8) }, created: 1, modified: 1), as: name, now: 1)
            }
            return vault
        }
        for (entries, unstable) in [([("db", "REAL", [:]), ("db (2)", "EVIL", ["title": "db "])], false),
                                    ([("db", "EVIL", ["title": "db "]), ("db (2)", "REAL", ["title": "db"])], true)] as [([(String, String, [String: String])], Bool)] {
            let source = try vault(entries)
            #expect(ForeignNaming.unstableTitles(names: ["db", "db (2)"], vault: source).isEmpty == !unstable)
            var written = try BitwardenJSONExport.write(source, prefix: "")
            defer { SecureMemory.wipe(&written.bytes) }
            let read = try BitwardenJSON.read(written.bytes, now: 0)
            let named = ForeignNaming.names(of: read.items, prefix: []).named
            let byValue = Dictionary(uniqueKeysWithValues: zip(read.items, named).map { (String(decoding: $0.0.value, as: UTF8.self), $0.1.name) })
            let expected = Dictionary(uniqueKeysWithValues: entries.map { ($0.1, $0.0) })
            #expect(byValue == expected, "\(entries.map(\.0))")
        }
    }

    /// att62 F2: exact folders against folders cleaned to the same text, titles alike: every
    /// build path numbers the cleaned one second and says why (`yieldedToExactFolders`).
    @Test func test_buildPaths_sayExactFoldersDecided() throws {
        let scattered = [item("db", folders: ["Email/Web"], user: "a", value: "REAL"), item("zz", value: "o"),
                         item("db", folders: ["Email-Web"], user: "z", value: "OTHER")]
        let ordered = [scattered[1], scattered[0], scattered[2]].sorted { $0.title < $1.title }
        let plain = try reference(scattered)
        let planned = try #require(try streamed(scattered, holding: false))
        guard case .built(let grouped) = try ForeignBuildText.grouped(ordered), let grouped else {
            Issue.record("not built in one read")
            return
        }
        for imported in [plain, planned, grouped] {
            #expect(namesByValue(imported)["OTHER"] == "Email-Web/db" && namesByValue(imported)["REAL"] == "Email-Web/db (2)")
            let reasons = imported.renamings.first { $0.name == "Email-Web/db (2)" }?.reasons ?? []
            #expect(reasons.contains(.yieldedToExactFolders) && !reasons.contains(.numberedByAccount), "\(reasons)")
            #expect(reasons.flatMap(\.jsonNames).contains("yields_to_exact_folders"))
        }
    }
}
