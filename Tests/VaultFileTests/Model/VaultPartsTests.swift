import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The value or a field of an entry, else not found: the operations `get`, `set`, `rm`, `edit`,
/// `inject` and `batch` share.
@Suite struct VaultPartsTests {
    /// `sampleVault()`, decrypted (records where they lie) or built in memory (every entry an edit).
    private func sample(decoded: Bool) throws -> Vault {
        decoded ? try EntryCodec.decode(EntryCodec.encode(sampleVault())) : try sampleVault()
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: - EntryPart

    @Test func test_init_noFieldIsTheValue() {
        #expect(EntryPart(field: nil) == .value)
        #expect(EntryPart(field: "url") == .field("url"))
        #expect(EntryPart.field("url").fieldName == "url")
        #expect(EntryPart.value.fieldName == nil)
    }

    @Test func test_reference_namesAFieldAsTemplatesDo() {
        #expect(EntryPart.value.reference(to: "db/password") == "db/password")
        #expect(EntryPart.field("url").reference(to: "db/password") == "db/password#url")
    }

    // MARK: - Vault.withValue

    @Test(arguments: [true, false])
    func test_withValue_readsValuesAndFields(decoded: Bool) throws {
        let vault = try sample(decoded: decoded)
        #expect(try vault.withValue(of: "db/password") { Array($0) } == bytes("hunter2"))
        #expect(try vault.withValue(of: "db/password", part: .field("url")) { Array($0) } == bytes("https://db.example"))
        #expect(try vault.withValue(of: "binary/blob") { Array($0) } == [0, 1, 2, 255, 254, 0, 10, 13])
        #expect(try vault.withValue(of: "empty") { $0.count } == 0)
    }

    @Test func test_withValue_readsEditsOverStoredRecords() throws {
        var vault = try sample(decoded: true)
        try vault.setField("url", value: [7], for: "db/password", now: 5)
        try vault.setValue([8], for: "new", now: 5)
        #expect(try vault.withValue(of: "db/password", part: .field("url")) { Array($0) } == [7])
        #expect(try vault.withValue(of: "db/password") { Array($0) } == bytes("hunter2"))
        #expect(try vault.withValue(of: "new") { Array($0) } == [8])
    }

    @Test(arguments: [true, false])
    func test_withValue_missingEntryThrowsItsName(decoded: Bool) throws {
        let vault = try sample(decoded: decoded)
        var ran = false
        #expect(throws: VaultError.entryNotFound("missing")) { try vault.withValue(of: "missing") { _ in ran = true } }
        #expect(throws: VaultError.entryNotFound("missing"), "a missing entry is named without the field") {
            try vault.withValue(of: "missing", part: .field("url")) { _ in ran = true }
        }
        #expect(!ran)
    }

    @Test(arguments: [true, false])
    func test_withValue_missingFieldThrowsNameFieldAndTheFieldsItHas(decoded: Bool) throws {
        let vault = try sample(decoded: decoded)
        var ran = false
        #expect(throws: VaultError.fieldNotFound(entry: "db/password", field: "nope", available: ["url", "username"])) {
            try vault.withValue(of: "db/password", part: .field("nope")) { _ in ran = true }
        }
        #expect(throws: VaultError.fieldNotFound(entry: "empty", field: "url", available: [])) {
            try vault.withValue(of: "empty", part: .field("url")) { _ in ran = true }
        }
        #expect(!ran)
    }

    @Test func test_withValue_removedStoredEntryIsNotFound() throws {
        var vault = try sample(decoded: true)
        try vault.remove("empty")
        #expect(throws: VaultError.entryNotFound("empty")) { try vault.withValue(of: "empty") { _ in } }
    }

    @Test func test_withValue_rethrowsWhatTheBodyThrows() throws {
        struct Refused: Error, Equatable {}
        let vault = try sample(decoded: true)
        #expect(throws: Refused()) { try vault.withValue(of: "db/password") { _ in throw Refused() } }
    }

    // MARK: - Vault.value

    @Test(arguments: [true, false])
    func test_value_copiesTheValueOrAField(decoded: Bool) throws {
        let vault = try sample(decoded: decoded)
        #expect(try vault.value(of: "db/password") == bytes("hunter2"))
        #expect(try vault.value(of: "db/password", part: .field("username")) == bytes("admin"))
        #expect(try vault.value(of: "empty") == [])
    }

    @Test func test_value_missingEntryOrFieldThrowsLikeWithValue() throws {
        let vault = try sample(decoded: true)
        #expect(throws: VaultError.entryNotFound("missing")) { try vault.value(of: "missing", part: .field("url")) }
        #expect(throws: VaultError.fieldNotFound(entry: "db/password", field: "nope", available: ["url", "username"])) {
            try vault.value(of: "db/password", part: .field("nope"))
        }
    }

    // MARK: - Vault.setValue(_:for:part:)

    @Test(arguments: [true, false])
    func test_setValuePart_setsTheValueOrAField(decoded: Bool) throws {
        var vault = try sample(decoded: decoded)
        try vault.setValue([1], for: "db/password", part: .value, now: 9)
        try vault.setValue([2], for: "db/password", part: .field("url"), now: 9)
        let entry = try #require(vault.entry("db/password"))
        #expect(entry.value == [1])
        #expect(entry.fields == ["url": [2], "username": bytes("admin")])
        #expect(entry.modified == 9)
    }

    @Test func test_setValuePart_fieldOfANewEntryCreatesItWithAnEmptyValue() throws {
        var vault = try sample(decoded: true)
        try vault.setValue([3], for: "fresh", part: .field("user"), now: 9)
        #expect(vault.entry("fresh") == Entry(value: [], fields: ["user": [3]], created: 9, modified: 9))
        #expect(vault.count == 4)
    }

    @Test func test_setValuePart_sameBytesChangeNothing() throws {
        var vault = try sample(decoded: true)
        let before = vault
        try vault.setValue(bytes("hunter2"), for: "db/password", part: .value, now: 9)
        try vault.setValue(bytes("admin"), for: "db/password", part: .field("username"), now: 9)
        #expect(vault == before)
    }

    @Test func test_setValuePart_invalidFieldNameThrows() throws {
        var vault = try sample(decoded: true)
        #expect(throws: VaultError.self) { try vault.setValue([1], for: "db/password", part: .field(""), now: 9) }
    }

    // MARK: - Vault.removeValue

    @Test(arguments: [true, false])
    func test_removeValue_valueRemovesTheWholeEntry(decoded: Bool) throws {
        var vault = try sample(decoded: decoded)
        try vault.removeValue(for: "db/password", part: .value)
        #expect(!vault.contains("db/password"))
        #expect(vault.count == 2)
    }

    @Test(arguments: [true, false])
    func test_removeValue_fieldKeepsTheEntry(decoded: Bool) throws {
        var vault = try sample(decoded: decoded)
        try vault.removeValue(for: "db/password", part: .field("url"), now: 9)
        let entry = try #require(vault.entry("db/password"))
        #expect(entry.value == bytes("hunter2"))
        #expect(entry.fields == ["username": bytes("admin")])
        #expect(entry.modified == 9)
        #expect(vault.count == 3)
    }

    @Test func test_removeValue_missingEntryOrFieldThrowsAndChangesNothing() throws {
        var vault = try sample(decoded: true)
        let before = vault
        #expect(throws: VaultError.entryNotFound("missing")) { try vault.removeValue(for: "missing", part: .value) }
        #expect(throws: VaultError.entryNotFound("missing")) { try vault.removeValue(for: "missing", part: .field("url")) }
        #expect(throws: VaultError.fieldNotFound(entry: "db/password", field: "nope", available: ["url", "username"])) {
            try vault.removeValue(for: "db/password", part: .field("nope"))
        }
        #expect(vault == before)
    }

    // MARK: - Template.render(_:from:)

    @Test func test_renderFrom_insertsValuesAndFields() throws {
        let vault = try sample(decoded: true)
        let output = try Template.render(bytes("u={{ vf://db/password#username }} p={{vf://db/password}} e=[{{ vf://empty }}] {{ other }}"), from: vault)
        #expect(output == bytes("u=admin p=hunter2 e=[] {{ other }}"))
    }

    @Test func test_renderFrom_missingReferenceNamesItAndItsLine() throws {
        let vault = try sample(decoded: true)
        #expect(throws: VaultError.referenceNotFound("nope", line: 2)) {
            try Template.render(bytes("a={{ vf://empty }}\nb={{ vf://nope#f }}\n"), from: vault)
        }
        #expect(throws: VaultError.referenceNotFound("db/password#nope", line: 1)) {
            try Template.render(bytes("{{ vf://db/password#nope }}"), from: vault)
        }
    }
}
