import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultModel

/// Names in two Unicode forms (NFC and NFD) through the binary: found in either form, stored
/// composed, twins refused naming both, and old vaults that hold both forms.
@Suite struct NameNormalizationCLITests {
    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    // MARK: - Either form finds the entry

    @Test func test_names_aDecomposedNameFindsTheComposedEntry() throws {
        let cli = try CLI.withEntriesSet([(composed, bytes("secret"))]); defer { cli.directory.remove() }
        #expect(try cli.run(["get", decomposed] + cli.unlock()).text == "secret")
        #expect(try cli.run(["exec", "--only", decomposed] + cli.unlock() + ["--", "true"]).status == 0)
        try cli.write("script", bytes("get \(decomposed)\n"))
        #expect(try cli.run(["batch", "--script", cli.path("script")] + cli.unlock()).text == "secret")
        #expect(try cli.run(["set", decomposed] + cli.unlock(), stdin: bytes("new")).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes(composed + "\n"), "still one entry, stored composed")
        #expect(try cli.run(["rm", decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
    }

    @Test func test_names_newNamesAreStoredComposed() throws {
        let cli = try CLI.withEntriesSet([(decomposed + "/a", bytes("x"))]); defer { cli.directory.remove() }
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes(composed + "/a\n"))
        #expect(try cli.run(["mv", composed + "/a", "b/" + decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("b/" + composed + "\n"))
        // cp: the source found in either form, the copy named in NFC; a folder likewise.
        #expect(try cli.run(["cp", "b/" + decomposed, "c/" + decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["cp", decomposed + "/", "d/"] + cli.unlock()).status != 0, "no folder café/ any more")
        #expect(try cli.run(["cp", "c/", decomposed + "/"] + cli.unlock()).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("b/\(composed)\nc/\(composed)\n\(composed)/\(composed)\n"))
    }

    @Test func test_import_aDecomposedNameIsStoredComposedAndSaysSo() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let json = "{\"vaultfile_export\":1,\"entries\":[{\"name\":\"cafe\u{301}\",\"value\":\"v\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: bytes(json))
        #expect(result.status == 0 && result.stderr.contains("put in Unicode NFC"), "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("caf\u{E9}\n"))
    }

    // MARK: - Vaults written before names were composed

    /// A vault written as an older vaultfile could write it: names stored byte for byte as given.
    private func oldVault(_ names: [String]) throws -> CLI {
        let cli = try CLI()
        try cli.write("pw", bytes("pw"))
        var vault = Vault()
        for (index, name) in names.enumerated() { try vault.put(Entry(value: bytes("v\(index)"), created: 1, modified: 1), as: name) }
        try VaultStore(path: cli.path("t.vault")).create(vault, password: SecureBytes(copying: bytes("pw")),
                                                         kdf: .argon2id(.init(memoryKiB: 8 * 1024, iterations: 1, parallelism: 1)))
        return cli
    }

    /// `trash restore` of an entry an older vault stored decomposed, when an entry of the same text
    /// was made since in NFC: refused as a twin (before, both came to exist).
    @Test func test_trashRestore_refusesTheTwinOfAnEntryMadeSince() throws {
        let cli = try oldVault([decomposed]); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        #expect(try cli.run(["rm", decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["set", composed] + cli.unlock(), stdin: bytes("new")).status == 0)
        let restore = try cli.run(["trash", "restore", decomposed] + cli.unlock())
        #expect(restore.status == 2, "\(restore.stderr)")
        #expect(restore.stderr.contains("$'caf\\u00e9'") && restore.stderr.contains("$'cafe\\u0301'"), "\(restore.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("\(composed)\n"), "one entry of that text")
    }

    @Test func test_names_aTwinOfAnOldEntryIsRefusedNamingBoth() throws {
        let cli = try oldVault([decomposed]); defer { cli.directory.remove() }
        let result = try cli.run(["set", composed] + cli.unlock(), stdin: bytes("x"))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("$'caf\\u00e9'") && result.stderr.contains("$'cafe\\u0301'"), "\(result.stderr)")
        #expect(result.stderr.contains("hint: ") && result.stderr.contains("vaultfile mv $'cafe\\u0301' $'caf\\u00e9'"))
        #expect(try cli.run(["get", decomposed] + cli.unlock()).text == "v0", "the old entry stays reachable by its bytes")
    }

    @Test func test_names_bothFormsInAnOldVaultStayReachable() throws {
        let cli = try oldVault([composed, decomposed]); defer { cli.directory.remove() }
        #expect(try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").count == 2)
        #expect(try cli.run(["get", composed] + cli.unlock()).text == "v0")
        #expect(try cli.run(["get", decomposed] + cli.unlock()).text == "v1")
        #expect(try cli.run(["rm", decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", composed] + cli.unlock()).text == "v0")
    }

    // MARK: - Imports

    /// An export with history (version 2) whose names are decomposed: the entry is stored in NFC and
    /// its earlier versions go with it (they were filed under the old spelling, as a removed entry).
    @Test func test_importWithHistory_keepsTheVersionsWithTheRenamedEntry() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        let version = "{\"created\":1,\"modified\":1,\"name\":\"\(decomposed)\",\"replaced\":3,\"value\":\"v1\"}"
        let export = "{\"vaultfile_export\":2,\"entries\":[{\"name\":\"\(decomposed)\",\"value\":\"v2\",\"created\":1,\"modified\":3}],"
            + "\"history\":[{\"name\":\"\(decomposed)\",\"versions\":[\(version)]}]}"
        try cli.write("h.json", bytes(export))
        let imported = try cli.run(["import", "--format", "json", cli.path("h.json")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run(["get", composed, "--revision", "1"] + cli.unlock()).text == "v1", "the earlier version is the entry's")
        #expect(try cli.run(["trash", "list"] + cli.unlock()).text.isEmpty, "nothing shows as removed")
    }

    @Test func test_import_refusesTwinsInOneFileNamingBoth() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let both = "{\"vaultfile_export\":1,\"entries\":[{\"name\":\"\(composed)\",\"value\":\"1\"},{\"name\":\"\(decomposed)\",\"value\":\"2\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: bytes(both))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("$'caf\\u00e9'") && result.stderr.contains("$'cafe\\u0301'"), "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty, "nothing was imported")
    }
}
