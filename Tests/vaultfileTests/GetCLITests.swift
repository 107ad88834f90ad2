import Foundation
import TestSupport
import Testing

/// `vaultfile get`: a missing field, a folder's name, binary values on a terminal, and `--json`.
@Suite struct GetCLITests {

    // MARK: - Names that are not an entry

    @Test func test_get_missingFieldNamesTheEntryAndItsFields() throws {
        let cli = try CLI.withEntriesSet(["prod/db/pw": "secret"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "prod/db/pw", "--field", "user"] + cli.unlock(), stdin: Array("admin".utf8)).status == 0)
        #expect(try cli.run(["set", "prod/db/pw", "--field", "url"] + cli.unlock(), stdin: Array("db://x".utf8)).status == 0)
        for verb in ["get", "rm"] {
            let result = try cli.run([verb, "prod/db/pw", "--field", "username"] + cli.unlock())
            #expect(result.status == 1, "\(verb)")
            #expect(result.stderr.contains("the entry 'prod/db/pw' has no field 'username'; its fields: url, user"), "\(verb): \(result.stderr)")
            #expect(!result.stderr.contains("no entry named") && !result.stderr.contains("vaultfile list"), "\(result.stderr)")
        }
    }

    @Test func test_get_aFolderNamePointsToLs() throws {
        let cli = try CLI.withVault(["prod/db": "d", "prod/web/key": "k"]); defer { cli.directory.remove() }
        for verb in ["get", "show"] {
            for name in ["prod", "prod/"] {
                let result = try cli.run([verb, name] + cli.unlock())
                #expect(result.status == 1 && result.stdout.isEmpty)
                #expect(result.stderr.contains("is a folder of 2 entries, not an entry") && result.stderr.contains("vaultfile ls prod/"),
                        "\(verb) \(name): \(result.stderr)")
            }
        }
        let missing = try cli.run(["get", "nothing"] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("no entry named 'nothing'"), "\(missing.stderr)")
    }

    // MARK: - Binary values and the terminal

    @Test func test_get_refusesBinaryValuesOnATerminalUnlessForced() throws {
        let cli = try CLI.withEntriesSet(["text": "café\tok\n"]); defer { cli.directory.remove() }
        let values: [(String, [UInt8])] = [("escape", Array("a\u{1B}]0;owned\u{07}b".utf8)), ("c1", [0x61, 0xC2, 0x9B, 0x32, 0x4A]), ("latin1", [0x63, 0x61, 0x66, 0xE9])]
        for (name, value) in values {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: value).status == 0)
            let refused = try cli.interactive(["get", name] + cli.unlock(), answers: [])
            #expect(refused.status == 2, "\(name): \(refused.screen)")
            #expect(refused.screen.contains("holds binary data") && refused.screen.contains("--force"), "\(refused.screen)")
            #expect(!refused.screen.contains("owned"), "nothing of the value reached the terminal")
            #expect(try cli.interactive(["get", name, "--force"] + cli.unlock(), answers: []).status == 0)
            #expect(try cli.run(["get", name] + cli.unlock()).stdout == value, "piped, the bytes pass as they are")
        }
        let text = try cli.interactive(["get", "text"] + cli.unlock(), answers: [])
        #expect(text.status == 0 && text.screen.contains("café"), "UTF-8 with tab and newline is text: \(text.screen)")
    }

    // MARK: - --json

    @Test func test_getJson_printsValueFieldsAndTimes() throws {
        let cli = try CLI.withEntriesSet([("db", bytes("s3cret")), ("bin", [0x00, 0xFF])]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "db", "--field", "user"] + cli.unlock(), stdin: bytes("admin")).status == 0)
        let whole = try jsonObject(try cli.run(["get", "db", "--json"] + cli.unlock()).stdout)
        #expect(whole["name"] as? String == "db" && whole["value"] as? String == "s3cret" && whole["encoding"] as? String == "utf-8")
        let fields = try #require(whole["fields"] as? [String: [String: String]])
        #expect(fields == ["user": ["value": "admin", "encoding": "utf-8"]])
        #expect((whole["created"] as? String)?.hasSuffix("Z") == true && (whole["modified"] as? String)?.count == 24)
        let field = try jsonObject(try cli.run(["get", "db", "--field", "user", "--json"] + cli.unlock()).stdout)
        #expect(field["field"] as? String == "user" && field["value"] as? String == "admin")
        let binary = try jsonObject(try cli.run(["get", "bin", "--json"] + cli.unlock()).stdout)
        #expect(binary["value"] as? String == "AP8=" && binary["encoding"] as? String == "base64")
        #expect(try cli.run(["get", "missing", "--json"] + cli.unlock()).status == 1)
    }
}
