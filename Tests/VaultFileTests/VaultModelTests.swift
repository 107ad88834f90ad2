import KDF
import TestSupport
import Testing
@testable import VaultFile

/// The in-memory model and its encoding.
@Suite struct VaultModelTests {
    // MARK: - EntryName.validate

    @Test(arguments: ["db/password", "a", "prod/eu-west-1/api key", "ünïcødé/名前", String(repeating: "x", count: 1024)])
    func test_validate_acceptsPathLikeNames(name: String) throws {
        #expect(try EntryName.validate(name) == Array(name.utf8))
    }

    @Test(arguments: ["", "/lead", "trail/", "a//b", "a/./b", "../up", "a\nb", "tab\there", "nul\u{0}", "del\u{7F}",
                      String(repeating: "x", count: 1025)])
    func test_validate_rejectsBadNames(name: String) {
        #expect(throws: VaultError.self) { try EntryName.validate(name) }
    }

    @Test(arguments: ["", "with space", "slash/", "é", String(repeating: "f", count: 65)])
    func test_validateField_rejectsBadFieldNames(field: String) {
        #expect(throws: VaultError.self) { try EntryName.validateField(field) }
    }

    // MARK: - Vault editing

    @Test func test_setValue_sameValueChangesNothing() throws {
        var vault = Vault()
        try vault.setValue([1, 2], for: "a", now: 10)
        let before = vault
        try vault.setValue([1, 2], for: "a", now: 20)
        #expect(vault == before)
        try vault.setValue([3], for: "a", now: 30)
        #expect(vault.entry("a")?.created == 10 && vault.entry("a")?.modified == 30)
    }

    @Test func test_rename_refusesToClobberUnlessForced() throws {
        var vault = try sampleVault()
        #expect(throws: VaultError.entryExists("empty")) { try vault.rename("db/password", to: "empty") }
        try vault.rename("db/password", to: "empty", overwrite: true)
        #expect(vault.entry("db/password") == nil && vault.entry("empty")?.value == Array("hunter2".utf8))
        #expect(throws: VaultError.entryNotFound("nope")) { try vault.rename("nope", to: "x") }
    }

    @Test func test_remove_missingEntryIsNotFound() throws {
        var vault = try sampleVault()
        try vault.remove("empty")
        #expect(throws: VaultError.entryNotFound("empty")) { try vault.remove("empty") }
        #expect(VaultError.entryNotFound("x").exitStatus == .notFound)
    }

    @Test func test_names_areSortedByteWiseAndFilterByPrefix() throws {
        var vault = Vault()
        for name in ["b", "a/2", "a/10", "B", "é", "e\u{301}"] { try vault.setValue([1], for: name) }
        #expect(vault.count == 6, "two spellings of é are two names")
        #expect(vault.names == ["B", "a/10", "a/2", "b", "e\u{301}", "é"])
        #expect(vault.names(withPrefix: "a/") == ["a/10", "a/2"])
    }

    @Test func test_setValue_refusesValuesOverTheLimit() {
        var vault = Vault()
        #expect(throws: VaultError.self) {
            try vault.setValue([UInt8](repeating: 0, count: VaultLimits.maxValueLength + 1), for: "big")
        }
    }

    // MARK: - EntryCodec.decode

    @Test func test_decode_isTheInverseOfEncode() throws {
        let vault = try sampleVault()
        let encoded = try EntryCodec.encode(vault)
        #expect(try EntryCodec.decode(encoded) == vault)
        #expect(try EntryCodec.encode(EntryCodec.decode(encoded)) == encoded)
    }

    @Test func test_decode_rejectsNonCanonicalContents() throws {
        var one = Vault(), two = Vault()
        try one.setValue([1], for: "b", now: 0)
        try two.setValue([1], for: "a", now: 0)
        try two.setValue([1], for: "b", now: 0)
        let encoded = try EntryCodec.encode(two)
        // Swap the two entries (each is 2 + 1 + 8 + 8 + 4 + 1 + 1 = 25 bytes) to break the order.
        let body = Array(encoded[5...])
        let unsorted = Array(encoded[0..<5]) + Array(body[25...]) + Array(body[0..<25])
        #expect(throws: VaultError.self) { try EntryCodec.decode(unsorted) }
        let duplicated = Array(encoded[0..<5]) + Array(body[25...]) + Array(body[25...])
        #expect(throws: VaultError.self) { try EntryCodec.decode(duplicated) }
        #expect(throws: VaultError.self) { try EntryCodec.decode(encoded + [0]) }
        #expect(throws: VaultError.self) { try EntryCodec.decode(Array(encoded.dropLast())) }
        var hugeCount = encoded
        hugeCount.replaceSubrange(1..<5, with: UInt32.max.littleEndianBytes)
        #expect(throws: VaultError.self) { try EntryCodec.decode(hugeCount) }
        var hugeValue = try EntryCodec.encode(one)
        hugeValue.replaceSubrange(24..<28, with: UInt32.max.littleEndianBytes)
        #expect(throws: VaultError.self) { try EntryCodec.decode(hugeValue) }
        #expect(throws: VaultError.self) { try EntryCodec.decode([2, 0, 0, 0, 0]) }
    }
}
