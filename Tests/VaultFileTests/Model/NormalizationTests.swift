import KDF
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// New names in NFC, lookups by exact bytes then NFC, twins refused (EntryName+Normalization.swift).
@Suite struct NormalizationTests {
    /// "café" composed (U+00E9) and decomposed (e U+0301).
    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A vault decrypted from a file holding `names` byte for byte, as a vault written before
    /// normalisation may (put() stores names as given).
    private func storedVault(_ names: [String]) throws -> Vault {
        var vault = Vault()
        for (index, name) in names.enumerated() {
            try vault.put(Entry(value: bytes("v\(index)"), created: 1, modified: 1), as: name)
        }
        return try VaultCodec.open(sealedBytes(vault), path: "t.vault", password: password("pw"), limits: testLimits).vault
    }

    // MARK: - normalized

    @Test func test_normalized_composesAndLeavesASCIIAlone() {
        #expect(bytes(EntryName.normalized(decomposed)) == bytes(composed))
        #expect(bytes(EntryName.normalized(composed)) == bytes(composed))
        #expect(EntryName.normalized("db/password") == "db/password")
        // Hangul jamo compose; the Kelvin sign is a singleton that becomes a plain K.
        #expect(bytes(EntryName.normalized("\u{1100}\u{1161}\u{11A8}")) == bytes("\u{AC01}"))
        #expect(bytes(EntryName.normalized("\u{212A}ey")) == bytes("Key"))
        #expect(EntryName.isNormalized(composed) && !EntryName.isNormalized(decomposed))
    }

    @Test func test_spelledOut_showsTheFormAndQuotesForAShell() {
        #expect(EntryName.spelledOut("db/pw") == "'db/pw'")
        #expect(EntryName.spelledOut(decomposed) == "$'cafe\\u0301'")
        #expect(EntryName.spelledOut(composed) == "$'caf\\u00e9'")
        #expect(EntryName.spelledOut("it's") == "$'it\\'s'")
        #expect(EntryName.spelledOut("\u{1F511}") == "$'\\U0001f511'")
    }

    // MARK: - setValue and setField: new names

    @Test func test_setValue_storesANewNameInNFC() throws {
        var vault = Vault()
        try vault.setValue(bytes("x"), for: decomposed)
        #expect(vault.names.map(bytes) == [bytes(composed)])
        try vault.setField("user", value: bytes("u"), for: "new/" + decomposed)
        #expect(vault.names.map(bytes).contains(bytes("new/" + composed)))
    }

    @Test func test_setValue_updatesTheEntryAnotherSpellingFinds() throws {
        var vault = try storedVault([composed])
        try vault.setValue(bytes("changed"), for: decomposed)
        #expect(vault.count == 1)
        #expect(try vault.value(of: composed) == bytes("changed"))
    }

    @Test func test_setValue_keepsAnOldDecomposedEntryReachableByItsBytes() throws {
        var vault = try storedVault([decomposed])
        try vault.setValue(bytes("changed"), for: decomposed)
        #expect(vault.count == 1 && vault.names.map(bytes) == [bytes(decomposed)])
        #expect(try vault.value(of: decomposed) == bytes("changed"))
    }

    @Test func test_setValue_refusesATwinNamingBoth() throws {
        var vault = try storedVault([decomposed])
        #expect(throws: VaultError.nameTwin(name: composed, existing: decomposed)) {
            try vault.setValue(bytes("x"), for: composed)
        }
        #expect(throws: VaultError.nameTwin(name: "Key", existing: "\u{212A}ey")) {
            var kelvin = try storedVault(["\u{212A}ey"])
            try kelvin.setValue(bytes("x"), for: "Key")
        }
        let message = VaultError.nameTwin(name: composed, existing: decomposed).description
        #expect(message.contains("$'caf\\u00e9'") && message.contains("$'cafe\\u0301'"))
    }

    @Test func test_setValue_twinCheckFollowsEditsOfTheStoredNames() throws {
        // An edited stored twin is still a twin (found among the edits, not the stored records)…
        var edited = try storedVault([decomposed, "other"])
        try edited.setValue(bytes("changed"), for: decomposed)
        #expect(throws: VaultError.nameTwin(name: composed, existing: decomposed)) {
            try edited.setValue(bytes("x"), for: composed)
        }
        // …a removed one is not, and many new ASCII names leave the check as it was.
        var removed = try storedVault([decomposed, "other"])
        _ = try removed.remove(decomposed)
        for index in 0..<2_000 { try removed.setValue(bytes("v"), for: "name-\(index)") }
        try removed.setValue(bytes("x"), for: composed)
        let names = removed.names.map { Array($0.utf8) }  // bytes: String's == is canonical equivalence
        #expect(names.contains(Array(composed.utf8)) && !names.contains(Array(decomposed.utf8)))
    }

    // MARK: - lookups: exact bytes, then NFC

    @Test func test_lookUp_triesTheExactBytesThenNFC() throws {
        let vault = try storedVault([composed, "other"])
        #expect(try vault.value(of: decomposed) == bytes("v0"))
        #expect(try vault.withValue(of: decomposed) { Array($0) } == bytes("v0"))
        #expect(vault.existingName(for: decomposed).map(bytes) == bytes(composed))
        #expect(throws: VaultError.entryNotFound(decomposed + "x")) { try vault.value(of: decomposed + "x") }
    }

    @Test func test_lookUp_bothSpellingsOfAnOldVaultStayReachable() throws {
        var vault = try storedVault([composed, decomposed])
        #expect(vault.count == 2)
        #expect(try vault.value(of: composed) == bytes("v0") && vault.value(of: decomposed) == bytes("v1"))
        try vault.remove(decomposed)
        #expect(vault.names.map(bytes) == [bytes(composed)], "rm takes the exact bytes first")
    }

    @Test func test_lookUp_anEditedEntryIsFoundByEitherSpelling() throws {
        var vault = Vault()
        try vault.setValue(bytes("x"), for: composed)
        try vault.setField("user", value: bytes("u"), for: decomposed)
        #expect(try vault.value(of: decomposed, part: .field("user")) == bytes("u"))
        #expect(throws: VaultError.entryNotFound(composed + "#url")) { try vault.value(of: decomposed, part: .field("url")) }
        try vault.removeField("user", of: decomposed)
        try vault.remove(decomposed)
        #expect(vault.count == 0)
    }

    // MARK: - rename

    @Test func test_rename_normalizesTheNewNameAndMayFixAnOldSpelling() throws {
        var vault = try storedVault([decomposed, "a"])
        try vault.rename(decomposed, to: composed)
        #expect(vault.names.map(bytes) == [bytes("a"), bytes(composed)])
        try vault.rename("a", to: "b/" + decomposed)
        #expect(vault.names.map(bytes).contains(bytes("b/" + composed)))
    }

    @Test func test_rename_refusesATwinAndFindsTheOldNameByNFC() throws {
        var vault = try storedVault([decomposed, "a"])
        #expect(throws: VaultError.nameTwin(name: composed, existing: decomposed)) { try vault.rename("a", to: composed) }
        var composedVault = try storedVault([composed])
        try composedVault.rename(decomposed, to: "plain")
        #expect(composedVault.names == ["plain"])
    }

    // MARK: - canonicalTwin

    @Test func test_canonicalTwin_findsOnlyAnotherSpelling() throws {
        let vault = try storedVault([decomposed, "plain"])
        #expect(vault.canonicalTwin(of: composed).map(bytes) == bytes(decomposed))
        #expect(vault.canonicalTwin(of: decomposed) == nil, "the entry itself is not its own twin")
        #expect(vault.canonicalTwin(of: "plain") == nil)
    }
}
