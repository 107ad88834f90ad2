import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// What hostile or unusual import files do to the parsers (issue 25, items 10, 14 and 15).
@Suite struct InterchangeHardeningTests {
    private func parse(_ text: String, _ format: InterchangeFormat) throws(VaultError) -> [(name: String, entry: Entry)] {
        try Interchange.parse(Array(text.utf8), format: format, now: 0)
    }

    private func value(_ entries: [(name: String, entry: Entry)], _ name: String) -> String? {
        entries.first { $0.name == name }.map { String(decoding: $0.entry.value, as: UTF8.self) }
    }

    /// The message of the error `body` throws, or nil.
    private func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let error as VaultError { return error.description } catch { return "\(error)" }
    }

    // MARK: - dotenv

    @Test func test_parseDotEnv_readsMegabyteLinesInOnePass() throws {
        // 1 MB/s before (grapheme by grapheme): these 24 MB took about 20 s; now a fraction of a second.
        let size = 8 << 20
        let long = String(repeating: "x", count: size)
        let text = "UNQUOTED=\(long) # comment\nDOUBLE=\"\(long)\\n\"\nSINGLE='\(long)'\n"
        let entries = try parse(text, .dotenv)
        #expect(entries.map(\.name) == ["UNQUOTED", "DOUBLE", "SINGLE"])
        #expect(entries.map(\.entry.value.count) == [size, size + 1, size])
        #expect(entries[1].entry.value.last == 0x0A)
    }

    @Test func test_parseDotEnv_splitsLinesThatEndInCRLF() throws {
        // A CRLF file used to be one line: A's value swallowed every line after it.
        let entries = try parse("A=1\r\nB='two'\r\nC=\"three\r\nlines\r\nhere\"\r\n# note\r\n", .dotenv)
        #expect(entries.map(\.name) == ["A", "B", "C"])
        #expect(value(entries, "A") == "1" && value(entries, "B") == "two" && value(entries, "C") == "three\nlines\nhere")
    }

    @Test func test_parseDotEnv_keepsTheDocumentedSyntax() throws {
        let entries = try parse("""
            # comment
            export  KEY=plain value  # trailing comment
            HASH=a#b
            LEADING= #kept
            Q="a \\"b\\" \\$c \\\\ \\x"
            S='no \\n escapes'
            ÜNÏ.CODE-1=é
            """, .dotenv)
        #expect(entries.map(\.name) == ["KEY", "HASH", "LEADING", "Q", "S", "ÜNÏ.CODE-1"])
        #expect(entries.map { String(decoding: $0.entry.value, as: UTF8.self) }
                == ["plain value", "a#b", "#kept", "a \"b\" $c \\ \\x", "no \\n escapes", "é"])
        #expect(message { _ = try parse("A=1\nB=\"open\n", .dotenv) }?.contains("line 2") == true)
        #expect(message { _ = try parse("A='x' y\n", .dotenv) }?.contains("line 1") == true)
        #expect(message { _ = try parse("BAD KEY=1\n", .dotenv) }?.contains("not a variable name") == true)
        #expect(message { _ = try Interchange.parse([0x41, 0x3D, 0xFF], format: .dotenv) }?.contains("not UTF-8") == true)
    }

    @Test func test_exportDotEnv_escapesCarriageReturnsSoValuesComeBackWhole() throws {
        var vault = Vault()
        try vault.setValue(Array("line1\r\nline2\r".utf8), for: "crlf", now: 0)
        try vault.setValue(Array("tab\t\"q\" $x \\".utf8), for: "other", now: 0)
        let exported = try Interchange.export(vault, format: .dotenv)
        #expect(String(decoding: exported, as: UTF8.self) == "CRLF=\"line1\\r\\nline2\\r\"\nOTHER=\"tab\\t\\\"q\\\" \\$x \\\\\"\n")
        let back = try Interchange.parse(exported, format: .dotenv, now: 0)
        #expect(back.map(\.entry.value) == [vault.entry("crlf")!.value, vault.entry("other")!.value])
    }

    @Test func test_exportDotEnv_givesEachEntryItsOwnValue() throws {
        // Two spellings of "café" are two entries; as Swift strings they are equal, and the
        // export used to give both variables the first one's value. A vault written before names
        // were stored in NFC may hold both (put stores a name as given, as such a vault holds it).
        var vault = Vault()
        try vault.put(Entry(value: Array("composed".utf8), created: 0, modified: 0), as: "caf\u{E9}")
        try vault.put(Entry(value: Array("decomposed".utf8), created: 0, modified: 0), as: "cafe\u{301}")
        let text = String(decoding: try Interchange.export(vault, format: .dotenv), as: UTF8.self)
        #expect(text.contains("CAFE_=\"decomposed\"") && text.contains("CAF_=\"composed\""), "\(text)")
    }

    // MARK: - JSON with a repeated key

    @Test func test_parseJSON_refusesAKeyGivenTwiceInOneObject() {
        let repeatedValue = #"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "seen"},"# + "\n"
            + #"{"name": "b", "value": "first", "value": "second"}]}"#
        let said = message { _ = try parse(repeatedValue, .json) }
        #expect(said?.contains("'value' appears twice") == true && said?.contains("line 2") == true
                && said?.contains("entries[1]") == true, "\(said ?? "accepted")")
        let cases = [
            #"{"vaultfile_export": 1, "entries": [], "entries": [{"name": "x", "value": "y"}]}"#,
            #"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "v", "fields": {"u": "1", "u": "2"}}]}"#,
            #"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "v", "valu\u0065": "w"}]}"#,
            #"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "v", "fields": {"caf\u00e9": "1", "cafe\u0301": "2"}}]}"#,
        ]
        for text in cases {
            #expect(message { _ = try parse(text, .json) }?.contains("appears twice") == true, "\(text)")
        }
        let bitwarden = #"{"items": [{"type": 2, "name": "n", "notes": "kept", "notes": "hidden"}]}"#
        #expect(message { _ = try parse(bitwarden, .bitwardenJSON) }?.contains("'notes' appears twice") == true)
    }

    @Test func test_parseJSON_acceptsTheSameKeyInDifferentObjects() throws {
        let text = #"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "1", "fields": {"value": "f"}}, {"name": "b", "value": "2"}]}"#
        let entries = try parse(text, .json)
        #expect(entries.map(\.name) == ["a", "b"] && entries[0].entry.fields["value"] == Array("f".utf8))
        let fixture = try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json"))
        #expect(try !Interchange.parse(Array(fixture), format: .bitwardenJSON, now: 0).isEmpty)
    }

    @Test func test_parseJSON_refusesDeepNestingWithoutRecursing() {
        // 100,000 levels: no stack overflow, in the scan or in the decoder (which is not reached).
        let deep = #"{"vaultfile_export": 1, "entries": [], "x": "# + String(repeating: "[", count: 100_000)
            + String(repeating: "]", count: 100_000) + "}"
        #expect(message { _ = try parse(deep, .json) }?.contains("more than 512 levels") == true)
        let fine = #"{"vaultfile_export": 1, "entries": [], "x": "# + String(repeating: "[", count: 100)
            + String(repeating: "]", count: 100) + "}"
        #expect(message { _ = try parse(fine, .json) } == nil)
    }

    @Test func test_parseJSON_malformedInputKeepsTheDecodersMessage() {
        for text in [#"{"vaultfile_export": 1, "entries": [}"#, #"{"vaultfile_export": 1"#, "", "[1, 2"] {
            #expect(message { _ = try parse(text, .json) }?.hasPrefix("not a vaultfile JSON export: ") == true, "\(text)")
        }
    }

    @Test func test_parseJSON_malformedInputSaysWhatAndWhereWithoutSwiftTypeNames() {
        let cases: [(String, InterchangeFormat, String)] = [
            ("{}", .json, "not a vaultfile JSON export: the top level has no key 'vaultfile_export'"),
            (#"{"vaultfile_export": 1}"#, .json, "not a vaultfile JSON export: the top level has no key 'entries'"),
            (#"{"vaultfile_export": 1, "entries": [{"name": "a", "value": 5}]}"#, .json,
             "not a vaultfile JSON export: entries[0].value: expected a string"),
            (#"{"vaultfile_export": 1, "entries": [{"name": "a", "value": "x", "created": "yesterday"}]}"#, .json,
             "not a vaultfile JSON export: entries[0].created: 'yesterday' is neither epoch milliseconds nor an RFC 3339 time"),
            ("{\"vaultfile_export\": 1,\n\"entries\": [\n", .json, "not a vaultfile JSON export: not valid JSON (line 3)"),
            ("{\"vaultfile_export\": 1,\n\"entries\": [{\"name\": \"a\", \"value\": \"x\",}]}", .json,
             "not a vaultfile JSON export: the JSON on line 2 is not strict JSON in UTF-8 (a trailing comma? another encoding?)"),
            ("[]", .bitwardenJSON, "not a Bitwarden JSON export: the top level: expected an object"),
        ]
        for (text, format, expected) in cases {
            let shown = message { _ = try parse(text, format) }
            #expect(shown == expected, "\(text)")
            #expect(shown.map { !$0.contains("DecodingError") && !$0.contains("CodingKeys") && !$0.contains("Dictionary<") } == true)
        }
    }

    // MARK: - Variables that take over programs

    @Test func test_dangerousEnvironmentNames_coverLoadersShellsAndInterpreters() {
        for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
                     "PROMPT_COMMAND", "PYTHONPATH", "PYTHONSTARTUP", "PERL5LIB", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS",
                     "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GCONV_PATH"] {
            #expect(DangerousEnvironmentNames.contains(name), "\(name)")
        }
        for name in ["DB_PASSWORD", "API_KEY", "PATHS", "MY_PATH", "LD", "OLD_PRELOAD", "path"] {
            #expect(!DangerousEnvironmentNames.contains(name), "\(name)")
        }
    }

    /// The second re-test's findings: pagers, editors, browsers and helpers that tools start, and
    /// interpreter settings that load code, were missing (LESSOPEN, BROWSER, GIT_DIR, OPENSSL_CONF, …).
    @Test func test_dangerousEnvironmentNames_coverPagersEditorsHelpersAndCodeLoadingSettings() {
        for name in ["LESSOPEN", "LESSCLOSE", "BROWSER", "MANPAGER", "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "SUDO_EDITOR", "SUDO_ASKPASS",
                     "GIT_SEQUENCE_EDITOR", "GIT_DIR", "GIT_COMMON_DIR", "GIT_TEMPLATE_DIR", "PERL5DB", "PYTHONWARNINGS", "PYTHONBREAKPOINT",
                     "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
                     "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_PAGER",
                     "VIMINIT", "GVIMINIT", "EXINIT", "MYVIMRC", "LUA_INIT", "LUA_INIT_5_4", "LUA_PATH", "LUA_CPATH_5_3",
                     "CLASSPATH", "PHPRC", "PHP_INI_SCAN_DIR"] {
            #expect(DangerousEnvironmentNames.contains(name), "\(name)")
        }
        for name in ["LESS", "GIT_TOKEN", "OPENSSL_PASSWORD", "BROWSER_URL", "LUA", "PAGER_SIZE"] {
            #expect(!DangerousEnvironmentNames.contains(name), "\(name)")
        }
    }

    @Test func test_read_warnsAboutEveryEntryExecWouldExportDangerously() throws {
        let text = "LD_PRELOAD=/tmp/x.so\nDB_PASSWORD=s3cret\nPATH=/tmp\nld_audit=y\n"
        let imported = try Interchange.read(Array(text.utf8), format: .dotenv, now: 0)
        #expect(imported.entries.count == 4)
        #expect(imported.warnings == [.dangerousVariable(name: "LD_PRELOAD", variable: "LD_PRELOAD"),
                                      .dangerousVariable(name: "PATH", variable: "PATH"),
                                      .dangerousVariable(name: "ld_audit", variable: "LD_AUDIT")])
        #expect(imported.warnings[0].description.contains("LD_PRELOAD") && !imported.warnings[0].description.contains("/tmp/x.so"))
        let json = #"{"vaultfile_export": 1, "entries": [{"name": "bash-env", "value": "v"}, {"name": "ok", "value": "v"}]}"#
        #expect(try Interchange.read(Array(json.utf8), format: .json).warnings == [.dangerousVariable(name: "bash-env", variable: "BASH_ENV")])
    }

    // MARK: - Templates

    /// The second re-test's finding: `{{ vf://\xFF }}` and `{{ vf://\xFE }}` both became U+FFFD and
    /// named the same entry. A reference that is not UTF-8 is refused, naming its line and offset.
    @Test func test_render_refusesAReferenceThatIsNotUTF8() throws {
        var vault = Vault()
        try vault.setValue(Array("replacement".utf8), for: "\u{FFFD}")
        try vault.setValue(Array("v".utf8), for: "ok")
        for bad in [[0xFF], [0xFE], [0xC3], [0xED, 0xA0, 0x80]] as [[UInt8]] {
            let template = Array("a={{ vf://ok }}\nb={{ vf://".utf8) + bad + Array(" }}\n".utf8)
            let said = message { _ = try Template.render(template, from: vault) }
            #expect(said?.contains("line 2") == true && said?.contains("column 11") == true && said?.contains("byte offset 26") == true,
                    "\(bad): \(said ?? "rendered")")
            #expect(said?.contains("not valid UTF-8") == true)
        }
        // Valid UTF-8, U+FFFD itself included, still names its entry.
        #expect(try Template.render(Array("{{ vf://\u{FFFD} }}".utf8), from: vault) == Array("replacement".utf8))
    }
}
