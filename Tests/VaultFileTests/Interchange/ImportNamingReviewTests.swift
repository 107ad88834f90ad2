import Foundation
import SecureMemory
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The import naming against a hostile review (att57): a label cannot add a line of its own to
/// `labels`, and a label finds only the one existing field it names (M3, L7); Bitwarden cards and
/// identities only with a card's or an identity's evidence (M4); a round trip through KeePass or
/// Bitwarden never swaps which account a numbered name holds (M5); the Punycode is RFC 3492's with
/// case kept (L1); an earlier version's hand-made `title` is a field, not its Title (L8).
@Suite struct ImportNamingReviewTests {
    private static func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// A vault holding `entries` (name, value, fields).
    private static func vault(_ entries: [(String, String, [String: String])], history: Bool = false) throws -> Vault {
        var vault = history ? Vault(history: .standard) : Vault()
        for (index, (name, value, fields)) in entries.enumerated() {
            try vault.put(Entry(value: Array(value.utf8), fields: fields.mapValues { Array($0.utf8) }, created: 1_000, modified: 1_000 + Int64(index)),
                          as: name, now: 1_000 + Int64(index))
        }
        return vault
    }

    // MARK: - M3, L7: labels

    @Test func test_entries_aLabelWithNewlineAndTabAddsNoLineToLabels() throws {
        var item = ForeignItem(title: "site", value: Array("REALPASSWORD".utf8))
        item.username = "alice"
        item.fields = [ForeignField(label: "a\nusername\tapi_key", value: Array("a".utf8))]
        var source = ForeignImport(format: "test")
        source.items = [item]
        let imported = try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions())
        let fields = try #require(imported.entries.first?.entry.fields)
        #expect(Self.text(fields["labels"]) == "a_username_api_key\ta username api_key\n", "one line: \(String(describing: Self.text(fields["labels"])))")
        #expect(ImportedLabels.storable("x\r\ny\u{85}") == "x  y ")
    }

    @Test func test_entries_aFieldNamedAsItWasKeepsItsNameWhateverTheOrder() throws {
        // recheck57 N1: `a b` (cleaned to a_b) before `a_b` took a_b and left `a_b` as a_b_2.
        for order in [[("a b", "AB1"), ("a_b", "AB2")], [("a_b", "AB2"), ("a b", "AB1")]] {
            var item = ForeignItem(title: "e", value: Array("pw".utf8))
            item.fields = order.map { ForeignField(label: $0.0, value: Array($0.1.utf8)) } + [ForeignField(label: "title", value: Array("Dr".utf8))]
            var source = ForeignImport(format: "test")
            source.items = [item]
            let imported = try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions())
            let fields = try #require(imported.entries.first?.entry.fields)
            #expect(Self.text(fields["a_b"]) == "AB2" && Self.text(fields["a_b_2"]) == "AB1", "\(order): \(fields.keys.sorted())")
            #expect(Self.text(fields["title_2"]) == "Dr", "a reserved name still gives way")
        }
    }

    @Test func test_resolve_anInjectedLabelsLineNeverNamesAnotherField() throws {
        // A vault an earlier import wrote: its label's newline and tab made a line of their own.
        let vault = try Self.vault([("site", "REALPASSWORD", ["username": "alice", "a_username_api_key": "a",
                                                              "labels": "a_username_api_key\ta\nusername\tapi_key\n"])])
        #expect(ImportedLabels.resolve("api_key", of: "site", in: vault) == "api_key", "not found, never the username")
        #expect(ImportedLabels.resolve("username", of: "site", in: vault) == "username")
    }

    @Test func test_resolve_aLabelOfTwoFieldsOrBlankNamesNone() throws {
        let vault = try Self.vault([("acct", "pw", ["PIN": "1", "PIN_2": "2", "field": "19", "___": "20", "xn--r0a4cp": "3",
                                                    "labels": "PIN_2\tPin\nPIN\tPin\nfield\t\n___\t   \nxn--r0a4cp\tПин\n"])])
        #expect(ImportedLabels.resolve("Pin", of: "acct", in: vault) == "Pin", "two fields share the label: neither")
        #expect(ImportedLabels.resolve("", of: "acct", in: vault) == "")
        #expect(ImportedLabels.resolve("   ", of: "acct", in: vault) == "   ")
        #expect(ImportedLabels.resolve("Пин", of: "acct", in: vault) == "xn--r0a4cp", "an exact, single label still finds its field")
    }

    // MARK: - L1: Punycode

    @Test func test_encode_keepsCaseUnlikeIDNA() {
        #expect(Punycode.encode(Array("Пин".unicodeScalars)) == "r0a4cp")
        #expect(Punycode.encode(Array("пин".unicodeScalars)) == "h1ake", "IDNA's form, of the lowercased label")
        #expect(ImportedNameCleaner.fieldName(fromLabel: "Пин") == "xn--r0a4cp")
    }

    // MARK: - M4: Bitwarden cards and identities

    private static func bitwardenItems(_ vault: Vault) throws -> [String: [String: Any]] {
        var written = try BitwardenJSONExport.write(vault, prefix: "")
        defer { SecureMemory.wipe(&written.bytes) }
        let document = try JSONSerialization.jsonObject(with: Data(written.bytes)) as? [String: Any]
        var items: [String: [String: Any]] = [:]
        for case let item as [String: Any] in document?["items"] as? [Any] ?? [] { items[item["name"] as? String ?? ""] = item }
        return items
    }

    @Test func test_bitwardenJSON_handMadeEntriesWithCardOrIdentityFieldsStayWhatTheyAre() throws {
        let items = try Self.bitwardenItems(try Self.vault([
            ("router", "routerpw-S3cret", ["brand": "Netgear", "model": "R7000"]),
            ("licence", "ABCD-1234-EFGH", ["expYear": "2030", "expMonth": "1"]),
            ("numbered", "pw", ["number": "42"]),
            ("digits", "1234567890123", ["brand": "x"]),
            ("person", "", ["firstName": "Ann"]),
            ("gadget", "", ["brand": "Acme"]),
        ]))
        for name in ["router", "licence", "numbered", "digits"] {
            let item = try #require(items[name])
            #expect(item["type"] as? Int == 1 && item["card"] == nil, "\(name) stays a login")
        }
        #expect((items["router"]?["login"] as? [String: Any])?["password"] as? String == "routerpw-S3cret")
        #expect((items["router"]?["fields"] as? [[String: Any]])?.contains { $0["name"] as? String == "brand" } == true)
        #expect(items["person"]?["type"] as? Int == 2, "one identity field on no value: a note")
        #expect(items["gadget"]?["type"] as? Int == 2, "one card field on no value: a note")
    }

    @Test func test_bitwardenJSON_whatACardOrIdentityImportLeavesIsStillOne() throws {
        let items = try Self.bitwardenItems(try Self.vault([
            ("Visa", "4111 1111 1111 1111", ["brand": "Visa", "code": "123"]),
            ("blank card", "", ["cardholderName": "Ann Lee", "expYear": "2030"]),
            ("Me", "", ["firstName": "Ann", "lastName": "Lee", "username": "annl"]),
        ]))
        #expect(items["Visa"]?["type"] as? Int == 3 && (items["Visa"]?["card"] as? [String: Any])?["number"] as? String == "4111 1111 1111 1111")
        #expect(items["blank card"]?["type"] as? Int == 3)
        #expect(items["Me"]?["type"] as? Int == 4)
        #expect(BitwardenJSONExport.isCardNumber(Array("4111111111111112".utf8)) == false, "fails the Luhn check")
    }

    // MARK: - M5: numbered names through a round trip

    /// Two accounts an import named `GitHub` (alice's, user since renamed `zoe`) and `GitHub (2)` (bob's).
    private static func renamedAccount(username first: String) throws -> Vault {
        try vault([("GitHub", "ALICEPW", ["username": first]), ("GitHub (2)", "BOBPW", ["username": "bob", "title": "GitHub"])])
    }

    /// The name a fresh import of `items` gives each value.
    private static func namesByValue(_ items: [ForeignItem]) -> [String: String] {
        let named = ForeignNaming.names(of: items, prefix: []).named
        return Dictionary(uniqueKeysWithValues: zip(items, named).map { (text($0.0.value)!, $0.1.name) })
    }

    @Test func test_keepassXML_roundTripNeverSwapsWhichAccountANameHolds() throws {
        var written = try KeePassXMLExport.write(try Self.renamedAccount(username: "zoe"), prefix: "", now: 0)
        defer { SecureMemory.wipe(&written.bytes) }
        let read = try KeePassXMLReader.read(written.bytes, now: 0)
        #expect(Self.namesByValue(read.items) == ["ALICEPW": "GitHub", "BOBPW": "GitHub (2)"])
        #expect(!Self.text(written.bytes)!.contains("<Key>title</Key>"), "the import's title is no custom string")
    }

    @Test func test_bitwardenJSON_roundTripNeverSwapsWhichAccountANameHolds() throws {
        var written = try BitwardenJSONExport.write(try Self.renamedAccount(username: "zoe"), prefix: "")
        defer { SecureMemory.wipe(&written.bytes) }
        let read = try BitwardenJSON.read(written.bytes, now: 0)
        #expect(Self.namesByValue(read.items) == ["ALICEPW": "GitHub", "BOBPW": "GitHub (2)"])
    }

    @Test func test_keepassXML_anUnchangedNumberingStillExportsTheBareTitle() throws {
        var written = try KeePassXMLExport.write(try Self.renamedAccount(username: "alice"), prefix: "", now: 0)
        defer { SecureMemory.wipe(&written.bytes) }
        let read = try KeePassXMLReader.read(written.bytes, now: 0)
        #expect(read.items.map(\.title) == ["GitHub", "GitHub"], "KeePass shows the title twice, as the source had it")
        #expect(Self.namesByValue(read.items) == ["ALICEPW": "GitHub", "BOBPW": "GitHub (2)"])
        #expect(ForeignNaming.unstableTitles(names: ["GitHub", "GitHub (2)"], vault: try Self.renamedAccount(username: "alice")).isEmpty)
    }

    // MARK: - L8: an earlier version's title

    @Test func test_keepassXML_anEarlierVersionsHandMadeTitleIsAField() throws {
        var vault = Vault(history: .standard)
        try vault.put(Entry(value: Array("pw-old".utf8), created: 1_000, modified: 1_000), as: "staff/bob", now: 1_000)
        try vault.put(Entry(value: Array("pw-old".utf8), fields: ["title": Array("Senior Engineer".utf8)], created: 1_000, modified: 2_000),
                      as: "staff/bob", now: 2_000)
        try vault.put(Entry(value: Array("pw-new".utf8), fields: ["title": Array("Senior Engineer".utf8)], created: 1_000, modified: 3_000),
                      as: "staff/bob", now: 3_000)
        var written = try KeePassXMLExport.write(vault, prefix: "", now: 0)
        defer { SecureMemory.wipe(&written.bytes) }
        let read = try KeePassXMLReader.read(written.bytes, now: 0)
        let bob = try #require(read.items.first)
        #expect(bob.title == "bob" && bob.history.count == 2)
        #expect(!Self.text(written.bytes)!.contains("<Key>Title</Key><Value>Senior Engineer</Value>"), "no version is titled by the hand-made field")
    }
}
