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

    // MARK: - Bitwarden JSON

    private static func bitwarden(_ item: String) -> [UInt8] {
        Array("{\"encrypted\": false, \"folders\": [], \"items\": [\(item)]}".utf8)
    }

    private static let passkeyItem = """
        {"id": "i1", "type": 1, "name": "GitHub", "newThing": true, "key": "k", "deletedDate": null, \
        "login": {"username": "alice", "password": "pw", "passwordRevisionDate": "2024-01-01T00:00:00.000Z", \
        "fido2Credentials": [{"credentialId": "cid", "keyType": "public-key", "keyAlgorithm": "ECDSA", "keyCurve": "P-256", \
        "keyValue": "PRIVATE-KEY-VALUE", "rpId": "github.com", "userHandle": "uh", "userName": "alice", "counter": "0", \
        "rpName": "GitHub", "userDisplayName": "Alice", "discoverable": "true", "creationDate": "2024-02-01T00:00:00.000Z"}], \
        "uris": [{"uri": "https://github.com", "match": null, "shiny": 1}]}, \
        "passwordHistory": [{"password": "p1", "lastUsedDate": "2024-03-01T00:00:00.000Z"}, {"password": "p0", "lastUsedDate": "2023-06-01T00:00:00.000Z"}], \
        "revisionDate": "2024-05-01T00:00:00.000Z", "creationDate": "2023-01-01T00:00:00.000Z"}
        """

    @Test func test_bitwardenJSON_keepsPasskeysAsFieldsAndCountsUnknownKeys() throws {
        for bytes in [Self.bitwarden(Self.passkeyItem),
                      // A fraction: the direct reader declines it, the decoder and the key scan read it.
                      Self.bitwarden(Self.passkeyItem.replacing("\"newThing\": true", with: "\"newThing\": 1.5"))] {
            let imported = try Interchange.read(bytes, format: .bitwardenJSON, now: 0, options: ForeignBuildOptions(keepsHistory: true))
            let entry = try #require(imported.entries.first?.entry)
            #expect(text(entry.fields["passkey.keyValue"]) == "PRIVATE-KEY-VALUE" && text(entry.fields["passkey.rpId"]) == "github.com")
            #expect(text(entry.fields["passkey.counter"]) == "0" && entry.fields.keys.filter { $0.hasPrefix("passkey.") }.count == 13)
            let warnings = imported.warnings.map(\.description)
            for key in ["newThing", "login.passwordRevisionDate", "login.uris.shiny"] {
                #expect(warnings.contains { $0.contains("unknown key '\(key)' of Bitwarden items, in 1 item") }, "\(warnings)")
            }
            #expect(!warnings.contains { $0.contains("'key'") || $0.contains("deletedDate") || $0.contains("PRIVATE") }, "\(warnings)")
            // Each earlier password replaced at its own lastUsedDate.
            let versions = try #require(imported.history?.first?.versions)
            #expect(versions.map { text($0.entry.value) } == ["p1", "p0"])
            #expect(versions.map(\.replaced) == ["2024-03-01T00:00:00.000Z", "2023-06-01T00:00:00.000Z"].compactMap(Timestamps.parse))
        }
    }

    @Test func test_passkeyField_namesAndParsesEachPasskeysMembers() {
        #expect(BitwardenJSON.passkeyField(0, "rpId") == "passkey.rpId" && BitwardenJSON.passkeyField(1, "rpId") == "passkey2.rpId")
        #expect(BitwardenJSON.passkeyField("passkey.rpId").map { "\($0.index) \($0.key)" } == "0 rpId")
        #expect(BitwardenJSON.passkeyField("passkey2.keyValue").map { "\($0.index) \($0.key)" } == "1 keyValue")
        for other in ["passkey", "passkey.", "passkey1.rpId", "passkey02.rpId", "passkeys.rpId", "password"] {
            #expect(BitwardenJSON.passkeyField(other) == nil, "\(other)")
        }
        #expect(ForeignBuilder.reservedMeaning(of: "passkey.rpId") != nil, "a custom field so named is stored under another name")
    }

    // MARK: - Dashlane's CSV files

    private func dashlane(_ text: String) throws(VaultError) -> ForeignImport { try DashlaneCSVReader.read(Array(text.utf8), now: 0) }

    private func field(_ item: ForeignItem, _ label: String) -> String? { text(item.fields.first { $0.label == label }?.value) }

    @Test func test_dashlaneCSV_readsEachFileOfTheExportByItsHeader() throws {
        let notes = try dashlane("title,note\nWifi,the wifi password is x\n")
        #expect(notes.items.count == 1 && notes.items[0].title == "Wifi" && notes.items[0].notes == "the wifi password is x" && notes.items[0].urls.isEmpty)
        let payments = try dashlane("type,account_name,account_holder,cc_number,code,expiration_month,expiration_year\n"
                                    + "payment_card,Visa,Jo,4111111111111111,123,12,2030\n")
        #expect(payments.items.map(\.title) == ["Visa"] && field(payments.items[0], "cc_number") == "4111111111111111")
        #expect(field(payments.items[0], "account_name") == nil && field(payments.items[0], "type") == "payment_card")
        let ids = try dashlane("type,number,name,issue_date,expiration_date,place_of_issue,state\npassport,X123,Jo Doe,2020-01-01,2030-01-01,Paris,\n")
        #expect(ids.items.map(\.title) == ["Jo Doe"] && field(ids.items[0], "number") == "X123")
        let people = try dashlane("type,title,first_name,last_name,item_name,email\nidentity,Mr,Jo,Doe,Me,jo@example.com\n")
        #expect(people.items.map(\.title) == ["Me"] && field(people.items[0], "first_name") == "Jo" && field(people.items[0], "title") == "Mr")
        // A first row of Dashlane's column names that no file has is refused, never read as a headerless row.
        do { _ = try dashlane("username,url,note\na,b,c\n"); Issue.record("read") } catch {
            #expect(error.description.contains("Dashlane's column names"), "\(error)")
        }
        #expect(try dashlane("Wifi,https://w.example,me,pw,n\n").items.map(\.title) == ["Wifi"], "the headerless form still reads")
    }

    @Test func test_sniff_tellsDashlanesFilesAndAnEncryptedBitwardenExport() {
        for header in ["title,note", "type,account_name,account_holder,cc_number,code", "type,number,name,issue_date,expiration_date,place_of_issue,state",
                       "type,title,first_name,middle_name,last_name,login,item_name"] {
            #expect(FormatSniffer.sniff(Array((header + "\nx\n").utf8))?.format == "dashlane-csv", "\(header)")
        }
        let encrypted = FormatSniffer.sniff(Array("{\"encrypted\": true, \"passwordProtected\": true, \"salt\": \"s\", \"kdfType\": 0, \"data\": \"2.x\"}".utf8))
        #expect(encrypted?.format == nil && encrypted?.advice?.contains("unencrypted JSON") == true, "\(String(describing: encrypted))")
    }

    @Test func test_bitwardenJSON_foldersTwiceByIdRefusedAndUnknownFoldersCounted() throws {
        // att58 F9: two folders of one id placed the item in the first without a word; an id no
        // folder has put it outside folders without a word.
        let twice = Array(("{\"encrypted\": false, \"folders\": [{\"id\": \"f\", \"name\": \"A\"}, {\"id\": \"f\", \"name\": \"B\"}], "
                           + "\"items\": [{\"type\": 2, \"name\": \"n\", \"folderId\": \"f\", \"notes\": \"x\"}]}").utf8)
        #expect(throws: VaultError.self) { try BitwardenJSON.read(twice, now: 0) }
        let unknown = Array(("{\"encrypted\": false, \"folders\": [{\"id\": \"f\", \"name\": \"A\"}], "
                             + "\"items\": [{\"type\": 2, \"name\": \"n\", \"folderId\": \"nope\", \"notes\": \"x\"}, "
                             + "{\"type\": 2, \"name\": \"m\", \"folderId\": \"f\", \"notes\": \"y\"}]}").utf8)
        let read = try BitwardenJSON.read(unknown, now: 0)
        #expect(read.items.map(\.folders) == [[], ["A"]])
        #expect(read.notKept.contains { $0.key.hasPrefix("Bitwarden folders the export does not hold") && $0.value == 1 }, "\(read.notKept)")
    }

    // MARK: - Why a loss is a loss

    @Test func test_notKept_saysWhyForEachKind() {
        func said(_ what: String, _ reason: NotKeptReason) -> String { ImportWarning.notKept(what: what, count: 2, reason: reason).description }
        #expect(said("entries in KeePass's recycle bin", .deletedInSource)
                == "not kept: entries in KeePass's recycle bin, in 2 items (left out: deleted in the source; restore them there and export again to bring them in)")
        #expect(said("1Password's unknown item state 'x'", .unknownState)
                == "not kept: 1Password's unknown item state 'x', in 2 items (imported as active items: check them in 1Password, and remove those you do not want)")
        #expect(said("plain (unencrypted) YAML values", .unencryptedValues)
                == "not kept: plain (unencrypted) YAML values, in 2 items (left out: the import takes the encrypted values, the file's secrets)")
        #expect(said("unknown key 'x' of Bitwarden items", .laterFormat)
                == "not kept: unknown key 'x' of Bitwarden items, in 2 items (this version of vaultfile does not read it: a later version of the export's format)")
        #expect(said("sops empty values (the file's MAC does not cover an empty value)", .statedInText)
                == "not kept: sops empty values (the file's MAC does not cover an empty value), in 2 items")
        #expect(said("Bitwarden's URI match rules", .noPlace) == "not kept: Bitwarden's URI match rules, in 2 items (vaultfile has no place for it)")
    }

    @Test func test_readers_nameTheReasonOfEachLossWhereTheyCountIt() throws {
        func reasons(_ imported: ImportedEntries) -> [String: NotKeptReason] {
            var found: [String: NotKeptReason] = [:]
            for case .notKept(let what, _, let reason) in imported.warnings { found[what] = reason }
            return found
        }
        let csv = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n"
            + "\"Root/Recycle Bin\",\"gone\",\"\",\"p\",\"\",\"\",\"\",\"0\",\"\",\"\"\n\"Root\",\"kept\",\"\",\"p\",\"\",\"\",\"\",\"0\",\"\",\"\"\n"
        let keepass = try Interchange.read(Array(csv.utf8), format: .keepassxcCSV, now: 0)
        #expect(reasons(keepass) == ["entries in KeePass's recycle bin": .deletedInSource], "\(keepass.warnings)")
        // A later format's key whose name holds "deleted" is one of a later format, not a deletion:
        // the reason is the reader's, never read off the text (the reasons were once string tests).
        let bitwarden = Array((#"{"encrypted": false, "folders": [], "items": [{"type": 2, "name": "n", "notes": "x", "folderId": "nope", "#
                               + #""reprompt": 1, "purgeDeleted": true}]}"#).utf8)
        let read = try Interchange.read(bitwarden, format: .bitwardenJSON, now: 0)
        #expect(reasons(read) == ["unknown key 'purgeDeleted' of Bitwarden items": .laterFormat,
                                  "Bitwarden's master-password re-prompt": .noPlace,
                                  "Bitwarden folders the export does not hold (the items' folderId; imported outside any folder)": .statedInText],
                "\(read.warnings)")
        #expect(read.warnings.contains { $0.description.hasPrefix("not kept: unknown key 'purgeDeleted' of Bitwarden items, in 1 item (this version of vaultfile does not read it") })
    }
}
