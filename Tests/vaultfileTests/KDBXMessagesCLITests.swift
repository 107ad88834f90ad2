import Foundation
import TestSupport
import Testing

/// What `import`/`export --format kdbx` say when they stop: the AES-KDF cap names the KDBX file and
/// its rounds, and its hint opens the file; damage with the right password is exit 4, never 3; an
/// XML fault inside an authenticated file is damage of that file; without a terminal the hint names
/// the KDBX options, not the vault's.
@Suite struct KDBXMessagesCLITests {
    static let fixtures = ProjectPaths.fixtures.appendingPathComponent("kdbx").path

    private func importKDBX(_ cli: CLI, _ file: String, extra: [String] = []) throws -> CLI.Result {
        try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw")] + extra + [file] + cli.unlock())
    }

    // MARK: - Success

    /// The fixture asks AES-KDF for 100 rounds; a cap of 24 iterations (96 rounds) refuses it with
    /// exit 6, naming the file and the rounds; the hint's value (25) then opens it.
    @Test func test_import_kdbxAESKDFCapNamesTheFileAndItsHintWorks() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let file = "\(Self.fixtures)/kdbx4-aeskdf-chacha20.kdbx"
        let capped = try importKDBX(cli, file, extra: ["--kdf-max-iterations", "24"])
        #expect(capped.status == 6, "\(capped.stderr)")
        #expect(capped.stderr.contains("kdbx4-aeskdf-chacha20.kdbx asks AES-KDF for 100 rounds") && capped.stderr.contains("96 rounds"), "\(capped.stderr)")
        #expect(!capped.stderr.contains("PBKDF2") && !capped.stderr.contains("the vault asks"), "\(capped.stderr)")
        #expect(capped.stderr.contains("--kdf-max-iterations 25"), "\(capped.stderr)")
        let opened = try importKDBX(cli, file, extra: ["--kdf-max-iterations", "25"])
        #expect(opened.status == 0, "\(opened.stderr)")
    }

    // MARK: - Failure

    /// KDBX 3.1 cut by 16 bytes (whole AES blocks, the padding lost) with the right password: the
    /// key is checked on its first blocks, so it is damage (exit 4); a wrong password stays exit 3.
    @Test func test_import_kdbx31TruncatedWithTheRightPasswordIsDamaged() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/kdbx31-aeskdf-salsa20.kdbx")))
        try cli.write("cut.kdbx", Array(whole.dropLast(16)))
        let cut = try importKDBX(cli, cli.path("cut.kdbx"))
        #expect(cut.status == 4 && cut.stderr.contains("cut.kdbx is damaged"), "\(cut.stderr)")
        try cli.write("fpw", Array("not-it".utf8))
        let wrong = try importKDBX(cli, cli.path("cut.kdbx"))
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(try names(cli).isEmpty)
    }

    /// A KDBX 4 file whose every HMAC verifies but whose XML is not well-formed: exit 4, the file named.
    @Test func test_import_kdbxXMLFaultInsideAnAuthenticatedFileIsDamage() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let result = try importKDBX(cli, "\(Self.fixtures)/hostile/xml-malformed.kdbx")
        #expect(result.status == 4 && result.stderr.contains("xml-malformed.kdbx is damaged or was modified: its XML"), "\(result.stderr)")
    }

    // MARK: - Edge

    /// No password file and no terminal (the tests run without one): the hints name
    /// --kdbx-password-file (import) and --new-password-file (export), not the vault's --password-file.
    @Test func test_kdbxWithoutATerminalHintsNameTheKDBXOptions() throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        let imported = try cli.run(["import", "--format", "kdbx", "\(Self.fixtures)/kdbx4-argon2id-chacha20.kdbx"] + cli.unlock())
        #expect(imported.status == 2 && imported.stderr.contains("no password for the KeePass database"), "\(imported.stderr)")
        #expect(imported.stderr.contains("--kdbx-password-file") && !imported.stderr.contains("use --password-file"), "\(imported.stderr)")
        let exported = try cli.run(["export", "--format", "kdbx", "--out", cli.path("o.kdbx")] + ExternalTools.KDBXExportCLITests.tiny + cli.unlock())
        #expect(exported.status == 2 && exported.stderr.contains("--new-password-file") && !exported.stderr.contains("use --password-file"),
                "\(exported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("o.kdbx")))
    }
}
