import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// sops files (`SopsReader`), against Fixtures/import/sops/ (scripts/make-sops-fixtures.py, which
/// follows sops' source; the data keys beside them in datakeys.json, the age key in keys.txt).
@Suite struct SopsReaderTests {
    private static let folder = ProjectPaths.fixtures.appendingPathComponent("import/sops")

    private func fixture(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: Self.folder.appendingPathComponent(name))) }

    private func dataKey(_ name: String) throws -> SecureBytes {
        let keys = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("datakeys.json"))) as! [String: String]
        let hex = Array(keys[name]!.utf8)
        return SecureBytes(copying: AnsibleVaultReader.hexDecode(hex)!)
    }

    private func read(_ bytes: [UInt8], key name: String) throws -> ForeignImport {
        let document = try SopsReader.parse(bytes, file: name)
        return try SopsReader.read(document, dataKey: try dataKey(name), file: name, name: "secrets")
    }

    private static let expected: [(String, String)] = [
        ("secrets/db/user", "admin"), ("secrets/db/password", "hunter2: with a colon"), ("secrets/api_key_unencrypted", "public-value"),
        ("secrets/ports/0", "8080"), ("secrets/ports/1", "8443"), ("secrets/enabled", "True"), ("secrets/ratio", "1.5"),
        ("secrets/note", "é ünïcode"),
    ]

    private func named(_ result: ForeignImport) -> [(String, String)] {
        result.items.map { (($0.folders + [$0.title]).joined(separator: "/"), String(decoding: $0.value, as: UTF8.self)) }
    }

    // MARK: - Success

    @Test(arguments: ["secrets.yaml", "secrets.json"])
    func test_read_decryptsEveryLeafAndChecksTheMAC(file: String) throws {
        let result = try read(try fixture(file), key: file)
        #expect(result.format == "sops")
        let got = named(result)
        #expect(got.map(\.0) == Self.expected.map(\.0))
        #expect(got.map(\.1) == Self.expected.map(\.1))
        // The empty value is outside the MAC (anyone could have added it): left out and counted; the
        // unencrypted one is imported with a warning that its name is not covered (att58 F4).
        #expect(result.notKept == ["sops empty values (the file's MAC does not cover an empty value)": 1], "\(result.notKept)")
        #expect(result.reason(notKept: "sops empty values (the file's MAC does not cover an empty value)") == .statedInText)
        #expect(result.warnings == [.namesNotAuthenticated(file: file, count: 1)], "\(result.warnings)")
    }

    @Test func test_parse_findsTheAgeStanza() throws {
        let document = try SopsReader.parse(try fixture("secrets.yaml"), file: "secrets.yaml")
        #expect(document.ageDataKeys.count == 1)
        #expect(document.ageDataKeys[0].hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"))
        #expect(document.ageRecipients.first?.hasPrefix("age1") == true)
    }

    // MARK: - Failure

    @Test func test_read_swappedValuesFailTheirAssociatedData() throws {
        // Moving an encrypted value to another key: its path is its associated data, so it no longer opens.
        var lines = String(decoding: try fixture("secrets.yaml"), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let user = lines.firstIndex { $0.hasPrefix("    user: ") }!, password = lines.firstIndex { $0.hasPrefix("    password: ") }!
        let userValue = lines[user].dropFirst("    user: ".count), passwordValue = lines[password].dropFirst("    password: ".count)
        lines[user] = "    user: " + passwordValue
        lines[password] = "    password: " + userValue
        #expect(throws: VaultError.self) { try read(Array(lines.joined(separator: "\n").utf8), key: "secrets.yaml") }
    }

    @Test func test_read_changedPlainValueOrRemovedValueFailsTheMAC() throws {
        let text = String(decoding: try fixture("secrets.yaml"), as: UTF8.self)
        let changed = text.replacingOccurrences(of: "api_key_unencrypted: public-value", with: "api_key_unencrypted: evil-value")
        #expect {
            try read(Array(changed.utf8), key: "secrets.yaml")
        } throws: { error in
            guard case VaultError.sourceDamaged(_, let why) = error else { return false }
            return why.contains("MAC")
        }
        let removed = text.split(separator: "\n").filter { !$0.hasPrefix("note: ") }.joined(separator: "\n")
        #expect(throws: VaultError.self) { try read(Array(removed.utf8), key: "secrets.yaml") }
    }

    @Test func test_read_wrongDataKeyFails() throws {
        let document = try SopsReader.parse(try fixture("secrets.json"), file: "secrets.json")
        #expect(throws: VaultError.self) { try SopsReader.read(document, dataKey: try dataKey("secrets.yaml"), file: "f", name: "n") }
        #expect(throws: VaultError.self) { try SopsReader.read(document, dataKey: SecureBytes(count: 16), file: "f", name: "n") }
    }

    @Test func test_parse_hostileInputs() throws {
        let good = String(decoding: try fixture("secrets.yaml"), as: UTF8.self)
        var invalid = Array("a: b\n".utf8)
        invalid.append(0xFF)
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let deepYAML = (0..<100).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n")
        let cases: [(String, [UInt8])] = [
            ("truncated", Array(good.utf8.prefix(good.utf8.count / 2))),
            ("no metadata", Array("a: ENC[AES256_GCM,data:AA==,iv:AA==,tag:AA==,type:str]\n".utf8)),
            ("invalid UTF-8", invalid),
            ("NUL", Array("a: b\u{0}\n".utf8)),
            ("deep JSON", Array(("{\"a\":" + deep + "}").utf8)),
            ("deep YAML", Array(deepYAML.utf8)),
            ("anchor", Array("a: &x 1\nb: *x\n".utf8)),
            ("not a mapping", Array("[1, 2]".utf8)),
            ("repeated key", Array("a: 1\na: 2\n".utf8)),
        ]
        for (label, bytes) in cases {
            #expect(throws: VaultError.self, "\(label)") { try read(bytes, key: "secrets.yaml") }
        }
    }

    @Test func test_read_badEncValues() throws {
        let good = String(decoding: try fixture("secrets.yaml"), as: UTF8.self)
        let noteLine = good.split(separator: "\n").first { $0.hasPrefix("note: ") }!
        let replacements = ["note: ENC[AES256_GCM,data:!!,iv:AA==,tag:AA==,type:str]", "note: ENC[AES256_GCM,data:AA==,iv:AA==,tag:AA==,type:weird]",
                            "note: ENC[AES256_GCM,data:AA==]", "note: 42"]
        for replacement in replacements {
            let text = good.replacingOccurrences(of: String(noteLine), with: replacement)
            #expect(throws: VaultError.self, "\(replacement)") { try read(Array(text.utf8), key: "secrets.yaml") }
        }
    }

    // MARK: - Edge cases

    @Test func test_read_countsEncryptedCommentsAndNullsAsNotKept() throws {
        // A comment sops encrypted and a null value: neither is in the MAC, neither becomes an entry.
        let text = String(decoding: try fixture("secrets.yaml"), as: UTF8.self)
            .replacingOccurrences(of: "\nenabled: ", with: "\n#ENC[AES256_GCM,data:AA==,iv:AA==,tag:AA==,type:comment]\nnothing: null\nenabled: ")
        let result = try read(Array(text.utf8), key: "secrets.yaml")
        #expect(named(result).map(\.0) == Self.expected.map(\.0))
        #expect(result.notKept == ["sops encrypted comments": 1, "sops null values": 1,
                                   "sops empty values (the file's MAC does not cover an empty value)": 1])
    }

    @Test func test_withoutFraction_matchesGoRFC3339() {
        #expect(SopsReader.withoutFraction("2024-09-04T13:43:30.123456Z") == "2024-09-04T13:43:30Z")
        #expect(SopsReader.withoutFraction("2024-09-04T13:43:30+02:00") == "2024-09-04T13:43:30+02:00")
    }

    @Test func test_macBytes_followsToBytes() throws {
        #expect(try SopsReader.macBytes(of: Array("true".utf8), type: "bool", file: "f", line: 1) == Array("True".utf8))
        #expect(try SopsReader.macBytes(of: Array("0".utf8), type: "bool", file: "f", line: 1) == Array("False".utf8))
        #expect(try SopsReader.macBytes(of: Array("+7".utf8), type: "int", file: "f", line: 1) == Array("7".utf8))
        #expect(throws: VaultError.self) { try SopsReader.macBytes(of: Array("x".utf8), type: "int", file: "f", line: 1) }
        #expect(SopsReader.macBytes(ofPlain: ConfigScalar(text: "TRUE", kind: .bool, line: 1)) == Array("True".utf8))
    }

    @Test func test_configYAML_blockScalarsAndQuotes() throws {
        let text = "a: |\n  one\n  two\nb: |-\n  x\nc: 'it''s'\nd: \"tab\\there\"\ne:\n  - 1\n  - k: v\n    l: w\nf: []\n"
        guard case .mapping(let items) = try ConfigYAML.parse(Array(text.utf8), what: "t") else { Issue.record("not a mapping"); return }
        #expect(items.map(\.key) == ["a", "b", "c", "d", "e", "f"])
        if case .scalar(let a) = items[0].value { #expect(a.text == "one\ntwo\n") }
        if case .scalar(let b) = items[1].value { #expect(b.text == "x") }
        if case .scalar(let c) = items[2].value { #expect(c.text == "it's") }
        if case .scalar(let d) = items[3].value { #expect(d.text == "tab\there") }
        if case .sequence(let e) = items[4].value { #expect(e.count == 2) } else { Issue.record("e is not a list") }
    }
}
