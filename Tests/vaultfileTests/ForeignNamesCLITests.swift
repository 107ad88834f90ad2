import Foundation
import TestSupport
import Testing

/// Names and fields of imported entries going out again (cold review of issues 44 and 45): a
/// source field called like a field vaultfile reads as more than a field (`title`, `totp`,
/// `tags`, `attachment.*`…) is stored under another name and given back under its label, never
/// as the entry's title, TOTP, tags or attachment; Bitwarden identities and cards go back as
/// such; repeated titles come back as they were; non-ASCII labels give distinct field names that
/// `get --field LABEL` finds; the rename lines say which account got which name; KeePass's own
/// `KP2A_URL_1` stays its name. Through the built binary, and keepassxc-cli where it is installed.
@Suite struct ForeignNamesCLITests {
    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
        try cli.run(["get", name, "--field", field] + cli.unlock())
    }

    /// The items of a Bitwarden JSON export, by name, without their ids and dates (new each export).
    private func items(_ json: [UInt8]) throws -> [String: [String: Any]] {
        let document = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any]
        var items: [String: [String: Any]] = [:]
        for case var item as [String: Any] in document?["items"] as? [Any] ?? [] {
            for key in ["id", "folderId", "creationDate", "revisionDate"] { item[key] = nil }
            items[item["name"] as? String ?? ""] = item
        }
        return items
    }

    private static let bitwarden = """
        {"encrypted": false, "folders": [], "items": [
          {"id": "1", "type": 1, "name": "Bank", "notes": null, "favorite": false,
           "fields": [{"name": "title", "value": "Dr", "type": 0}, {"name": "totp", "value": "custom totp attr", "type": 1},
                      {"name": "attachment.x", "value": "not a file", "type": 1}, {"name": "tags", "value": "t1", "type": 0}],
           "login": {"uris": [{"match": null, "uri": "https://bank.example"}], "username": "u", "password": "pw", "totp": null}},
          {"id": "2", "type": 4, "name": "Me", "notes": "id notes", "favorite": false,
           "fields": [{"name": "title", "value": "custom", "type": 1}],
           "identity": {"title": "Mr", "firstName": "Ann", "middleName": null, "lastName": "Lee", "address1": null, "address2": null,
                        "address3": null, "city": "Oslo", "state": null, "postalCode": null, "country": null, "company": null,
                        "email": "ann@example.com", "phone": null, "ssn": "123", "username": "annl", "passportNumber": null, "licenseNumber": null}},
          {"id": "3", "type": 3, "name": "Visa", "notes": null, "favorite": false,
           "fields": [{"name": "PIN", "value": "1234", "type": 1}],
           "card": {"cardholderName": "Ann Lee", "brand": "Visa", "number": "4111111111111111", "expMonth": "1", "expYear": "2030", "code": "123"}},
          {"id": "4", "type": 2, "name": "Note", "notes": "just text", "favorite": true, "secureNote": {"type": 0}, "fields": []},
          {"id": "5", "type": 1, "name": "Mail", "notes": null, "favorite": false, "fields": [],
           "login": {"uris": [], "username": "ann", "password": "m-pw", "totp": "JBSWY3DPEHPK3PXP"}}
        ]}
        """

    // MARK: - H1: reserved field names

    @Test func test_import_reservedFieldNamesAreStoredUnderAnotherName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes(Self.bitwarden))
        let result = try cli.run(["import", "--format", "bitwarden-json", cli.path("bw.json")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "Bank", "title_2").text == "Dr")
        #expect(try field(cli, "Bank", "totp_2").text == "custom totp attr")
        #expect(try field(cli, "Bank", "attachment_2.x").text == "not a file")
        #expect(try field(cli, "Bank", "tags_2").text == "t1")
        #expect(try field(cli, "Bank", "title").text == "Dr", "found by its label")
        let fields = try cli.run(["get", "Bank", "--json"] + cli.unlock()).text
        #expect(!fields.contains("\"title\"") && !fields.contains("\"totp\"") && !fields.contains("\"tags\""), "\(fields)")
        #expect(try cli.run(["totp", "Bank"] + cli.unlock()).status != 0)
        #expect(try field(cli, "Me", "title_2").text == "Mr", "the identity's title")
        #expect(try field(cli, "Me", "title_3").text == "custom", "the custom field after it")
        #expect(try field(cli, "Me", "username").text == "annl", "the identity's username is the entry's")
        #expect(result.stderr.contains("field 'title' stored as 'title_2' in 2 entries"), "\(result.stderr)")
        #expect(result.stderr.contains("vaultfile reads a field 'totp' as the entry's TOTP"), "\(result.stderr)")
        // `get --field LABEL` finds the first field of that label.
        #expect(try field(cli, "Bank", "attachment.x").text == "not a file")
    }

    @Test func test_export_reservedFieldNamesGoBackAsCustomFieldsNeverAsMetadata() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes(Self.bitwarden))
        #expect(try cli.run(["import", "--format", "bitwarden-json", cli.path("bw.json")] + cli.unlock()).status == 0)
        let written = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        #expect(written.status == 0, "\(written.stderr)")
        let items = try items(written.stdout)
        #expect(Set(items.keys) == ["Bank", "Me", "Visa", "Note", "Mail"], "\(items.keys)")
        let bank = items["Bank"] ?? [:]
        let fields = (bank["fields"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "")=\($0["value"] ?? "")" }.sorted()
        #expect(fields == ["attachment.x=not a file", "tags=t1", "title=Dr", "totp=custom totp attr"], "\(fields)")
        #expect((bank["login"] as? [String: Any])?["totp"] is NSNull)
        // keepass-xml: the Title is the name, the custom strings are custom strings, no otp, no Tags, no attachment.
        let xml = try cli.run(["export", "--format", "keepass-xml", "--out", "-", "--force"] + cli.unlock()).text
        #expect(xml.contains("<Key>Title</Key><Value>Bank</Value>"), "\(xml)")
        for key in ["title", "totp", "attachment.x", "tags"] { #expect(xml.contains("<Key>\(key)</Key>"), "\(key)") }
        #expect(!xml.contains("<Key>otp</Key>") || !xml.contains("CUSTOMTOTPATTR"))
        #expect(!xml.contains("<Tags>t1</Tags>") && !xml.contains("<Binary><Key>x</Key>"), "\(xml)")
    }

    @Test func test_export_aFieldTitleMadeByHandIsAFieldNotTheName() throws {
        let cli = try CLI.withVault(["Bank": "pw"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "Bank", "--field", "title"] + cli.unlock(), stdin: bytes("Dr")).status == 0)
        #expect(try cli.run(["set", "Bank", "--field", "totp"] + cli.unlock(), stdin: bytes("code 1890!")).status == 0)
        let items = try items(try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock()).stdout)
        #expect(Array(items.keys) == ["Bank"], "\(items.keys)")
        let xml = try cli.run(["export", "--format", "keepass-xml", "--out", "-", "--force"] + cli.unlock()).text
        #expect(xml.contains("<Key>Title</Key><Value>Bank</Value>") && xml.contains("<Key>title</Key>"), "\(xml)")
        #expect(xml.contains("<Value ProtectInMemory=\"True\">code 1890!</Value>") && !xml.contains("secret=CODE"), "text that is no Base32 secret is not made one")
    }

    // MARK: - M1: every Bitwarden type round trips

    @Test func test_export_bitwardenJSONRoundTripKeepsEveryTypeAndField() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes(Self.bitwarden))
        #expect(try cli.run(["import", "--format", "bitwarden-json", cli.path("bw.json")] + cli.unlock()).status == 0)
        let first = try cli.run(["export", "--format", "bitwarden-json", "--out", cli.path("out1.json")] + cli.unlock())
        #expect(first.status == 0, "\(first.stderr)")
        let exported = try items(try cli.read("out1.json"))
        let original = try items(bytes(Self.bitwarden))
        for name in ["Me", "Visa", "Note", "Mail", "Bank"] {
            let got = exported[name] ?? [:], was = original[name] ?? [:]
            #expect(got["type"] as? Int == was["type"] as? Int, "\(name): type")
            #expect(got["notes"] as? String == was["notes"] as? String, "\(name): notes")
        }
        let identity = exported["Me"]?["identity"] as? [String: Any] ?? [:]
        let wanted = original["Me"]?["identity"] as? [String: Any] ?? [:]
        #expect(identity.count == wanted.count)
        for (key, value) in wanted { #expect("\(identity[key] ?? "missing")" == "\(value)", "identity.\(key)") }
        let card = exported["Visa"]?["card"] as? [String: Any] ?? [:]
        for (key, value) in original["Visa"]?["card"] as? [String: Any] ?? [:] { #expect("\(card[key] ?? "missing")" == "\(value)", "card.\(key)") }
        #expect((exported["Visa"]?["fields"] as? [[String: Any]])?.first?["name"] as? String == "PIN")
        #expect((exported["Me"]?["fields"] as? [[String: Any]])?.map { $0["value"] as? String } == ["custom"])
        #expect(exported["Note"]?["favorite"] as? Bool == true)
        // Read back and written again: the same items.
        let again = try CLI.withVault([:]); defer { again.directory.remove() }
        #expect(try again.run(["import", "--format", "bitwarden-json", cli.path("out1.json")] + again.unlock()).status == 0)
        #expect(try again.run(["export", "--format", "bitwarden-json", "--out", again.path("out2.json")] + again.unlock()).status == 0)
        let second = try items(try again.read("out2.json"))
        for name in exported.keys {
            let one = try JSONSerialization.data(withJSONObject: exported[name] ?? [:], options: .sortedKeys)
            let two = try JSONSerialization.data(withJSONObject: second[name] ?? [:], options: .sortedKeys)
            #expect(one == two, "\(name): \(String(decoding: one, as: UTF8.self)) vs \(String(decoding: two, as: UTF8.self))")
        }
    }

    // MARK: - M2 and L5: repeated titles

    @Test func test_import_numberedTitlesKeepTheTitleAndSayWhichAccount() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            Personal,,login,Dup,,,0,https://a.example/x,zed,p1,
            Personal,,login,Dup,,,0,https://b.example,amy,p2,

            """))
        let result = try cli.run(["import", "--format", "bitwarden-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "Personal/Dup (2)", "title").text == "Dup")
        #expect(try field(cli, "Personal/Dup (2)", "username").text == "zed")
        #expect(result.stderr.contains("renamed 'Personal/Dup' to 'Personal/Dup (2)' (user zed, a.example; "), "\(result.stderr)")
        #expect(!result.stderr.contains("p1"), "never a secret")
        let items = try items(try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock()).stdout)
        #expect(items.count == 1 && items["Dup"] != nil, "both items are named Dup again (the dictionary keeps one): \(items.keys)")
        let xml = try cli.run(["export", "--format", "keepass-xml", "--out", "-", "--force"] + cli.unlock()).text
        #expect(xml.components(separatedBy: "<Key>Title</Key><Value>Dup</Value>").count == 3, "\(xml)")
    }

    @Test func test_import_aFirefoxRowWithoutTitleSaysTheSiteItWasNamedAfter() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("f.csv", bytes("""
            "url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"
            "https://auth.example.com","bob","p1",,"",,"1","1","1"
            "https://auth.example.com","amy","p2",,"",,"1","1","1"

            """))
        let result = try cli.run(["import", "--format", "firefox-csv", cli.path("f.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("named an item without a title 'auth.example.com (2)' after its site auth.example.com (user bob, auth.example.com; "),
                "\(result.stderr)")
        #expect(!result.stderr.contains("renamed ''"), "\(result.stderr)")
        let json = try cli.run(["import", "--format", "firefox-csv", "--dry-run", "--json", "--prefix", "again", cli.path("f.csv")] + cli.unlock())
        #expect(json.text.contains("\"account\":\"user bob, auth.example.com\""), "\(json.text)")
        #expect(json.text.contains("\"named_after\":\"its site auth.example.com\""), "\(json.text)")
    }

    // MARK: - M3: non-ASCII labels

    @Test func test_import_nonASCIILabelsGiveDistinctNamesThatGetFindsByLabel() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,Bank,,"Пин: 1111
            Код: 2222
            密码: 3333",0,,u,pw,

            """))
        let result = try cli.run(["import", "--format", "bitwarden-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let list = try cli.run(["get", "Bank", "--json"] + cli.unlock()).text
        for stored in ["xn--r0a4cp", "xn--m0a6c3a", "xn--vctw07d"] { #expect(list.contains("\"\(stored)\""), "\(stored): \(list)") }
        #expect(result.stderr.contains("field 'Пин' stored as 'xn--r0a4cp'"), "\(result.stderr)")
        for (label, value) in [("Пин", "1111"), ("Код", "2222"), ("密码", "3333"), ("xn--r0a4cp", "1111")] {
            let got = try field(cli, "Bank", label)
            #expect(got.status == 0 && got.text == value, "\(label): \(got.stderr)")
        }
        #expect(try field(cli, "Bank", "Нет").status != 0)
        // The labels go back out: Bitwarden's fields carry them.
        let items = try items(try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock()).stdout)
        let names = (items["Bank"]?["fields"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }.sorted()
        #expect(names == ["Код", "Пин", "密码"], "\(names)")
    }

    @Test(.enabled(if: ShareCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_share_findsAFieldByTheLabelAnImportKept() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Bank,,Пин: 1111,0,,u,pw,\n"))
        #expect(try cli.run(["import", "--format", "bitwarden-csv", cli.path("c.csv")] + cli.unlock()).status == 0)
        let key = try ShareCLITests.ageKey(cli, "key.txt")
        let shared = try cli.run(["share", "Bank", "--field", "Пин", "--recipient", key, "--armor"] + cli.unlock())
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try ShareCLITests.ageDecrypt(cli, identity: "key.txt", shared.stdout).stdout == bytes("1111"))
        let missing = try cli.run(["share", "Bank", "--field", "Нет", "--recipient", key, "--armor"] + cli.unlock())
        #expect(missing.status == 1 && missing.stdout.isEmpty, "\(missing.stderr)")
    }
}

/// The same through keepassxc-cli (an outside tool: run with the other ExternalTools suites).
extension ExternalTools {
    @Suite struct ForeignNamesKeePassXCCLITests {
        private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
            try cli.run(["get", name, "--field", field] + cli.unlock())
        }


        @Test func test_export_kdbxRoundTripThroughKeePassXCKeepsTitlesCustomStringsAndURLNames() throws {
            guard let tool = ExternalTools.KDBXImportCLITests.keepassxc else { print(ExternalTools.KDBXImportCLITests.skipped); return }
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            try cli.write("seed.xml", bytes("""
                <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Passwords</Name>
                <Entry><String><Key>Title</Key><Value>Bank</Value></String><String><Key>Password</Key><Value>pw</Value></String>
                <String><Key>title</Key><Value>Dr</Value></String><String><Key>totp</Key><Value>custom totp attr</Value></String>
                <String><Key>attachment.x</Key><Value>a string</Value></String><String><Key>tags</Key><Value>custom tags</Value></String>
                <String><Key>URL</Key><Value>https://bank.example</Value></String><String><Key>KP2A_URL_1</Key><Value>https://two.example</Value></String></Entry>
                <Entry><String><Key>Title</Key><Value>Dup</Value></String><String><Key>UserName</Key><Value>zed</Value></String><String><Key>Password</Key><Value>z</Value></String></Entry>
                <Entry><String><Key>Title</Key><Value>Dup</Value></String><String><Key>UserName</Key><Value>amy</Value></String><String><Key>Password</Key><Value>a</Value></String></Entry>
                </Group></Root></KeePassFile>
                """))
            try cli.write("kpw", bytes("pw"))
            let made = try ExternalTools.KDBXImportCLITests.keepass(cli, tool, "printf 'pw\\npw\\n' | $KP import -q -p -t 100 seed.xml kp.kdbx")
            #expect(made.status == 0, "\(made.stderr)")
            let imported = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock())
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try field(cli, "Bank", "KP2A_URL_1").text == "https://two.example", "the URL's KeePass name finds it")
            let out = try cli.run(["export", "--format", "kdbx", "--out", cli.path("back.kdbx"), "--new-password-file", cli.path("kpw")]
                                  + ExternalTools.KDBXExportCLITests.tiny + cli.unlock())
            #expect(out.status == 0, "\(out.stderr)")
            func show(_ database: String, _ entry: String) throws -> String {
                let result = try ExternalTools.KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP show -q -s --all \(database) '\(entry)'")
                #expect(result.status == 0, "\(database) \(entry): \(result.stderr)")
                // KeePassXC lists the attributes in its own order; the lines as a set.
                return result.text.split(separator: "\n").filter { !$0.hasPrefix("Uuid:") }.sorted().joined(separator: "\n")
            }
            let back = try show("back.kdbx", "Bank")
            #expect(back == (try show("kp.kdbx", "Bank")), "\(back)")
            #expect(back.contains("Title: Bank") && back.contains("title: Dr") && back.contains("KP2A_URL_1: https://two.example"), "\(back)")
            #expect(!back.contains("otp: otpauth") && !back.contains("Tags: custom tags"), "\(back)")
            let attachments = try ExternalTools.KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP attachment-export -q --stdout back.kdbx Bank x || true")
            #expect(attachments.text.isEmpty, "no attachment x: \(attachments.text)")
            let list = try ExternalTools.KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP ls -q back.kdbx")
            #expect(list.text.split(separator: "\n").sorted() == ["Bank", "Dup", "Dup"], "\(list.text)")
        }
    }
}
