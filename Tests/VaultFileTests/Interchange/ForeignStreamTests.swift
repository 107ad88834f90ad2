import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The build of items as they are read (`ForeignBuilder.build(streaming:)`, the CSV readers'
/// sink) against the build of every item read first (`build(asEntries:)`, the plain reference):
/// wherever the stream gives entries, the same entries, renamings, warnings and vault.
@Suite struct ForeignStreamTests {
    private func described(_ build: () throws(VaultError) -> ImportedEntries?) -> String {
        ForeignBuildText.described(build)
    }

    /// The streamed build of `items` ("nil" when it declines) and the reference's.
    private func both(_ items: [ForeignItem], keepsHistory: Bool = false, prefix: [String] = [],
                      holding: Bool = false) -> (streamed: String, reference: String) {
        let options = ForeignBuildOptions(keepsHistory: keepsHistory, prefix: prefix)
        let streamed = described { () throws(VaultError) in
            try ForeignBuilder.build(streaming: { sink throws(VaultError) in
                var source = ForeignImport(format: "test")
                source.notKept = ["a column": 2]
                for var item in items { source.add(&item, to: sink) }
                return source
            }, capacity: 16, now: 5, options: options, holding: holding)
        }
        var source = ForeignImport(format: "test")
        source.items = items
        source.notKept = ["a column": 2]
        let reference = described { () throws(VaultError) in try ForeignBuilder.build(asEntries: source, now: 5, options: options) }
        return (streamed, reference)
    }

    private func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        ForeignBuildText.item(title, folders: folders, user: user, url: url, value: value)
    }

    // MARK: - Success

    @Test func test_buildStreaming_distinctTitlesMatchTheReference() {
        let full = ForeignBuildText.fullItem()
        for (items, history, prefix) in [([full, item("", url: "https://x.example/a/"), item("", user: "bob"), item(""), item("https://news.ycombinator.com"),
                                           item(" spaced "), item("a/b"), item(".."), item("t (2)")], false, [String]()),
                                          ([full, item("x")], true, ["imported"]), ([], false, [])] {
            let (streamed, reference) = both(items, keepsHistory: history, prefix: prefix)
            #expect(streamed == reference)
        }
    }

    // MARK: - Repeated names, numbered from a plan

    @Test func test_buildStreaming_repeatedNamesMatchTheReference() {
        // Numbered by username, then URL, then value, never by file order; a literal `t (2)` keeps
        // its name; names that only cleaning makes repeated; titles made of the site or username.
        for (items, prefix) in [([item("t", user: "b"), item("t", user: "a")], [String]()),
                                ([item("t", user: "b"), item("t (2)"), item("t", user: "a"), item("t", user: "a", url: "https://b.example"),
                                  item("t", user: "a", url: "https://a.example"), item("t", value: "2"), item("t", value: "1")], ["in"]),
                                ([item("a/b"), item("a-b"), item("x", folders: ["f"]), item("x", folders: ["f"], user: "z")], []),
                                ([item("", user: "bob"), item("bob"), item("", url: "https://x.example/a/"), item("x.example/a")], []),
                                ([item("https://news.ycombinator.com", user: "2"), item("news.ycombinator.com", user: "1"), item("s"), item("s (2)"),
                                  item("s (2)"), item("s")], ["p", "q"])] {
            let (streamed, reference) = both(items, prefix: prefix)
            #expect(streamed != "nil")
            #expect(streamed == reference)
        }
    }

    /// Random items drawn from a few titles, usernames, URLs and values, so that most names come
    /// several times: the plan's names are the reference's, renamings and warnings included.
    @Test func test_buildStreaming_randomRepeatedTitlesMatchTheReference() {
        var generator = SplitMix(seed: 4_418)
        func pick<T>(_ list: [T]) -> T { list[Int(generator.nextByte()) % list.count] }
        let titles = ["", "t", "t (2)", "t (3)", "T", "a/b", "a-b", "https://x.example", "x.example", " x ", "..", "u (2)"]
        let users: [String?] = [nil, "", "a", "b", "u"], urls: [String?] = [nil, "https://x.example", "https://y.example/p"]
        for round in 0..<300 {
            let items = (0..<Int(generator.nextByte() % 24)).map { _ in
                item(pick(titles), folders: pick([[], [], ["f"]]), user: pick(users), url: pick(urls), value: pick(["1", "2", "pw"]))
            }
            let (streamed, reference) = both(items, keepsHistory: round % 2 == 0, prefix: round % 3 == 0 ? ["in"] : [])
            #expect(streamed != "nil")
            #expect(streamed == reference)
        }
    }

    // MARK: - Repeated names in order, numbered as read (one read)

    /// Items in the order of their names (before numbering), each name's items together, as a
    /// browser exports them by site: the build that holds one name's items at a time
    /// (`build(streamingGroups:)`) gives the reference's names, renamings and warnings.
    @Test func test_buildStreamingGroups_namesInOrderMatchTheReference() {
        var generator = SplitMix(seed: 4_419)
        func pick<T>(_ list: [T]) -> T { list[Int(generator.nextByte()) % list.count] }
        let titles = ["", "a-b", "a/b", "s", "s (1", "s (2)", "t", "t (2)", "t (3)", "t (10)", "T", "https://x.example", "x.example", "..", "u (2)"]
        let users: [String?] = [nil, "", "a", "b", "u"], urls: [String?] = [nil, "https://x.example", "https://y.example/p"]
        var grouped = 0
        for round in 0..<300 {
            let prefix = round % 3 == 0 ? ["in"] : []
            var items = (0..<Int(generator.nextByte() % 24)).map { _ in
                item(pick(titles), folders: pick([[], [], ["f"]]), user: pick(users), url: pick(urls), value: pick(["1", "2", "pw"]))
            }
            // In the byte order of their names before numbering (a stable sort: each name's items in file order).
            let names = items.map { Array(ForeignNaming.base(of: $0, prefix: prefix).named.name.utf8) }
            items = items.indices.sorted { names[$0] == names[$1] ? $0 < $1 : names[$0].lexicographicallyPrecedes(names[$1]) }.map { items[$0] }
            let (streamed, reference) = both(items, keepsHistory: round % 2 == 0, prefix: prefix, holding: true)
            #expect(streamed != "nil")
            #expect(streamed == reference)
            if case .built = try! ForeignBuildText.grouped(items, prefix: prefix) { grouped += 1 }
        }
        #expect(grouped > 200, "most sorted sets are built in one read (\(grouped))")
    }

    /// Names out of order, a numbered name that a later name could be (`t (2)`, `t (1`), or more
    /// items of one name than are held: that build gives way to the plan's, which numbers them as
    /// the reference does.
    @Test func test_buildStreamingGroups_namesOutOfOrderGoThePlanWay() {
        let held = [ForeignItem](repeating: item("t"), count: ForeignBuilder.heldItemsLimit + 1)
        for items in [[item("t", user: "b"), item("u"), item("t", user: "a")], [item("t"), item("t", user: "a"), item("t (2)")],
                      [item("t"), item("t", user: "z"), item("t (1")], held] {
            let outcome = try! ForeignBuildText.grouped(items)
            guard case .outOfOrder = outcome else {
                Issue.record("\(items.count) items: not declined as out of order")
                continue
            }
            let (streamed, reference) = both(items, holding: true)
            #expect(streamed != "nil")
            #expect(streamed == reference)
        }
    }

    // MARK: - Declined

    @Test func test_buildStreaming_declinesWhatTheWriterRefuses() {
        // A non-ASCII name (also one that NFC makes repeated).
        let (streamed, reference) = both([item("café"), item("cafe\u{301}")])
        #expect(streamed == "nil", "\(reference)")
        #expect(!reference.isEmpty)
        // A title beyond the limit is shortened (att60 F6): streamed as the reference builds it.
        let long = both([item(String(repeating: "n", count: VaultLimits.maxNameLength + 1))])
        #expect(long.streamed != "nil" && long.streamed == long.reference)
    }

    /// A reader that hands other items at its second read (a file that changed): the plan says so
    /// and the build declines, never a name numbered from other items.
    @Test func test_buildStreaming_declinesItemsThatChangeBetweenReads() {
        // Another name, or another username or URL (which order the numbers), at the second read
        // (the plan's) or the third (the build's).
        for (changedRead, changed) in [(2, item("other")), (2, item("s", user: "z")), (3, item("s", url: "https://z.example")), (3, item("s2"))] {
            var reads = 0
            let built = described { () throws(VaultError) in
                try ForeignBuilder.build(streaming: { sink throws(VaultError) in
                    reads += 1
                    var source = ForeignImport(format: "test")
                    for var entry in [item("t", user: "b"), item("t", user: "a"), reads == changedRead ? changed : item("s")] { source.add(&entry, to: sink) }
                    return source
                }, capacity: 16, now: 5, options: ForeignBuildOptions())
            }
            #expect(built == "nil", "read \(changedRead)")
            #expect(reads == 3)
        }
    }

    // MARK: - The CSV readers

    /// Each CSV reader's header, and the cells its rows draw from (titles that repeat, clean to one
    /// name or are not ASCII; URLs, times, TOTPs, flags).
    private static let formats: [(InterchangeFormat, String)] = [
        (.chromeCSV, "name,url,username,password,note"),
        (.firefoxCSV, "url,username,password,httpRealm,formActionOrigin,guid,timeCreated,timeLastUsed,timePasswordChanged"),
        (.bitwardenCSV, "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp"),
        (.onePasswordCSV, "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes"),
        (.lastPassCSV, "url,username,password,totp,extra,name,grouping,fav"),
        (.dashlaneCSV, "username,username2,username3,title,password,note,url,category,otpSecret"),
        (.keepassxcCSV, "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\""),
    ]
    private static let cells = ["", "", "t", "t", "t (2)", "u1", "u2", "svc-1", "svc-2", "a/b", "a-b", "café", "cafe\u{301}", " x ", "..",
                                "https://x.example/a/", "https://y.example", "1700000000000", "2023-11-14T22:13:20Z", "JBSWY3DPEHPK3PXP",
                                "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "1", "0", "yes", "login", "note", "card", "Root/Work", "f: v",
                                "a,b", "q\"uote", "line\nbreak", "x\u{7}"]

    /// A random export of `header`'s format: rows of random cells, most distinct, some ragged.
    private static func randomCSV(_ header: String, _ byte: () -> UInt8) -> [UInt8] {
        let width = header.split(separator: ",").count
        var lines = [header]
        for row in 0..<Int(byte() % 8) {
            var cells: [String] = []
            for _ in 0..<(byte() % 20 == 0 ? width - 1 : width) {
                let cell = byte() % 3 == 0 ? Self.cells[Int(byte()) % Self.cells.count] : "c\(row)-\(byte() % 50)"
                cells.append(cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : cell)
            }
            lines.append(cells.joined(separator: ","))
        }
        return Array(lines.joined(separator: byte() % 2 == 0 ? "\n" : "\r\n").utf8)
    }

    @Test func test_streamedEntries_csvReadersMatchTheReference() throws {
        var generator = SplitMix(seed: 4_417)
        func byte() -> UInt8 { generator.nextByte() }
        var streamedCount = 0, declined = 0
        for round in 0..<1_400 {
            let (format, header) = Self.formats[round % Self.formats.count]
            let bytes = Self.randomCSV(header, byte)
            let options = ForeignBuildOptions(keepsHistory: round % 2 == 0, prefix: round % 5 == 0 ? ["in"] : [])
            let (streamed, reference, read) = ForeignBuildText.builds(of: bytes, format: format, options: options)
            if streamed != "nil" {
                streamedCount += 1
                #expect(streamed == reference, "\(format) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            } else {
                declined += 1
            }
            // Through the import's own entry point: the reference whenever the stream declines.
            #expect(read == reference, "\(format) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            // And a window at a time, as the import reads a file (CSVWindowTests).
            let windows = ImportWindows.over(bytes, windowLength: 1 + Int(byte() % 24))
            let windowed = described { () throws(VaultError) in try Interchange.read(windows: windows, format: format, now: 7, options: options) }
            #expect(windowed == reference, "\(format) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
        #expect(streamedCount > 400, "\(streamedCount) streamed")
        #expect(declined > 100, "\(declined) declined")
    }

    // MARK: - Memory

    /// A Chrome export of two logins, the first one's password `secret` (the array holds it once).
    static func chromeExport(holding secret: ScannedSecret) -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(secret.count + 256)
        input += Array("name,url,username,password,note\nmail,https://mail.example,alice,".utf8)
        secret.append(to: &input)
        input += Array(",a note\nother,,bob,x,\n".utf8)
        return input
    }

    /// A Chrome export built as read: each item's password is wiped once its record is written,
    /// so once the records are gone and the input wiped, this process's memory holds no copy.
    @Test func test_streamedEntries_leaveNoCopyOfAPasswordInFreedMemory() throws {
        let secret = ScannedSecret()
        var input = Self.chromeExport(holding: secret)
        do {
            let imported = try Interchange.streamedEntries(input, format: .chromeCSV, now: 1, options: ForeignBuildOptions())
            let written = imported?.records?.count
            #expect(written == 2, "built as read, as records")
        }
        wipe(&input)
        #expect(secret.copiesInMemory() == 0, "a copy of the password is left in memory")
    }

    // MARK: - Name hashes

    @Test func test_nameHashes_sayARepeatedNameAndGrow() {
        var hashes = NameHashes(expected: 2)
        var new = 0
        for index in 0..<5_000 where hashes.insert("name-\(index)") { new += 1 }
        let again = hashes.insert("name-17"), last = hashes.insert("name-4999"), next = hashes.insert("name-5000")
        #expect(new == 5_000)
        #expect(!again)
        #expect(!last)
        #expect(next)
    }
}
