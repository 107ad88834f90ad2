import Foundation
import TestSupport
import Testing

/// `--kdbx-keyfile` and `--new-keyfile`: regular files only, a file over 1 MiB hashed as it is read
/// (as KeePass hashes any file), an empty file refused for a new database.
extension ExternalTools {
    @Suite struct KDBXKeyFileCLITests {
        static let tiny = KDBXExportCLITests.tiny

        // MARK: - Success

        /// A 2 MiB key file (hashed while read): the export written with it opens with it in
        /// vaultfile and in keepassxc-cli (which hashes it the same way).
        @Test func test_kdbxKeyFileOver1MiBIsHashedAsKeePassDoes() throws {
            let cli = try CLI.withEntriesSet(["a": "secret-a"]); defer { cli.directory.remove() }
            var generator = SystemRandomNumberGenerator()
            try cli.write("big.key", (0..<(2 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
            let exported = try cli.run(["export", "--format", "kdbx", "--out", cli.path("k.kdbx"), "--new-keyfile", cli.path("big.key"),
                                        "--no-new-password"] + Self.tiny + cli.unlock())
            #expect(exported.status == 0, "\(exported.stderr)")
            let imported = try cli.run(["import", "--format", "kdbx", "--kdbx-keyfile", cli.path("big.key"), "--kdbx-no-password", "--prefix", "back",
                                        cli.path("k.kdbx")] + cli.unlock())
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try cli.run(["get", "back/a"] + cli.unlock()).text == "secret-a")
            guard let tool = KDBXImportCLITests.keepassxc else { print(KDBXImportCLITests.skipped); return }
            let shown = try KDBXImportCLITests.keepass(cli, tool, "$KP show -q --no-password -k big.key -s -a Password k.kdbx a")
            #expect(shown.status == 0 && shown.text == "secret-a\n", "\(shown.stderr)")
        }

        // MARK: - Failure

        /// A named pipe as the key file is refused at once (nothing waits for a writer), naming it.
        @Test func test_kdbxKeyFileThatIsANamedPipeIsRefused() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            #expect(mkfifo(cli.path("pipe.key"), 0o600) == 0)
            try cli.write("fpw", Array("kdbx-fixture".utf8))
            let fixture = ProjectPaths.fixtures.appendingPathComponent("kdbx/kdbx4-argon2id-chacha20.kdbx").path
            let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw"), "--kdbx-keyfile", cli.path("pipe.key"),
                                      fixture] + cli.unlock())
            #expect(result.status != 0 && result.stderr.contains("pipe.key") && result.stderr.contains("a named pipe"), "\(result.stderr)")
        }

        // MARK: - Edge

        /// An empty key file would protect nothing (its key is the SHA-256 of nothing): a new
        /// database refuses it, with a hint that makes a real one; no file is written.
        @Test func test_export_kdbxEmptyNewKeyFileIsRefused() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            try cli.write("empty.key", [])
            let result = try cli.run(["export", "--format", "kdbx", "--out", cli.path("k.kdbx"), "--new-keyfile", cli.path("empty.key"),
                                      "--no-new-password"] + Self.tiny + cli.unlock())
            #expect(result.status == 2 && result.stderr.contains("empty.key is empty") && result.stderr.contains("/dev/urandom"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("k.kdbx")))
        }
    }
}
