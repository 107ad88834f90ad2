import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat

/// The low findings of cold62 on `import` (issue 44), through the built binary: a `--prefix` too
/// long for the names under it refused as the prefix's fault (L1 c); 1pux item times past 9999
/// left out and said, and exports that never write a year of five digits (L2); a TOTP compared
/// by what computes its codes in `--skip-existing`, and fields of one label numbered the same in
/// any order (L3); `share --field`'s note (L4); warnings
/// that name entries by their vault names (L5); Ctrl-C at the identities prompt (L7).
@Suite struct ImportLows62CLITests {
    private static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    // MARK: - L1 c: a --prefix that leaves no room

    @Test func test_import_prefixTooLongIsRefusedNamingThePrefixBeforeTheFileIsRead() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let long = String(repeating: "p", count: 1_000)
        // The file does not exist: the refusal comes before it is read.
        let refused = try cli.run(["import", "--prefix", long, cli.path("missing.csv")] + cli.unlock())
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--prefix is 1000 bytes") && refused.stderr.contains("give at most 946 bytes"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("missing.csv"), "\(refused.stderr)")
        // At the limit, a long title under it is shortened, not refused.
        try cli.write("c.csv", bytes("name,url,username,password\n\(String(repeating: "t", count: 300)),https://t.example,u,p\n"))
        let kept = try cli.run(["import", "--prefix", String(repeating: "p", count: 946), cli.path("c.csv")] + cli.unlock())
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stderr.contains("too long for a name: cut short"), "\(kept.stderr)")
    }

    // MARK: - L2: 1pux times past 9999

    @Test(.enabled(if: python, "python3 is not installed: skipped"))
    func test_import_1puxTimesPastTheYear9999AreLeftOutAndSaid() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let item = """
            {"uuid": "M1", "createdAt": 1600000000000, "updatedAt": 1650000000, "state": "active", "categoryUuid": "001", \
            "overview": {"title": "MsTimes"}, "details": {"loginFields": [], "password": "pw-now", \
            "passwordHistory": [{"value": "pw-old", "time": 1620000000000}], "sections": []}}
            """
        try ImportLows60CLITests().writeOnePUX(cli, "t.1pux", export: ImportLows60CLITests.export([item, ImportLows60CLITests.item("P2", "Plain")]))
        let imported = try cli.run(["import", "--json", cli.path("t.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("2 item times of 1Password are past the year 9999") && imported.stderr.contains("in 1 item ('MsTimes')"),
                "\(imported.stderr)")
        #expect(imported.text.contains("\"time_replaced\""), "\(imported.text)")
        // created falls back to the item's other time: no year past 9999 anywhere.
        let listed = try cli.run(["list", "--json"] + cli.unlock())
        #expect(listed.text.contains("2022-04-15T05:20:00.000Z") && !listed.text.contains("+"), "\(listed.text)")
        let exported = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        #expect(exported.status == 0 && !exported.text.contains("\"+"), "\(exported.text)")
    }

    // MARK: - L3: a TOTP compared by what computes its codes

    private static func bitwarden(user: String, secret: String) -> String {
        """
        {"encrypted": false, "folders": [], "items": [
          {"id": "1", "type": 1, "name": "GitHub", "notes": null, "favorite": false,
           "login": {"uris": [], "username": "\(user)", "password": "pw", "totp": "\(secret)"}}]}
        """
    }

    @Test func test_skipExisting_aNewUsernameIsNoChangedTOTP() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("a.json", bytes(Self.bitwarden(user: "alice", secret: "JBSWY3DPEHPK3PXP")))
        #expect(try cli.run(["import", cli.path("a.json")] + cli.unlock()).status == 0)
        try cli.write("b.json", bytes(Self.bitwarden(user: "alice2", secret: "JBSWY3DPEHPK3PXP")))
        let renamed = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("b.json")] + cli.unlock())
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(renamed.stderr.contains("the file's field 'username' differs"), "\(renamed.stderr)")
        #expect(!renamed.stderr.contains("'totp'"), "\(renamed.stderr)")
        // A new secret is said.
        try cli.write("c.json", bytes(Self.bitwarden(user: "alice", secret: "GEZDGNBVGY3TQOJQ")))
        let rotated = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("c.json")] + cli.unlock())
        #expect(rotated.stderr.contains("the file's field 'totp' differs"), "\(rotated.stderr)")
    }

    /// L3 b and att63 F2: a newer export in which one of an item's two `API_Key` fields was
    /// rotated moves no other value's name: `--skip-existing` says only that field differs,
    /// `--overwrite` replaces only it.
    @Test func test_import_fieldsOfOneLabelKeepTheirNamesWhenOneValueRotates() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        func export(_ values: [String]) -> [UInt8] {
            let fields = values.map { #"{"name": "API_Key", "value": "\#($0)", "type": 1}"# }.joined(separator: ", ")
            return bytes(#"{"encrypted": false, "folders": [], "items": [{"id": "1", "type": 1, "name": "Svc", "login": {"password": "pw"}, "fields": ["#
                         + fields + "]}]}")
        }
        try cli.write("a.json", export(["zz-second", "aa-first", "mm-middle"]))
        try cli.write("b.json", export(["zz-second", "00-rotated", "mm-middle"]))
        #expect(try cli.run(["import", cli.path("a.json")] + cli.unlock()).status == 0)
        func values() throws -> [String] {
            try ["API_Key", "API_Key_2", "API_Key_3"].map { try cli.run(["get", "Svc", "--field", $0] + cli.unlock()).text }
        }
        #expect(try values() == ["zz-second", "aa-first", "mm-middle"])
        let skipped = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("b.json")] + cli.unlock())
        #expect(skipped.status == 0 && skipped.stderr.contains("(0 new, 0 replaced, 1 skipped"), "\(skipped.stderr)")
        #expect(skipped.stderr.contains("the file's field 'API_Key_2' differs,") && !skipped.stderr.contains("fields"), "\(skipped.stderr)")
        let overwritten = try cli.run(["import", "--overwrite", cli.path("b.json")] + cli.unlock())
        #expect(overwritten.status == 0, "\(overwritten.stderr)")
        #expect(try values() == ["zz-second", "00-rotated", "mm-middle"])
    }

    // MARK: - L4: share --field's note

    @Test(.enabled(if: ShareCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_shareField_notesTheOtherFieldWithoutSayingPrinted() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("d.json", bytes("""
            {"encrypted": false, "folders": [], "items": [
              {"id": "1", "type": 1, "name": "Dup", "notes": null, "favorite": false,
               "fields": [{"name": "Extra", "value": "dup-a", "type": 0}, {"name": "Extra", "value": "dup-b", "type": 0}],
               "login": {"uris": [], "username": "u", "password": "pw", "totp": null}}]}
            """))
        #expect(try cli.run(["import", cli.path("d.json")] + cli.unlock()).status == 0)
        let got = try cli.run(["get", "Dup", "--field", "Extra"] + cli.unlock())
        #expect(got.text == "dup-a" && got.stderr.contains("the field 'Extra' is printed; the label 'Extra' also names the field 'Extra_2'"), "\(got.stderr)")
        let key = try ShareCLITests.ageKey(cli, "key.txt")
        let shared = try cli.run(["share", "Dup", "--field", "Extra", "--recipient", key, "--armor"] + cli.unlock())
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(shared.stderr.contains("the field 'Extra' is shared; the label 'Extra' also names the field 'Extra_2'"), "\(shared.stderr)")
        #expect(!shared.stderr.contains("printed"), "\(shared.stderr)")
    }

    // MARK: - L5: warnings name entries by their vault names

    @Test func test_import_keepassWarningsNameTheNumberedEntry() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // zed's entry comes first and holds the unprotected string; numbering by username makes it 'Work/db01 (2)'.
        try cli.write("kp.xml", bytes("""
            <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Root</Name>
            <Group><Name>Work</Name>
            <Entry><String><Key>Title</Key><Value>db01</Value></String><String><Key>UserName</Key><Value>zed</Value></String>\
            <String><Key>PIN</Key><Value>1234</Value></String></Entry>
            <Entry><String><Key>Title</Key><Value>db01</Value></String><String><Key>UserName</Key><Value>amy</Value></String></Entry>
            </Group></Group></Root></KeePassFile>
            """))
        let imported = try cli.run(["import", cli.path("kp.xml")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("in 1 item ('Work/db01 (2)')"), "\(imported.stderr)")
        #expect(try cli.run(["get", "Work/db01 (2)", "--field", "PIN"] + cli.unlock()).text == "1234")
    }

    // MARK: - L7: Ctrl-C at the identities prompt

    @Test(.enabled(if: CLI.hasScript, "script (util-linux) is absent: skipped"))
    func test_importPassage_ctrlCAtTheIdentitiesPromptSaysNothingWasImported() throws {
        var cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
        for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
        try cli.write("bin/age", Array("#!/bin/sh\ncat\n".utf8), mode: 0o700)
        try cli.write("store/.age-recipients", Array("K\n".utf8))
        try cli.write("store/a.age", Array("pw-a\n".utf8))
        let sealed = try AgeFile.encrypt(SecureBytes(copying: Array("AGE-SECRET-KEY-1HPG9VNGG406XW7D2NDSL6NGEPWWLF0CEC60TGX0LKT6GKSZRCJSQNGJ37H\n".utf8)),
                                         to: [AgeScryptPassphrase(passphrase: SecureBytes(copying: Array("pp".utf8)), limits: .defaults, logN: 10)])
        try cli.write("identities.age", sealed)
        cli.environment = ["PATH": cli.path("bin") + ":/usr/bin:/bin", "PASSAGE_IDENTITIES_FILE": cli.path("identities.age")]
        let session = try cli.interactive(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                          answers: [("Passphrase for the passage identities ", "\u{03}")])
        #expect(session.status == 130, "\(session.screen)")
        #expect(session.screen.contains("\nvaultfile: interrupted (SIGINT): nothing was imported"), "\(session.screen)")
        cli.environment = [:]
        #expect(try cli.run(["get", "a"] + cli.unlock()).status != 0, "nothing was imported")
    }
}
