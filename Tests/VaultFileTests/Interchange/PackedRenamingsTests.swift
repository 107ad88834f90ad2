import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The steps a streamed import of repeated titles takes instead of the plain ones (issue 44's
/// speed and memory): a plain title named without cleaning (`ForeignNaming.base`), a site's host
/// by its bytes, renamings kept as facts (`PackedRenamings`) and the numbering planned from one
/// read (`ForeignNaming.Plan`) — each against the plain way.
@Suite struct PackedRenamingsTests {
    private static let titles = ["", " ", "t", "t (2)", "a/b", "a-b", " x ", "x ", "\tx", "..", ".", "...", "a.b", "café", "cafe\u{301}",
                                 "https://x.example/a/", "x.example", "a\u{7}b", "a\u{7F}", "~!@#$%^&*()", "\u{212B}", "a\u{202E}b", "\u{85}"]
    private static let users: [String?] = [nil, "", "alice", "b\u{F6}b", "a\u{1}b", "\u{202E}e"]
    private static let urls: [String?] = [nil, "", "https://x.example", "https://x.example/login/", "https://u@h.example/p?q", "nota url",
                                          "https://b\u{FC}cher.example/", "https://x.example/\u{301}a", "ftp:///x"]

    private func item(_ generator: inout SplitMix) -> ForeignItem {
        func pick<T>(_ list: [T]) -> T { list[Int(generator.next() % UInt64(list.count))] }
        return ForeignBuildText.item(pick(Self.titles), folders: pick([[], [], ["f"], ["a/b", ""]]), user: pick(Self.users), url: pick(Self.urls),
                                     value: pick(["1", "2"]))
    }

    private func text(_ base: ForeignNaming.Base) -> String {
        "\(Array(base.named.name.utf8))|\(base.named.title.map { Array($0.utf8) } ?? [])|\(base.derived)|\(base.reasons.map(\.name))"
    }

    private func text(_ renaming: ImportRenaming) -> String {
        [renaming.original, renaming.name, "\(renaming.reasons.map(\.name))", renaming.account ?? "-", renaming.madeOf ?? "-"]
            .map { "\(Array($0.utf8))" }.joined(separator: "|")
    }

    // MARK: - Names and hosts by their bytes

    @Test func test_base_plainTitlesMatchTheCleaningSteps() {
        var generator = SplitMix(seed: 4_444)
        for round in 0..<2_000 {
            let item = item(&generator)
            let prefix = round % 4 == 0 ? ["in"] : []
            #expect(text(ForeignNaming.base(of: item, prefix: prefix)) == text(ForeignNaming.cleanedBase(of: item, prefix: prefix)),
                    "\(item.title.debugDescription) \(item.folders) \(prefix)")
        }
        // A plain title outside folders is its own name, with nothing to say.
        let plain = ForeignNaming.base(of: ForeignBuildText.item("app-entry-000001"), prefix: [])
        #expect(plain.named.name == "app-entry-000001" && plain.named.title == nil && plain.reasons.isEmpty && !plain.derived)
    }

    @Test func test_hostOfSite_asciiBytesAgreeWithTheCharacterSteps() {
        for site in ["x.example", "x.example/a/b", "/", "a/", "b\u{FC}cher.example/x", "x.example/\u{301}a", "\u{301}/", ""] {
            #expect(ForeignNaming.host(ofSite: site) == String(site.prefix { $0 != "/" }), "\(site.debugDescription)")
        }
    }

    // MARK: - Renamings as facts

    @Test func test_packedRenamings_giveTheTextsOfTheRenamings() {
        var generator = SplitMix(seed: 4_445)
        var builder = PackedRenamings.Builder()
        var expected: [String] = []
        for round in 0..<3_000 {
            let item = item(&generator)
            let prefix = round % 5 == 0 ? ["p", "q"] : []
            var base = ForeignNaming.base(of: item, prefix: prefix)
            let unnumbered = base.named.name
            // Every third item numbered, as a plan numbers repeated names.
            let number: UInt32 = round % 3 == 0 ? UInt32(2 + generator.next() % 40) : 0
            if number > 0 { ForeignNaming.numbered(&base, "\(unnumbered) (\(number))", item: item) }
            guard !base.reasons.isEmpty else { continue }
            expected.append(text(ForeignNaming.renaming(of: item, base, prefix: prefix)))
            ForeignNaming.addRenaming(of: item, base, unnumbered: unnumbered, number: number, prefix: prefix, to: &builder)
        }
        let renamings = builder.finish()
        #expect(renamings.count == expected.count && expected.count > 1_000)
        #expect(renamings.map(text) == expected)
        #expect(builder.isEmpty)
        // The texts' bytes, appended without making them (what `import` prints).
        for renaming in renamings {
            var original: [UInt8] = [1], name: [UInt8] = [], account: [UInt8] = []
            renaming.appendOriginal(to: &original)
            renaming.appendName(to: &name)
            let hasAccount = renaming.appendAccount(to: &account)
            #expect(original == [1] + Array(renaming.original.utf8) && name == Array(renaming.name.utf8))
            #expect(hasAccount == (renaming.account != nil) && account == Array((renaming.account ?? "").utf8))
        }
    }

    @Test func test_packedRenamings_keepWhatARowCannotHoldAsText() {
        // Six reasons: more than a row's five slots.
        let reasons: [ImportRenaming.Reason] = [.cleaned, .normalized, .titleKept, .numberedByAccount, .titleKept, .numbered]
        var builder = PackedRenamings.Builder()
        builder.add(original: "a/b", base: "a-b", number: 3, reasons: [.cleaned, .titleKept], user: "u", site: "x.example/p", account: true, derived: false)
        builder.add(original: "", base: "x.example-p", number: 0, reasons: reasons, user: nil, site: "x.example/p", account: true, derived: true)
        builder.add(original: "", base: "u", number: 2, reasons: [.numberedByAccount], user: "u", site: nil, account: true, derived: true)
        let renamings = builder.finish()
        #expect(renamings.map(\.name) == ["a-b (3)", "x.example-p", "u (2)"])
        #expect(renamings.map(\.original) == ["a/b", "", ""])
        #expect(renamings[1].reasons == reasons && renamings[0].reasons == [.cleaned, .titleKept])
        #expect(renamings.map(\.account) == ["user u, x.example", "x.example", "user u"])
        #expect(renamings.map(\.madeOf) == [nil, "its site x.example/p", "its username u"])
    }

    @Test func test_importRenaming_givenTextsAppendTheirBytes() {
        let renaming = ImportRenaming(original: "a/b", name: "a-b (2)", reasons: [.cleaned], account: "user ü", madeOf: nil)
        var bytes: [UInt8] = []
        renaming.appendOriginal(to: &bytes)
        renaming.appendName(to: &bytes)
        #expect(renaming.appendAccount(to: &bytes) && bytes == Array("a/ba-b (2)user ü".utf8))
        #expect(!ImportRenaming(original: "x", name: "y", reasons: []).appendAccount(to: &bytes))
    }

    @Test func test_importRenaming_setterReplacesThePackedFacts() {
        var builder = PackedRenamings.Builder()
        builder.add(original: "t", base: "t", number: 2, reasons: [.numberedByAccount, .titleKept], user: nil, site: nil, account: true, derived: false)
        var renaming = builder.finish()[0]
        #expect(renaming.account == "no username or URL" && renaming.madeOf == nil)
        renaming.name = "in/t (2)"
        #expect(renaming.name == "in/t (2)" && renaming.original == "t" && renaming.reasons == [.numberedByAccount, .titleKept])
        #expect(renaming.account == "no username or URL")
    }

    // MARK: - A declined read ends

    @Test func test_forEachRow_stopsOnceTheSinkDeclined() throws {
        // A repeated title at row 2, a row with too many columns at row 4: the first attempt of a
        // streamed build declines at row 2 and reads no further; a read without a sink finds the error.
        let csv = Array("name,url,username,password,note\nt,,a,p,\nt,,b,p,\nu,,c,p,\nv,,d,p,,extra\n".utf8)
        var taken = 0
        let sink = ForeignItemSink { item in
            defer { item.wipeSecrets() }
            taken += 1
            return taken < 2
        }
        let read = Result { () throws(VaultError) in try ChromeCSVReader.read(csv, now: 1, each: sink) }
        #expect((try? read.get()) != nil && sink.declined && taken == 2)
        let whole = Result { () throws(VaultError) in try ChromeCSVReader.read(csv, now: 1) }
        #expect(throws: VaultError.self) { try whole.get() }
        // The streamed build of that file: the error, as the whole file's read gives it.
        let built = ForeignBuildText.described { () throws(VaultError) in
            try Interchange.streamedEntries(csv, format: .chromeCSV, now: 1, options: ForeignBuildOptions())
        }
        #expect(built.hasPrefix("error: ") && built.contains("line 5"), "\(built)")
    }

    // MARK: - The plan from one read

    /// The plan's numbers against the reference's (`ForeignNaming.names`): numbered titles given
    /// as they are (`t (2)`, `t (3)`) are skipped, other groups' numbers never meet, and an exact
    /// title ranks before a cleaned one (`t `, ` u`, `t\u{7F}`: att58 F1).
    @Test func test_plan_numbersAsTheReferenceDoes() {
        var generator = SplitMix(seed: 4_446)
        let titles = ["t", "t", "t (2)", "t (3)", "t (2) (2)", "u", "u (2)", "(x)", "x)", "t ", " u", "t\u{7F}"]
        for _ in 0..<300 {
            let items = (0..<Int(1 + generator.next() % 30)).map { _ in
                ForeignBuildText.item(titles[Int(generator.next() % UInt64(titles.count))], user: Self.users[Int(generator.next() % 6)],
                                      value: generator.next() % 2 == 0 ? "1" : "2")
            }
            guard let plan = ForeignBuildText.decidedPlan(items) else {
                Issue.record("the plan did not decide")
                continue
            }
            let planned = items.indices.map { index in
                let base = ForeignNaming.base(of: items[index], prefix: []).named.name
                let number = ForeignBuildText.planned(plan, items[index], at: index)?.number ?? 999
                return number == 0 ? base : "\(base) (\(number))"
            }
            #expect(planned == ForeignNaming.names(of: items, prefix: []).named.map(\.name))
            // Another item at an index: no number.
            #expect(plan.number(of: ForeignBuildText.item("other"), at: 0, base: "other", exact: .whole) == nil)
        }
    }
}
