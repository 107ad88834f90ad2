import Foundation
import TestSupport
import Testing

/// `export --format kdbx` of what XML 1.0 cannot hold and of names that meet in KeePass: the written
/// database opens in keepassxc-cli (which refuses characters XML forbids and a key twice in one
/// entry, "Duplicate custom attribute found"). Without keepassxc-cli those checks say they skipped.
extension ExternalTools {
    @Suite struct KDBXExportHardeningCLITests {
        static let tiny = KDBXExportCLITests.tiny

        private func export(_ cli: CLI) throws -> CLI.Result {
            try cli.write("kpw", Array("kp-pw\n".utf8))
            return try cli.run(["export", "--format", "kdbx", "--out", cli.path("db.kdbx"), "--new-password-file", cli.path("kpw")] + Self.tiny + cli.unlock())
        }

        private func set(_ cli: CLI, _ name: String, _ field: String, _ value: [UInt8]) throws {
            try cli.write("value", value)
            let result = try cli.run(["set", name, "--field", field, "--value-file", cli.path("value")] + cli.unlock())
            #expect(result.status == 0, "\(field): \(result.stderr)")
        }

        private func kp(_ cli: CLI, _ tool: String, _ command: String) throws -> CLI.Result {
            try KDBXImportCLITests.keepass(cli, tool, "echo kp-pw | $KP \(command)")
        }

        // MARK: - Success

        /// Names that meet in KeePass: `url2` and a field `KP2A_URL`; a binary field `cert` and the
        /// attachment `attachment.cert`. Each key is written once: the URL takes `KP2A_URL_1`, the
        /// second attachment `cert (2)`, with a warning; keepassxc-cli opens the database and shows them.
        @Test func test_export_kdbxDuplicateKeysAreWrittenOnceEach() throws {
            let cli = try CLI.withEntriesSet(["Site": "pw"]); defer { cli.directory.remove() }
            try set(cli, "Site", "url2", Array("https://two.example".utf8))
            try set(cli, "Site", "KP2A_URL", Array("https://kp2a.example".utf8))
            try set(cli, "Site", "cert", [0x00, 0x30, 0x82])
            try set(cli, "Site", "attachment.cert", Array("PEM\n".utf8))
            let result = try export(cli)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("1 field or attachment was written as 'NAME (2)'"), "\(result.stderr)")
            guard let tool = KDBXImportCLITests.keepassxc else { print(KDBXImportCLITests.skipped); return }
            let shown = try kp(cli, tool, "show -q -a KP2A_URL -a KP2A_URL_1 db.kdbx Site")
            #expect(shown.status == 0 && shown.text == "https://kp2a.example\nhttps://two.example\n", "\(shown.stderr)")
            let listed = try kp(cli, tool, "show -q --show-attachments db.kdbx Site")
            #expect(listed.status == 0 && listed.text.contains("cert (2)"), "\(listed.text) \(listed.stderr)")
            let first = try kp(cli, tool, "attachment-export -q --stdout db.kdbx Site cert")
            #expect(first.status == 0 && first.stdout == Array("PEM\n".utf8), "\(first.stderr)")
        }

        // MARK: - Failure

        /// An entry name XML cannot hold (U+FFFE) refuses the export, naming the entry escaped; no
        /// file is written (a group's name and a title have no place to be put aside).
        @Test func test_export_kdbxNameXMLCannotHoldIsRefused() throws {
            let cli = try CLI.withEntriesSet(["bad\u{FFFE}name": "pw"]); defer { cli.directory.remove() }
            let result = try export(cli)
            #expect(result.status != 0 && result.stderr.contains("'bad\\u{fffe}name'") && result.stderr.contains("XML 1.0"), "\(result.stderr)")
            #expect(!result.stderr.contains("pw\n") && !FileManager.default.fileExists(atPath: cli.path("db.kdbx")))
        }

        // MARK: - Edge

        /// Values with characters XML forbids (U+FFFF, a NUL, a C0 control) become attachments of
        /// their names, and a label holding a NUL (kept by an import in the field `labels`) gives
        /// way to the field's own name: keepassxc-cli opens the database and shows both.
        @Test func test_export_kdbxCharactersXMLForbidsAreNeverWritten() throws {
            let cli = try CLI.withEntriesSet(["E": "pw"]); defer { cli.directory.remove() }
            try set(cli, "E", "odd", Array("a\u{FFFF}b".utf8))
            try set(cli, "E", "ctl", [0x61, 0x01, 0x62])
            try set(cli, "E", "PIN", Array("1234".utf8))
            try set(cli, "E", "labels", Array("PIN\tbad\u{0}label\n".utf8))
            let result = try export(cli)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("2 values or fields are not text") && result.stderr.contains("1 field label holds characters XML cannot"),
                    "\(result.stderr)")
            let written = try cli.read("db.kdbx")
            #expect(!written.isEmpty)
            guard let tool = KDBXImportCLITests.keepassxc else { print(KDBXImportCLITests.skipped); return }
            let shown = try kp(cli, tool, "show -q -a PIN db.kdbx E")
            #expect(shown.status == 0 && shown.text == "1234\n", "\(shown.stderr)")
            let odd = try kp(cli, tool, "attachment-export -q --stdout db.kdbx E odd")
            #expect(odd.status == 0 && odd.stdout == Array("a\u{FFFF}b".utf8), "\(odd.stderr)")
        }
    }
}
