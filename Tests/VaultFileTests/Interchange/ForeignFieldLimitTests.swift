import Testing
@testable import VaultInterchange
@testable import VaultModel

/// An item with more custom fields than an entry holds (recheck62 N1): the first are fields, the
/// rest `label: value` lines of the entry's notes, said in one warning naming the items; never a
/// failed import. The record path and the plain reference (`build(asEntries:)`) agree.
@Suite struct ForeignFieldLimitTests {
    private func item(_ title: String, fields count: Int, notes: String? = nil, username: String? = nil) -> ForeignItem {
        var item = ForeignItem(title: title)
        item.value = Array("pw-\(title)".utf8)
        item.notes = notes
        item.username = username
        item.fields = (0..<count).map { ForeignField(label: "k\($0)", value: Array("v\($0)".utf8)) }
        return item
    }

    private func source(_ items: [ForeignItem]) -> ForeignImport {
        var source = ForeignImport(format: "test")
        source.items = items
        return source
    }

    private func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    @Test func test_build_fieldsBeyondAnEntrysAreKeptInItsNotes() throws {
        let items = [item("many", fields: 100, notes: "first line"), item("bare", fields: 70), item("fits", fields: 61, username: "u"),
                     item("exact", fields: 64)]
        for asEntries in [false, true] {
            let built = asEntries ? try ForeignBuilder.build(asEntries: source(items), now: 1, options: ForeignBuildOptions())
                : try ForeignBuilder.build(source(items), now: 1, options: ForeignBuildOptions())
            let many = try #require(built.entries.first { $0.name == "many" }?.entry)
            // The notes and 62 custom fields (room kept for `labels`): the first by label (cold63
            // F4: `k0`, `k1`, `k10`…, by bytes, never the file's order); the other 38 lines of the notes, in that order.
            let byLabel = (0..<100).sorted { "k\($0)" < "k\($1)" }
            #expect(many.fields.count == 63, "\(many.fields.count)")
            #expect(byLabel[..<62].allSatisfy { many.fields["k\($0)"] != nil } && byLabel[62...].allSatisfy { many.fields["k\($0)"] == nil })
            let notes = text(many.fields["notes"])
            #expect(notes == "first line\n" + byLabel[62...].map { "k\($0): v\($0)\n" }.joined(), "\(notes)")
            // Nothing lost: each value once, as a field or a line.
            for index in 0..<100 { #expect((many.fields["k\(index)"] != nil) != notes.contains("k\(index): v\(index)\n")) }
            // Without notes of its own: the notes take one of the fields.
            let bare = try #require(built.entries.first { $0.name == "bare" }?.entry)
            let bareByLabel = (0..<70).sorted { "k\($0)" < "k\($1)" }
            #expect(bare.fields.count == 63 && bareByLabel[..<62].allSatisfy { bare.fields["k\($0)"] != nil }, "\(bare.fields.count)")
            #expect(text(bare.fields["notes"]) == bareByLabel[62...].map { "k\($0): v\($0)\n" }.joined())
            // Items that fit are as they were: every field a field, no notes; 64 when no label needs `labels`.
            let fits = try #require(built.entries.first { $0.name == "fits" }?.entry)
            #expect(fits.fields.count == 62 && fits.fields["notes"] == nil && fits.fields["k60"] != nil)
            let exact = try #require(built.entries.first { $0.name == "exact" }?.entry)
            #expect(exact.fields.count == VaultLimits.maxFieldsPerEntry && exact.fields["notes"] == nil && exact.fields["k63"] != nil)
            let warned = built.warnings.compactMap { warning -> String? in
                if case .fieldsKeptInNotes = warning { return warning.description } else { return nil }
            }
            #expect(warned == ["46 fields beyond the 64 an entry holds are kept as 'label: value' lines of the entry's notes, in 2 entries ('many', 'bare')"],
                    "\(warned)")
            #expect(built.warnings.contains { $0.kind == "fields_in_notes" })
        }
    }

    /// cold63 F4: which custom fields stay fields follows their labels, never the file's order,
    /// and a line whose label is a name a kept field holds (`API Key` kept as `API_Key`, the
    /// login's `username`) is marked, so no line reads as that field's.
    @Test func test_build_fieldsKeptAreChosenByLabelAndNoLineCarriesAKeptName() throws {
        let fillers = (0..<60).map { ForeignField(label: "A\($0 < 10 ? "0" : "")\($0)", value: Array("f\($0)".utf8)) }
        let named = [ForeignField(label: "API Key", value: Array("k1".utf8)), ForeignField(label: "API_Key", value: Array("k2".utf8)),
                     ForeignField(label: "username", value: Array("custom".utf8))]
        var seen: Set<[String: [UInt8]]> = []
        for fields in [fillers + named, named.reversed() + fillers.reversed()] {
            var crowded = item("crowded", fields: 0, username: "alice")
            crowded.fields = fields
            let entry = try #require(try ForeignBuilder.build(source([crowded]), now: 1, options: ForeignBuildOptions()).entries.first?.entry)
            seen.insert(entry.fields)
            // 60 fillers and `API Key` (as `API_Key`): the 61 a `username` and `labels` leave room for.
            #expect(text(entry.fields["API_Key"]) == "k1" && text(entry.fields["username"]) == "alice" && entry.fields["A59"] != nil)
            #expect(text(entry.fields["notes"]) == "API_Key (not kept as a field): k2\nusername (not kept as a field): custom\n",
                    "\(text(entry.fields["notes"]))")
        }
        #expect(seen.count == 1, "the same entry in either order")
    }

    @Test func test_notes_multilineValueIsIndented() {
        let moved = [ForeignField(label: "codes", value: Array("a\nb".utf8)), ForeignField(label: "x", value: Array("1".utf8))]
        var set = FieldSet()
        #expect(ForeignBuilder.notes("n", with: moved, beside: &set) == "n\ncodes: a\n  b\nx: 1\n")
        #expect(ForeignBuilder.notes(nil, with: moved, beside: &set) == "codes: a\n  b\nx: 1\n")
        // cold63 F4: a label that is one of the entry's field names is marked.
        set.put("username", "alice")
        #expect(ForeignBuilder.notes(nil, with: [ForeignField(label: "username", value: Array("u2".utf8))], beside: &set)
                == "username (not kept as a field): u2\n")
    }

    @Test func test_customFieldsKept_emptyValuesTakeNoField() {
        // 70 fields, 10 of them empty: the 60 filled fit, and are put.
        var fields = (0..<70).map { ForeignField(label: "k\($0)", value: Array("v".utf8)) }
        for index in 0..<10 { fields[index].value = [] }
        var set = FieldSet(), tally = FieldRenamingTally()
        #expect(ForeignBuilder.customFieldsKept(fields, notes: nil, entry: "e", in: &set, tally: &tally) == nil)
        #expect(set.count == 60)
        // All 70 filled, no notes: 62 kept and put (one field for `labels`, one for the notes), 8 moved.
        for index in 0..<10 { fields[index].value = Array("v".utf8) }
        var some = FieldSet()
        #expect(ForeignBuilder.customFieldsKept(fields, notes: nil, entry: "e", in: &some, tally: &tally)?.count == 8)
        #expect(some.count == 62)
        var more = FieldSet()
        #expect(ForeignBuilder.customFieldsKept(fields, notes: "n", entry: "e", in: &more, tally: &tally)?.count == 7)
        #expect(more.count == 63)
    }

    /// More URLs, or reader's facts (passkey members, tags), than an entry holds: the first URL,
    /// the facts and as many further URLs as fit are fields, the rest `label: value` lines of the
    /// notes, counted in the one warning; custom fields then go to the notes too. Never a failed
    /// import, on the record path and the reference alike; a version of the item's history too.
    @Test func test_build_urlsAndFactsBeyondAnEntrysAreKeptInItsNotes() throws {
        var urls = item("urls", fields: 10, notes: "n")
        urls.urls = (1...100).map { "https://u\($0).example" }
        urls.urlLabels = [99: "KP2A_URL_99"]
        var facts = item("facts", fields: 2)
        facts.urls = ["https://a.example", "https://b.example"]
        facts.extras = (0..<70).map { (label: "passkey.\($0).rpId", value: "r\($0)") }
        var history = urls
        history.title = "history"
        var version = ForeignVersion(value: Array("old".utf8), modified: 1)
        version.urls = urls.urls
        version.wholeItem = true
        history.history = [version]
        for asEntries in [false, true] {
            let options = ForeignBuildOptions(keepsHistory: true)
            let built = asEntries ? try ForeignBuilder.build(asEntries: source([urls, facts, history]), now: 5, options: options)
                : try ForeignBuilder.build(source([urls, facts, history]), now: 5, options: options)
            let entry = try #require(built.entries.first { $0.name == "urls" }?.entry)
            #expect(entry.fields.count <= VaultLimits.maxFieldsPerEntry)
            let notes = text(entry.fields["notes"])
            // Every URL once, as a field or a line; a line under the source's own label when it had one.
            for position in 1..<100 {
                let field = position == 1 ? "url" : "url\(position)"
                let line = (position == 100 ? "KP2A_URL_99" : field) + ": https://u\(position).example\n"
                #expect((entry.fields[field] != nil) != notes.contains(line), "\(position)")
            }
            #expect(notes.hasPrefix("n\n") && notes.contains("KP2A_URL_99: https://u100.example\n"))
            // The custom fields take what room is left, the rest lines too.
            #expect(entry.fields["k0"] != nil && entry.fields["k9"] == nil && notes.contains("k9: v9\n"), "\(notes)")
            let other = try #require(built.entries.first { $0.name == "facts" }?.entry)
            // The facts first: the second URL is a line.
            let lines = text(other.fields["notes"])
            #expect(other.fields.count <= VaultLimits.maxFieldsPerEntry && other.fields["url"] != nil && other.fields["url2"] == nil)
            #expect(lines.contains("url2: https://b.example\n") && other.fields["k1"] != nil, "\(lines)")
            for index in 0..<70 { #expect((other.fields["passkey.\(index).rpId"] != nil) != lines.contains("passkey.\(index).rpId: r\(index)\n")) }
            #expect(built.warnings.contains { $0.kind == "fields_in_notes" && $0.description.contains("'urls', 'facts'") }, "\(built.warnings)")
            let versions = try #require(built.history?.first { $0.name == "history" }?.versions)
            #expect(versions.count == 1 && versions[0].entry.fields.count <= VaultLimits.maxFieldsPerEntry)
        }
    }
}
