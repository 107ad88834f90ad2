import Testing
@testable import VaultModel

/// The rule for names a command creates (issue 25, item 13).
@Suite struct NewEntryNameTests {
    // MARK: - validateNew

    @Test func test_validateNew_acceptsOrdinaryNamesInAnyScript() throws {
        for name in ["db/password", "prod/api-key.v2", "ключ/пароль", "鍵/パスワード", "emoji/🔑", "a b", "café"] {
            #expect(try EntryName.validateNew(name) == Array(name.utf8))
        }
    }

    @Test func test_validateNew_refusesBidiControlsAndInvisibleFormatCharacters() {
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{202A}", "\u{2066}", "\u{2069}", "\u{200B}", "\u{200D}", "\u{200F}",
                                       "\u{2060}", "\u{2064}", "\u{FEFF}", "\u{00AD}", "\u{061C}", "\u{2028}", "\u{E0041}"] {
            let name = "db/" + String(scalar) + "password"
            #expect(throws: VaultError.self, "U+\(String(scalar.value, radix: 16))") { try EntryName.validateNew(name) }
            do { _ = try EntryName.validateNew(name) } catch {
                #expect(error.description.contains("\\u{") && !error.description.contains(String(scalar)), "escaped: \(error)")
            }
        }
        // The rules of every name still come first.
        #expect(throws: VaultError.invalidName("an entry name cannot be empty")) { try EntryName.validateNew("") }
    }

    @Test func test_isFormatCharacter_coversTheToolchainsCategoryCf() {
        // The table is Unicode 16.0's Cf plus U+2028/2029; every Cf scalar this toolchain knows is in it,
        // and nothing else but scalars this toolchain does not know yet.
        var extra: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let category = scalar.properties.generalCategory
            let expected = category == .format || value == 0x2028 || value == 0x2029
            if expected { #expect(EntryName.isFormatCharacter(scalar), "U+\(String(value, radix: 16))") }
            if !expected && EntryName.isFormatCharacter(scalar) && category != .unassigned { extra.append(value) }
        }
        #expect(extra.isEmpty, "\(extra.map { String($0, radix: 16) })")
    }

    @Test func test_escapingFormatCharacters_showsThemAndLeavesOtherNamesAlone() {
        #expect(EntryName.escapingFormatCharacters("db/\u{202E}drowssap") == "db/\\u{202E}drowssap")
        #expect(EntryName.escapingFormatCharacters("a\u{200B}b\u{E0001}") == "a\\u{200B}b\\u{E0001}")
        #expect(EntryName.escapingFormatCharacters("plain/\\u{202E}") == "plain/\\u{202E}")
    }

    @Test func test_checkNewName_passesNamesTheVaultHoldsAlready() throws {
        var vault = Vault()
        try vault.put(Entry(value: [1], created: 0, modified: 0), as: "old/\u{202E}name")
        try vault.checkNewName("old/\u{202E}name")
        #expect(throws: VaultError.self) { try vault.checkNewName("new/\u{202E}name") }
    }
}
