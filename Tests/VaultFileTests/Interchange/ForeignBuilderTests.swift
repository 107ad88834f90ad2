import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// The one builder of entries from other password managers' items (`ForeignImport.entries`), on
/// hand-made items: names, the field `title`, renamings, loss warnings, field collisions and
/// labels, TOTP, numbering by account, history, prefix, attachments.
@Suite struct ForeignBuilderTests {
    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    private func build(_ items: [ForeignItem], notKept: [String: Int] = [:], keepsHistory: Bool = false, prefix: [String] = []) throws -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        source.notKept = notKept
        return try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions(keepsHistory: keepsHistory, prefix: prefix))
    }

    private func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        var item = ForeignItem(folders: folders, title: title, value: Array(value.utf8))
        item.username = user
        item.urls = url.map { [$0] } ?? []
        return item
    }

    private func found(_ imported: ImportedEntries, _ name: String) -> Entry? {
        imported.entries.first { $0.name == name }?.entry
    }

    // MARK: - Names and the field title

    @Test func test_entries_keepFolderAndTitleAsTheName() throws {
        let imported = try build([item("db", folders: ["Work", "Prod"], user: "admin", url: "https://db.example")])
        #expect(imported.names == ["Work/Prod/db"])
        let db = try #require(found(imported, "Work/Prod/db"))
        #expect(text(db.fields["username"]) == "admin" && text(db.fields["url"]) == "https://db.example" && db.fields["title"] == nil)
        #expect(imported.renamings.isEmpty && imported.warnings.isEmpty)
    }

    @Test func test_entries_giveAURLTitleAReadableNameAndKeepTheTitle() throws {
        let imported = try build([item("https://news.ycombinator.com"), item("https://x.example/login/")])
        #expect(imported.names == ["news.ycombinator.com", "x.example-login"])
        #expect(text(found(imported, "news.ycombinator.com")?.fields["title"]) == "https://news.ycombinator.com")
        #expect(imported.renamings.map(\.original) == ["https://news.ycombinator.com", "https://x.example/login/"])
        #expect(imported.renamings.allSatisfy { $0.reasons.contains(.titleKept) })
    }

    @Test func test_entries_listEveryCleanedTitleAndKeepIt() throws {
        let imported = try build([item("a/b", folders: ["F"]), item(" spaced "), item("..")])
        #expect(imported.names == ["F/a-b", "spaced", "_.."])
        #expect(imported.renamings.map(\.original) == ["F/a/b", " spaced ", ".."])
        #expect(imported.renamings.allSatisfy { $0.reasons == [.cleaned, .titleKept] }, "\(imported.renamings.map(\.reasons))")
        #expect(text(found(imported, "spaced")?.fields["title"]) == " spaced ")
    }

    @Test func test_entries_nameAnUntitledItemAfterItsSiteThenItsUsername() throws {
        let imported = try build([item("", url: "https://mail.example.org/inbox?x=1"), item("", user: "bob"), item("   ")])
        #expect(imported.names == ["mail.example.org-inbox", "bob", "untitled"])
        // No title was lost, and no reason given; each is listed with what it was named after (cold review 58, L8).
        #expect(imported.renamings.map(\.name) == imported.names && imported.renamings.allSatisfy { $0.reasons.isEmpty && $0.madeOf != nil })
        #expect(imported.renamings.map(\.madeOf) == ["its site mail.example.org/inbox", "its username bob", "nothing: it has no site or username"],
                "\(imported.renamings.map(\.madeOf))")
    }

    @Test func test_entries_placeEveryNameUnderThePrefix() throws {
        let imported = try build([item("db", folders: ["Work"]), item("a/b")], prefix: ["imported", "keepass"])
        #expect(imported.names == ["imported/keepass/Work/db", "imported/keepass/a-b"])
        #expect(imported.renamings.map(\.original) == ["imported/keepass/a/b"])
    }

    // MARK: - Numbering by account, never by file order

    @Test func test_entries_numberRepeatedTitlesByUsernameThenURL() throws {
        let items = [item("t", user: "carol"), item("t", user: "alice", url: "https://b"), item("t", user: "alice", url: "https://a"), item("t", user: "bob")]
        let imported = try build(items)
        let byName = Dictionary(uniqueKeysWithValues: imported.entries.map { ($0.name, "\(text($0.entry.fields["username"])!) \(text($0.entry.fields["url"]) ?? "")") })
        #expect(byName == ["t": "alice https://a", "t (2)": "alice https://b", "t (3)": "bob ", "t (4)": "carol "])
        // Numbered, the title kept in `title` (the exports give it back).
        #expect(imported.renamings.allSatisfy { $0.reasons == [.numberedByAccount, .titleKept] } && imported.renamings.count == 3)
        // The same data in every other order gives each account the same name.
        for order in [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]] {
            let again = try build(order.map { items[$0] })
            let names = Dictionary(uniqueKeysWithValues: again.entries.map { ($0.name, "\(text($0.entry.fields["username"])!) \(text($0.entry.fields["url"]) ?? "")") })
            #expect(names == byName, "order \(order)")
        }
    }

    @Test func test_entries_numberBySecretWhenUsernameAndURLAreEqual() throws {
        let items = [item("t", user: "u", value: "one"), item("t", user: "u", value: "two")]
        let forward = try build(items).entries.map { "\($0.name)=\(text($0.entry.value)!)" }
        let backward = try build(items.reversed()).entries.map { "\($0.name)=\(text($0.entry.value)!)" }
        #expect(Set(forward) == Set(backward) && forward.count == 2)
    }

    @Test func test_entries_numberingSkipsALiteralNumberedTitle() throws {
        let imported = try build([item("t", user: "a"), item("t", user: "b"), item("t (2)", user: "c")])
        let byUser = Dictionary(uniqueKeysWithValues: imported.entries.map { (text($0.entry.fields["username"])!, $0.name) })
        #expect(byUser == ["a": "t", "b": "t (3)", "c": "t (2)"])
    }

    // MARK: - Fields

    @Test func test_entries_keepEveryURLAndTheTimes() throws {
        var site = item("s")
        site.urls = ["https://a", "https://b", "https://c"]
        site.created = 5
        site.modified = 9
        site.notes = "n"
        let imported = try build([site, item("t")])
        let entry = try #require(found(imported, "s"))
        #expect(text(entry.fields["url"]) == "https://a" && text(entry.fields["url2"]) == "https://b" && text(entry.fields["url3"]) == "https://c")
        #expect(entry.created == 5 && entry.modified == 9 && text(entry.fields["notes"]) == "n")
        #expect(self.found(imported, "t")?.created == 1_700_000_000_000)
    }

    @Test func test_entries_neverLetACustomUsernameReplaceTheLogin() throws {
        var login = item("site", user: "alice")
        login.fields = [ForeignField(label: "username", value: Array("other".utf8)), ForeignField(label: "username", value: Array("third".utf8))]
        let imported = try build([login])
        let entry = try #require(found(imported, "site"))
        #expect(text(entry.fields["username"]) == "alice" && text(entry.fields["username_2"]) == "other" && text(entry.fields["username_3"]) == "third")
        #expect(text(entry.fields["labels"]) == "username_2\tusername\nusername_3\tusername\n")
        // `username` is a name vaultfile reads as the login's: a custom one gives way whether or not the login has one.
        #expect(imported.warnings.contains(.fieldRenamed(label: "username", field: "username_2", count: 1, example: "site", reason: .reserved)))
    }

    @Test func test_entries_numberManyFieldsOfOneLabelInTurnAroundTakenNames() throws {
        // More fields than the builder searches as a list (a set then): each numbered from where the
        // last one of its label stopped, the same names as searching from 2 each time.
        var crowded = item("site")
        // Values `v00`…`v19` in the file's order, the order fields of one label and section are numbered in.
        crowded.fields = (0..<20).map { ForeignField(label: "a", value: Array("v\($0 < 10 ? "0" : "")\($0)".utf8)) }
            + [ForeignField(label: "a_5", value: Array("five".utf8)), ForeignField(label: "x", value: [1])]
        let entry = try #require(found(try build([crowded]), "site"))
        #expect(text(entry.fields["a"]) == "v00" && text(entry.fields["a_20"]) == "v19" && entry.fields["a_21"] == nil)
        #expect((2...20).allSatisfy { text(entry.fields["a_\($0)"]) == "v\($0 - 1 < 10 ? "0" : "")\($0 - 1)" })
        #expect(text(entry.fields["a_5_2"]) == "five" && entry.fields["x"] == [1])
    }

    /// cold62 L3 and att63 F2: fields of one label get the same numbers in any order of their
    /// sections and whatever their values: by label, then section, then the file's order; a value
    /// rotated never moves another field's name. Attachments of one name keep the file's order.
    @Test func test_entries_numberFieldsOfOneNameBySectionThenFileOrderNeverByValue() throws {
        func field(_ label: String, _ value: String, _ section: String? = nil) -> ForeignField {
            ForeignField(label: label, value: Array(value.utf8), section: section)
        }
        func stored(_ fields: [ForeignField], _ attachments: [ForeignAttachment] = []) throws -> [String: String] {
            var site = item("site")
            site.fields = fields
            site.attachments = attachments
            let entry = try #require(found(try build([site]), "site"))
            return entry.fields.compactMapValues { String(decoding: $0, as: UTF8.self) }
        }
        let fields = [field("API_Key", "abc", "Prod"), field("API Key", "def"), field("API_Key", "xyz", "Dev"), field("Other", "o"), field("API/Key", "ghi")]
        var seen: Set<[String: String]> = []
        for order in [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 4, 0, 3, 1], [3, 0, 1, 4, 2]] { seen.insert(try stored(order.map { fields[$0] })) }
        #expect(seen.count == 1, "\(seen)")
        let first = try #require(seen.first)
        // The label that is a field name first (Dev before Prod), then the cleaned ones by label.
        #expect(first["API_Key"] == "xyz" && first["API_Key_2"] == "abc" && first["API_Key_3"] == "def" && first["API_Key_4"] == "ghi")
        // Rotated values: every name stays where it was.
        let rotated = try stored([field("API_Key", "000", "Prod"), field("API Key", "def"), field("API_Key", "zzz", "Dev"), field("Other", "o"), field("API/Key", "ghi")])
        #expect(rotated["API_Key"] == "zzz" && rotated["API_Key_2"] == "000" && rotated["API_Key_3"] == "def")
        // One label in one section, and attachments of one name: the file's order, whatever the values.
        let same = try stored([field("k", "zz", "S"), field("k", "aa", "S")],
                              [ForeignAttachment(name: "a.txt", bytes: [2]), ForeignAttachment(name: "b.txt", bytes: [9]), ForeignAttachment(name: "a.txt", bytes: [1])])
        #expect(same["k"] == "zz" && same["k_2"] == "aa")
        #expect(same["attachment.a.txt"] == "\u{2}" && same["attachment.a.txt_2"] == "\u{1}" && same["attachment.b.txt"] == "\u{9}")
    }

    /// cold63 F2: the lines of `labels` come in the order of their field names, never the
    /// file's, so that an export listing an item's renamed fields in another order gives the
    /// same `labels` (before, `--skip-existing` said it differed).
    @Test func test_entries_writeLabelsInFieldNameOrderNeverFileOrder() throws {
        let fields = [ForeignField(label: "Пин", value: Array("1".utf8)), ForeignField(label: "username", value: Array("c".utf8)),
                      ForeignField(label: "API Key", value: Array("k1".utf8)), ForeignField(label: "API Key", value: Array("k2".utf8)),
                      ForeignField(label: "API_Key", value: Array("k0".utf8))]
        var seen: Set<String?> = []
        for order in [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]] {
            var site = item("site", user: "alice")
            site.fields = order.map { fields[$0] }
            seen.insert(text(try #require(found(try build([site]), "site")).fields["labels"]))
        }
        #expect(seen == ["API_Key_2\tAPI Key\nAPI_Key_3\tAPI Key\nusername_2\tusername\nxn--r0a4cp\tПин\n"], "\(seen)")
    }

    /// Two 1pux exports of one item whose sections hold fields of one label, the sections listed in
    /// other orders: each name holds the same value (the section's title, else its name, orders
    /// them; within a section, the file's order).
    @Test func test_entries_numberA1puxItemsFieldsOfOneLabelTheSameInAnyOrder() throws {
        func export(_ sections: [String]) -> [UInt8] {
            ForeignJSONStreamTests.onePUX(#"{"accounts": [{"vaults": [{"attrs": {"name": "V"}, "items": [{"uuid": "1", "overview": {"title": "Svc"}, "#
                + #""details": {"password": "p", "sections": ["# + sections.joined(separator: ", ") + "]}}]}]}]}")
        }
        let prod = #"{"title": "Prod", "fields": [{"title": "API_Key", "value": {"concealed": "p1"}}, {"title": "API_Key", "value": {"string": "p0"}}]}"#
        let dev = #"{"title": "Dev", "fields": [{"title": "API_Key", "value": {"concealed": "d1"}}]}"#
        let unnamed = #"{"name": "Section_b", "fields": [{"title": "API_Key", "value": {"string": "b1"}}]}"#
        var seen: Set<[String: String]> = []
        for sections in [[prod, dev, unnamed], [unnamed, dev, prod], [dev, prod, unnamed]] {
            let read = try OnePUXReader.read(export(sections), now: 0)
            let imported = try read.entries(now: 0, options: ForeignBuildOptions(keepsHistory: false, prefix: []))
            let entry = try #require(found(imported, "Svc"))
            seen.insert(entry.fields.filter { $0.key.hasPrefix("API_Key") }.mapValues { String(decoding: $0, as: UTF8.self) })
        }
        #expect(seen == [["API_Key": "d1", "API_Key_2": "p1", "API_Key_3": "p0", "API_Key_4": "b1"]], "\(seen)")
    }

    /// cold63 F6: fields of one name under different section titles keep the title in their
    /// label (`labels`), so `API_Key` of "Prod" and of "Dev" are told apart; an untitled section's
    /// id is never shown; fields of one name under one title keep their plain labels; the loss
    /// of section titles is counted by item, not by section.
    @Test func test_entries_keepTheSectionTitleOfFieldsOfOneNameInTheirLabels() throws {
        func export(_ sections: [String]) -> [UInt8] {
            ForeignJSONStreamTests.onePUX(#"{"accounts": [{"vaults": [{"attrs": {"name": "V"}, "items": [{"uuid": "1", "overview": {"title": "Svc"}, "#
                + #""details": {"password": "p", "sections": ["# + sections.joined(separator: ", ") + "]}}]}]}]}")
        }
        let prod = #"{"title": "Prod", "fields": [{"title": "API_Key", "value": {"concealed": "abc"}}, {"title": "Host", "value": {"string": "h1"}}]}"#
        let dev = #"{"title": "Dev", "fields": [{"title": "API_Key", "value": {"concealed": "xyz"}}, {"title": "Host", "value": {"string": "h1"}}]}"#
        let untitled = #"{"name": "Section_b", "fields": [{"title": "API_Key", "value": {"string": "b1"}}]}"#
        let same = #"{"title": "Prod", "fields": [{"title": "Port", "value": {"string": "1"}}, {"title": "Port", "value": {"string": "2"}}]}"#
        for sections in [[prod, dev, untitled, same], [same, untitled, dev, prod]] {
            let read = try OnePUXReader.read(export(sections), now: 0)
            #expect(read.notKept[OnePUXReader.sectionTitles] == 1, "one item, however many titled sections: \(read.notKept)")
            let entry = try #require(found(try read.entries(now: 0, options: ForeignBuildOptions(keepsHistory: false, prefix: [])), "Svc"))
            #expect(text(entry.fields["API_Key"]) == "xyz" && text(entry.fields["API_Key_2"]) == "abc" && text(entry.fields["API_Key_3"]) == "b1")
            // Host twice with one value: equal fields, either order; Port twice under one title: no title needed.
            #expect(text(entry.fields["labels"]) == "API_Key\tDev / API_Key\nAPI_Key_2\tProd / API_Key\nAPI_Key_3\tAPI_Key\nHost\tDev / Host\nHost_2\tProd / Host\n"
                    + "Port_2\tPort\n", "\(text(entry.fields["labels"]) ?? "")")
        }
    }

    @Test func test_entries_keepAnItemOfThousandsOfFieldsOfOneLabelAtOnce() throws {
        // att60 F2: 20,000 fields `r` in one 53 KB 1pux item were numbered in cubic time (over 11
        // minutes) before the field limit refused the item; now the first are fields, each one
        // try, and the others lines of the notes (recheck62 N1), counted without being numbered.
        var crowded = item("x")
        crowded.fields = (0..<20_000).map { _ in ForeignField(label: "r", value: [1]) }
        let imported = try build([crowded])
        let entry = try #require(found(imported, "x"))
        #expect(entry.fields.count == VaultLimits.maxFieldsPerEntry, "the notes, `labels` and 62 fields")
        let lines = text(entry.fields["notes"])?.split(separator: "\n") ?? []
        // Each line's label is the kept field `r`'s name: marked, so it never reads as that field's (cold63 F4).
        #expect(lines.count == 20_000 - 62 && lines.allSatisfy { $0 == "r (not kept as a field): \u{1}" })
    }

    @Test func test_entries_cleanNonASCIILabelsAndKeepThemInLabels() throws {
        var first = item("a"), second = item("b")
        first.fields = [ForeignField(label: "Mot de passe Wi‑Fi", value: Array("x".utf8), protected: true), ForeignField(label: "PIN-код", value: Array("1".utf8))]
        second.fields = [ForeignField(label: "Mot de passe Wi‑Fi", value: Array("y".utf8))]
        let imported = try build([first, second])
        let entry = try #require(found(imported, "a"))
        // Punycode, as IDNA writes it (before: each character '_', `PIN-___`).
        #expect(text(entry.fields["xn--Mot_de_passe_WiFi-n02j"]) == "x" && text(entry.fields["xn--PIN--t4d9a2a"]) == "1")
        #expect(text(entry.fields["labels"]) == "xn--Mot_de_passe_WiFi-n02j\tMot de passe Wi‑Fi\nxn--PIN--t4d9a2a\tPIN-код\n")
        // One warning per label, however many entries had it.
        #expect(imported.warnings.filter { if case .fieldRenamed = $0 { return true } else { return false } }.count == 2)
        #expect(imported.warnings.contains(.fieldRenamed(label: "Mot de passe Wi‑Fi", field: "xn--Mot_de_passe_WiFi-n02j", count: 2, example: "a", reason: .cleaned)))
    }

    @Test func test_entries_storeAttachmentsAndExtrasAsFields() throws {
        var note = item("n")
        note.attachments = [ForeignAttachment(name: "key.bin", bytes: [0, 0xFF, 10])]
        note.extras = [("tags", "a,b"), ("favorite", "1")]
        let imported = try build([note])
        let entry = try #require(found(imported, "n"))
        #expect(entry.fields["attachment.key.bin"] == [0, 0xFF, 10] && text(entry.fields["tags"]) == "a,b" && text(entry.fields["favorite"]) == "1")
    }

    // MARK: - Losses said

    @Test func test_entries_warnOfEveryThingNotKeptWithItsCount() throws {
        let imported = try build([item("a")], notKept: ["Firefox's guid column": 3, "1Password's archived flag": 1])
        #expect(imported.warnings == [.notKept(what: "1Password's archived flag", count: 1, reason: .noPlace), .notKept(what: "Firefox's guid column", count: 3, reason: .noPlace)])
        #expect(imported.warnings[1].description.contains("Firefox's guid column, in 3 items"))
    }

    @Test func test_entries_keepHistoryOnlyWhenTheVaultDoes() throws {
        var site = item("s", value: "now")
        site.modified = 300
        site.history = [ForeignVersion(value: Array("first".utf8), modified: 100), ForeignVersion(value: Array("second".utf8), username: "u", modified: 200)]
        let kept = try build([site], keepsHistory: true)
        let versions = try #require(kept.history?.first?.versions)
        #expect(versions.map { text($0.entry.value) } == ["second", "first"] && versions.map(\.replaced) == [300, 200])
        #expect(text(versions[0].entry.fields["username"]) == "u")
        let dropped = try build([site], keepsHistory: false)
        #expect(dropped.history == nil && dropped.warnings == [.historyNotKept(versions: 2, entries: 1)])
    }

    @Test func test_keeping_leavesAForeignImportForeign() throws {
        var site = item("s")
        site.history = [ForeignVersion(value: Array("old".utf8), modified: 1)]
        let kept = try build([site, item("t")], keepsHistory: true).keeping { $0 == "s" }
        #expect(kept.fromForeign && kept.names == ["s"] && kept.history?.map(\.name) == ["s"])
        #expect(try build([item("t")], prefix: []).placed(under: ["p"]).fromForeign)
    }

    @Test func test_wipe_zeroesAndDropsEverySecret() {
        var source = ForeignImport(format: "test")
        var site = item("s", value: "secret")
        site.fields = [ForeignField(label: "pin", value: [1, 2])]
        source.items = [site]
        source.wipe()
        #expect(source.items.isEmpty)
    }

    // MARK: - TOTP

    @Test func test_entries_makeABareBase32SecretAWorkingTOTP() throws {
        var site = item("s", user: "alice@example.com")
        site.totp = " jbsw y3dp ehpk 3pxp\n"
        let uri = try #require(found(try build([site]), "s")?.fields["totp"])
        let reference = try TOTPParameters(uri: Array("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP".utf8))
        #expect(try OneTimePassword.totp(TOTPParameters(uri: uri), at: 59).code == OneTimePassword.totp(reference, at: 59).code)
        #expect(text(uri)?.hasPrefix("otpauth://totp/alice%40example.com?") == true)
    }

    @Test func test_entries_makeASteamSecretFiveSteamCharacters() throws {
        var steam = item("Steam")
        steam.totp = "steam://JBSWY3DPEHPK3PXP"
        let imported = try build([steam])
        let uri = try #require(found(imported, "Steam")?.fields["totp"])
        // Known answers from an independent implementation of Steam Guard's published algorithm.
        #expect(try OneTimePassword.totp(TOTPParameters(uri: uri), at: 59).code == "2YXGV")
        #expect(imported.warnings.isEmpty)
    }

    @Test func test_entries_keepATOTPThatCannotBeComputedAndSaySo() throws {
        var counter = item("c"), garbage = item("g")
        counter.totp = "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1"
        garbage.totp = "not a secret!"
        let imported = try build([counter, garbage])
        #expect(text(found(imported, "c")?.fields["totp"]) == "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1")
        #expect(text(found(imported, "g")?.fields["totp"]) == "not a secret!")
        #expect(imported.warnings.count == 2 && imported.warnings.allSatisfy { if case .totpUnusable = $0 { return true } else { return false } })
    }

    // MARK: - Checked as every import

    @Test func test_entries_keepFieldsOverTheLimitInTheNotes() throws {
        // recheck62 N1: the item was refused, and with it the whole import.
        var crowded = item("x")
        crowded.fields = (0..<70).map { ForeignField(label: "f\($0)", value: [1]) }
        let entry = try #require(found(try build([crowded]), "x"))
        // The first 62 by label (`f0`, `f1`, `f10`…: cold63 F4), the rest lines in that order.
        let byLabel = (0..<70).sorted { "f\($0)" < "f\($1)" }
        #expect(entry.fields.count == 63 && entry.fields["f\(byLabel[61])"] == [1] && entry.fields["f\(byLabel[62])"] == nil)
        #expect(text(entry.fields["notes"]) == byLabel[62...].map { "f\($0): \u{1}\n" }.joined())
    }

    @Test func test_entries_ofNoItemsAreEmpty() throws {
        #expect(try build([]).count == 0)
    }
}
