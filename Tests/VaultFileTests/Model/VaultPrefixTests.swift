import Testing
@testable import VaultModel

/// Folders of entries (`rm -r`, `mv` and `cp` of a prefix) and the copy of one entry.
@Suite struct VaultPrefixTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// `prod/db`, `prod/web/key` (with a field), `production/x` and `staging/db`; decrypted
    /// (records where they lie) or built in memory.
    private func folders(decoded: Bool) throws -> Vault {
        var vault = Vault()
        try vault.setValue(bytes("p1"), for: "prod/db", now: 1)
        try vault.setValue(bytes("p2"), for: "prod/web/key", now: 2)
        try vault.setField("user", value: bytes("admin"), for: "prod/web/key", now: 3)
        try vault.setValue(bytes("x"), for: "production/x", now: 4)
        try vault.setValue(bytes("s1"), for: "staging/db", now: 5)
        return decoded ? try EntryCodec.decode(EntryCodec.encode(vault)) : vault
    }

    // MARK: - Vault.folder

    @Test func test_folder_addsOneTrailingSlash() {
        #expect(Vault.folder("prod") == "prod/")
        #expect(Vault.folder("prod/") == "prod/")
    }

    // MARK: - Vault.removeFolder

    @Test(arguments: [true, false])
    func test_removeFolder_removesEveryEntryUnderItAndNothingElse(decoded: Bool) throws {
        var vault = try folders(decoded: decoded)
        let removed = try vault.removeFolder("prod")
        #expect(removed == ["prod/db", "prod/web/key"])
        #expect(vault.names == ["production/x", "staging/db"])
        #expect(vault.count == 2)
    }

    @Test func test_removeFolder_emptyFolderIsNotFound() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.entryNotFound("nothing/")) { try vault.removeFolder("nothing/") }
        #expect(vault.count == 4)
    }

    @Test func test_removeFolder_invalidFolderNameIsRefused() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.self) { try vault.removeFolder("a//") }
        #expect(throws: VaultError.self) { try vault.removeFolder("/") }
    }

    // MARK: - Vault.moveFolder

    @Test(arguments: [true, false])
    func test_moveFolder_renamesEveryEntryKeepingValuesFieldsAndTimes(decoded: Bool) throws {
        var vault = try folders(decoded: decoded)
        let plan = try vault.moveFolder("prod/", to: "live/", overwrite: false)
        #expect(plan == [Relocation(source: "prod/db", destination: "live/db", replaces: false),
                         Relocation(source: "prod/web/key", destination: "live/web/key", replaces: false)])
        #expect(vault.names == ["live/db", "live/web/key", "production/x", "staging/db"])
        let moved = try #require(vault.entry("live/web/key"))
        #expect(moved.value == bytes("p2") && moved.fields["user"] == bytes("admin"))
        #expect(moved.created == 2 && moved.modified == 3)
    }

    @Test func test_moveFolder_clashIsRefusedAndNothingChanges() throws {
        var vault = try folders(decoded: true)
        let before = vault
        #expect(throws: VaultError.entryExists("staging/db")) { try vault.moveFolder("prod", to: "staging", overwrite: false) }
        #expect(vault == before)
    }

    @Test func test_moveFolder_forceReplacesTheEntriesInTheWay() throws {
        var vault = try folders(decoded: true)
        let plan = try vault.moveFolder("prod/", to: "staging/", overwrite: true)
        #expect(plan.map(\.replaces) == [true, false])
        #expect(vault.names == ["production/x", "staging/db", "staging/web/key"])
        #expect(vault.entry("staging/db")?.value == bytes("p1"))
    }

    @Test func test_moveFolder_intoItselfMovesEachEntryOnce() throws {
        var vault = try folders(decoded: true)
        try vault.moveFolder("prod/", to: "prod/old/", overwrite: false)
        #expect(vault.names == ["prod/old/db", "prod/old/web/key", "production/x", "staging/db"])
    }

    @Test func test_moveFolder_anInvalidNewNameChangesNothing() throws {
        var vault = try folders(decoded: true)
        let before = vault
        #expect(throws: VaultError.self) { try vault.moveFolder("prod/", to: "../", overwrite: false) }
        let long = String(repeating: "a", count: VaultLimits.maxNameLength - 3) + "/"
        #expect(throws: VaultError.self) { try vault.moveFolder("prod/", to: long, overwrite: false) }
        #expect(vault == before)
    }

    @Test func test_moveFolder_missingFolderIsNotFound() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.entryNotFound("pro/")) { try vault.moveFolder("pro", to: "x", overwrite: false) }
    }

    @Test func test_moveFolder_sameFolderChangesNothing() throws {
        var vault = try folders(decoded: true)
        #expect(try vault.moveFolder("prod/", to: "prod", overwrite: false).isEmpty)
        #expect(vault.names.count == 4)
    }

    // MARK: - Vault.copyFolder

    @Test(arguments: [true, false])
    func test_copyFolder_copiesEveryEntryAsNewEntries(decoded: Bool) throws {
        var vault = try folders(decoded: decoded)
        try vault.copyFolder("prod/", to: "qa/", overwrite: false, now: 99)
        #expect(vault.names == ["prod/db", "prod/web/key", "production/x", "qa/db", "qa/web/key", "staging/db"])
        let copy = try #require(vault.entry("qa/web/key"))
        #expect(copy.value == bytes("p2") && copy.fields["user"] == bytes("admin"))
        #expect(copy.created == 99 && copy.modified == 99)
        #expect(vault.entry("prod/web/key")?.created == 2)
    }

    @Test func test_copyFolder_clashIsRefusedUnlessOverwrite() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.entryExists("staging/db")) { try vault.copyFolder("prod/", to: "staging/", overwrite: false) }
        #expect(vault.count == 4)
        try vault.copyFolder("prod/", to: "staging/", overwrite: true)
        #expect(vault.entry("staging/db")?.value == bytes("p1"))
        #expect(vault.count == 5)
    }

    // MARK: - Vault.copy

    @Test func test_copy_copiesValueAndFields() throws {
        var vault = try folders(decoded: true)
        let step = try vault.copy("prod/web/key", to: "backup/key", overwrite: false, now: 7)
        #expect(step == Relocation(source: "prod/web/key", destination: "backup/key", replaces: false))
        #expect(vault.entry("backup/key") == Entry(value: bytes("p2"), fields: ["user": bytes("admin")], created: 7, modified: 7))
        #expect(vault.contains("prod/web/key"))
    }

    @Test func test_copy_refusesToClobberWithoutOverwrite() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.entryExists("staging/db")) { try vault.copy("prod/db", to: "staging/db", overwrite: false) }
        #expect(vault.entry("staging/db")?.value == bytes("s1"))
        try vault.copy("prod/db", to: "staging/db", overwrite: true)
        #expect(vault.entry("staging/db")?.value == bytes("p1"))
    }

    @Test func test_copy_missingSourceAndInvalidDestination() throws {
        var vault = try folders(decoded: true)
        #expect(throws: VaultError.entryNotFound("nope")) { try vault.copy("nope", to: "x", overwrite: false) }
        #expect(throws: VaultError.self) { try vault.copy("prod/db", to: "a//b", overwrite: false) }
    }
}
