import Foundation
import TestSupport
import Testing

/// recheck60 through the built binary. R0: an item without a title whose site is only format
/// characters (`https://<U+200B>/`) is named after its username, else `untitled`, under the
/// prefix — never the prefix itself or its folder — in Chrome, Bitwarden and Firefox CSV and
/// KeePass XML, each with its line (Firefox's too). R2: a `--prefix` the import would change (a
/// format character, a folder of spaces or with a space at an end) is a usage error. R3: a
/// Bitwarden number no integer is, in `reprompt`, a field's `type` or `linkedId`, a URI's
/// `match`, is named with its path and line.
@Suite struct ImportRecheck60NamingCLITests {
    private static let zw = "\u{200B}"
    /// What the import prints for the site `\u{200B}`, escaped.
    private static let blank = "its site \\u{200B} is only blank or invisible characters"

    private func get(_ cli: CLI, _ name: String) throws -> String {
        try cli.run(["get", name] + cli.unlock()).text
    }

    // MARK: - R0: a site of only format characters

    /// Each format: a file of items without a title whose URL's host is U+200B (one without a
    /// username, one with), imported with `--prefix imp/ --overwrite` into a vault holding `imp`
    /// and `imp/sub/x`: the entries land under `imp/`, `imp` and `imp/sub/x` keep their values,
    /// and each item's line says what its name was made of.
    @Test func test_import_siteOfOnlyFormatCharactersNeverTakesThePrefixsName() throws {
        let z = Self.zw
        let bitwardenHeader = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        let keepass = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta><Generator>t</Generator></Meta><Root><Group><Name>Root</Name>"
            + "<Entry><String><Key>Title</Key><Value></Value></String><String><Key>URL</Key><Value>https://&#x200B;/</Value></String>"
            + "<String><Key>Password</Key><Value>E1</Value></String></Entry>"
            + "<Entry><String><Key>Title</Key><Value></Value></String><String><Key>URL</Key><Value>https://u@&#x200B;/</Value></String>"
            + "<String><Key>UserName</Key><Value>u</Value></String><String><Key>Password</Key><Value>E2</Value></String></Entry>"
            + "<Group><Name>sub</Name><Entry><String><Key>Title</Key><Value></Value></String><String><Key>URL</Key><Value>https://&#x200B;/</Value></String>"
            + "<String><Key>Password</Key><Value>E3</Value></String></Entry></Group></Group></Root></KeePassFile>"
        let files: [(format: String, text: String)] = [
            ("chrome-csv", "name,url,username,password\n,https://\(z)/,,E1\n,https://\(z)/,u,E2\n"),
            ("bitwarden-csv", bitwardenHeader + ",,login,,,,0,https://\(z)/,,E1,\n,,login,,,,0,https://\(z)/,u,E2,\nsub,,login,,,,0,https://\(z)/,,E3,\n"),
            ("firefox-csv", "\"url\",\"username\",\"password\"\n\"https://\(z)/\",\"\",\"E1\"\n\"https://user@\(z)/\",\"u\",\"E2\"\n"),
            ("keepass-xml", keepass),
        ]
        for (format, text) in files {
            let cli = try CLI.withEntriesSet([("imp", bytes("REAL")), ("imp/sub/x", bytes("X"))]); defer { cli.directory.remove() }
            try cli.write("in", bytes(text))
            let result = try cli.run(["import", "--format", format, "--prefix", "imp/", "--overwrite", cli.path("in")] + cli.unlock())
            #expect(result.status == 0, "\(format): \(result.stderr)")
            #expect(try get(cli, "imp") == "REAL", "\(format): the entry named as the prefix is untouched")
            #expect(try get(cli, "imp/sub/x") == "X", "\(format)")
            let all = try names(cli)
            let sub = text.contains("E3") ? ["imp/sub/untitled"] : []
            #expect(all == (["imp", "imp/sub/x", "imp/u", "imp/untitled"] + sub).sorted(), "\(format): \(all)")
            #expect(!all.contains("imp/sub"), "\(format): no entry beside the folder imp/sub")
            #expect(try get(cli, "imp/untitled") == "E1" && get(cli, "imp/u") == "E2", "\(format)")
            #expect(result.stderr.contains("vaultfile: named an item without a title 'imp/untitled' after nothing: \(Self.blank), and it has no username\n"),
                    "\(format): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: named an item without a title 'imp/u' after its username u (\(Self.blank))\n"),
                    "\(format): \(result.stderr)")
            #expect(result.stderr.contains("(\(sub.count + 2) new, 0 replaced)"), "\(format): \(result.stderr)")
        }
    }

    /// `--dry-run` and `--json` say the same: the name, and what it was made of (`named_after`).
    @Test func test_importDryRunJSON_saysWhatABlankSitesItemWasNamedAfter() throws {
        let cli = try CLI.withEntriesSet([("imp", bytes("REAL"))]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password\n,https://\(Self.zw)/,,E1\n"))
        let dry = try cli.run(["import", "--dry-run", "--format", "chrome-csv", "--prefix", "imp/", "--overwrite", cli.path("c.csv")] + cli.unlock())
        #expect(dry.status == 0 && dry.text == "add imp/untitled\n", "\(dry.text) \(dry.stderr)")
        #expect(dry.stderr.contains("vaultfile: would name an item without a title 'imp/untitled' after nothing: \(Self.blank)"), "\(dry.stderr)")
        let json = try cli.run(["import", "--json", "--format", "chrome-csv", "--prefix", "imp/", "--overwrite", cli.path("c.csv")] + cli.unlock())
        #expect(json.status == 0, "\(json.stderr)")
        let renamed = try #require(try jsonObject(json.stdout)["renamed"] as? [[String: Any]])
        #expect(renamed.count == 1 && renamed[0]["to"] as? String == "imp/untitled", "\(renamed)")
        #expect((renamed[0]["named_after"] as? String)?.hasPrefix("nothing: its site \(Self.zw) is only blank") == true, "\(renamed)")
        #expect(try get(cli, "imp") == "REAL")
    }

    // MARK: - R2: a --prefix the import would change

    /// A prefix of only spaces or format characters, a folder with a space at an end, a bidi
    /// control or a zero-width space anywhere: status 64, the problem named with the characters
    /// escaped, nothing imported — with `--overwrite` and `--allow-format-characters` too.
    @Test func test_import_prefixTheImportWouldChangeIsAUsageError() throws {
        let cli = try CLI.withEntriesSet([("A", bytes("R"))]); defer { cli.directory.remove() }
        try cli.write("e.csv", bytes("name,url,username,password\nA,https://a.example,u,EVIL\n"))
        let cases: [(prefix: String, says: String)] = [
            ("\u{200B}/", "--prefix '\\u{200B}/': invalid name: '\\u{200B}' holds U+200B ZERO WIDTH SPACE"),
            ("x\u{200B}", "--prefix 'x\\u{200B}': invalid name: 'x\\u{200B}' holds U+200B ZERO WIDTH SPACE"),
            ("\u{202E}x/", "--prefix '\\u{202E}x/': invalid name: '\\u{202E}x' holds U+202E RIGHT-TO-LEFT OVERRIDE"),
            (" /", "--prefix ' /': its folder ' ' is only spaces"),
            (" ", "--prefix ' ': its folder ' ' is only spaces"),
            ("a /b/", "--prefix 'a /b/': its folder 'a ' begins or ends with a space"),
            ("ok/ b", "--prefix 'ok/ b': its folder ' b' begins or ends with a space"),
        ]
        for (prefix, says) in cases {
            for extra in [[], ["--overwrite"], ["--overwrite", "--allow-format-characters"]] {
                let result = try cli.run(["import", "--format", "chrome-csv", "--prefix", prefix] + extra + [cli.path("e.csv")] + cli.unlock())
                #expect(result.status == 64, "\(prefix.debugDescription) \(extra): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains(says), "\(prefix.debugDescription): \(result.stderr)")
                #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{200B}" || $0 == "\u{202E}" }, "escaped: \(result.stderr)")
            }
        }
        #expect(try names(cli) == ["A"] && get(cli, "A") == "R", "nothing imported")
        // A space inside a folder is a name like any other.
        let inside = try cli.run(["import", "--format", "chrome-csv", "--prefix", "my imports/", cli.path("e.csv")] + cli.unlock())
        #expect(inside.status == 0, "\(inside.stderr)")
        #expect(try get(cli, "my imports/A") == "EVIL" && get(cli, "A") == "R")
    }

    // MARK: - R3: Bitwarden numbers no integer is

    @Test func test_import_bitwardenNumberThatIsNoIntegerIsNamedWithItsPath() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let head = "{\"encrypted\": false, \"folders\": [], \"items\": [{\"type\": 1, \"name\": \"ok\", \"login\": {\"password\": \"p\"}},\n {\"id\": \"1\", \"type\": 1, \"name\": \"n\", "
        let cases: [(member: String, path: String, expected: String)] = [
            ("\"login\": {\"username\": \"u\", \"password\": \"p\"}, \"reprompt\": %@", "items[1].reprompt", "expected a re-prompt setting (null, or a small integer: 0 none"),
            ("\"login\": {\"password\": \"p\"}, \"fields\": [{\"name\": \"a\", \"value\": \"b\", \"type\": 0},\n {\"name\": \"c\", \"value\": \"d\", \"type\": %@}]",
             "items[1].fields[1].type", "expected a field type (null, or a small integer: 0 text, 1 hidden, 2 boolean, 3 linked)"),
            ("\"login\": {\"password\": \"p\"}, \"fields\": [{\"name\": \"c\", \"type\": 3, \"linkedId\": %@}]", "items[1].fields[0].linkedId",
             "expected the id of a linked field (null, or an integer)"),
            ("\"login\": {\"password\": \"p\", \"uris\": [{\"uri\": \"https://a.example\", \"match\": null}, {\"uri\": \"https://b.example\",\n \"match\": %@}]}",
             "items[1].login.uris[1].match", "expected a URI match rule (null, or a small integer: 0 base domain,"),
        ]
        for (member, path, expected) in cases {
            for number in ["1e308", "1.5", "123456789012345678901234567890"] {
                try cli.write("t.json", bytes(head + member.replacingOccurrences(of: "%@", with: number) + "}]}\n"))
                let result = try cli.run(["import", "--dry-run", cli.path("t.json")] + cli.unlock())
                #expect(result.status == 2, "\(path) \(number): \(result.stderr)")
                #expect(!result.stderr.contains("not valid JSON"), "it is valid JSON: \(result.stderr)")
                let line = member.contains("\n") ? 3 : 2
                #expect(result.stderr.contains("not a Bitwarden JSON export: \(path): \(expected)"), "\(path) \(number): \(result.stderr)")
                #expect(result.stderr.contains("found a number that is none (line \(line)); nothing was imported"), "\(path) \(number): \(result.stderr)")
            }
            // A number an integer is (`1.0`, `1e0`) is read as that integer, as the decoder reads it.
            try cli.write("t.json", bytes(head + member.replacingOccurrences(of: "%@", with: "1.0") + "}]}\n"))
            let whole = try cli.run(["import", "--dry-run", cli.path("t.json")] + cli.unlock())
            #expect(whole.status == 0, "\(path) 1.0: \(whole.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }
}
