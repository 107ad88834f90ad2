import Foundation
import TestSupport
import Testing

/// `vaultfile import --format kdbx` of databases the real keepassxc-cli makes (KDBX 3.1, what
/// `db-create` writes here: a password, a key file, both; entries, an attachment, a history version,
/// KeePassXC's `otp`), of Fixtures/kdbx (KDBX 4 variants, make-kdbx.py) and of its hostile files.
/// Every keepassxc-cli run is bounded by `timeout`; without keepassxc-cli those tests say they skipped.
extension ExternalTools {
    @Suite struct KDBXImportCLITests {
        static let keepassxc = ["/usr/bin/keepassxc-cli", "/usr/local/bin/keepassxc-cli"].first { FileManager.default.isExecutableFile(atPath: $0) }
        static let skipped = "skipped: needs keepassxc-cli (apt-get install keepassxc)"
        static let fixtures = ProjectPaths.fixtures.appendingPathComponent("kdbx").path

        /// Runs `script` in the test's folder with `$KP` (keepassxc-cli under `timeout 30`).
        static func keepass(_ cli: CLI, _ tool: String, _ script: String) throws -> CLI.Result {
            try cli.shell("set -e\ncd \"\(cli.directory.url.path)\"\nKP=\"timeout 30 \(tool)\"\n" + script,
                          extra: ["HOME": cli.directory.url.path, "QT_QPA_PLATFORM": "offscreen"])
        }

        /// A seed XML with what keepassxc-cli's own commands cannot set (KeePassXC's `otp`, a custom
        /// protected attribute, nested groups), turned into kp.kdbx by `keepassxc-cli import`, then an
        /// attachment and an edit (a history version) by keepassxc-cli itself.
        static func makeDatabase(_ cli: CLI, _ tool: String, options: String = "-p") throws -> CLI.Result {
            try cli.write("seed.xml", Array("""
                <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Passwords</Name>
                <Group><Name>Email</Name><Entry><String><Key>Title</Key><Value>Mail</Value></String>
                <String><Key>UserName</Key><Value>alice</Value></String><String><Key>Password</Key><Value>first &lt;pw&gt;</Value></String>
                <String><Key>URL</Key><Value>https://mail.example</Value></String><String><Key>Notes</Key><Value>one
                two</Value></String><String><Key>otp</Key><Value ProtectInMemory="True">otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP&amp;period=30&amp;digits=6</Value></String>
                <String><Key>Recovery PIN</Key><Value ProtectInMemory="True">8642</Value></String></Entry></Group>
                <Entry><String><Key>Title</Key><Value>Web</Value></String><String><Key>Password</Key><Value>hn</Value></String></Entry>
                </Group></Root></KeePassFile>
                """.utf8))
            return try keepass(cli, tool, """
                printf 'hello attachment\\n' > a.txt
                printf 'pw\\npw\\n' | $KP import -q \(options) -t 100 seed.xml kp.kdbx
                echo pw | $KP attachment-import -q kp.kdbx Email/Mail a.txt a.txt
                printf 'pw\\nsecond <pw>\\n' | $KP edit -q -p kp.kdbx Email/Mail
                """)
        }

        // MARK: - Success

        @Test func test_import_kdbxOfAKeePassXCDatabaseKeepsEverything() throws {
            guard let tool = Self.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let made = try Self.makeDatabase(cli, tool)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
            try cli.write("kpw", Array("pw\n".utf8))
            let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try names(cli) == ["Email/Mail", "Web"])
            func get(_ name: String, _ field: String? = nil) throws -> String {
                try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock()).text
            }
            #expect(try get("Email/Mail") == "second <pw>" && get("Web") == "hn")
            #expect(try get("Email/Mail", "username") == "alice" && get("Email/Mail", "url") == "https://mail.example")
            #expect(try get("Email/Mail", "notes") == "one\ntwo" && get("Email/Mail", "Recovery_PIN") == "8642")
            #expect(try get("Email/Mail", "attachment.a.txt") == "hello attachment\n", "attachments, which KeePassXC's XML export leaves out")
            #expect(try get("Email/Mail", "totp").hasPrefix("otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP"))
            #expect(try cli.run(["get", "Email/Mail", "--revision", "1"] + cli.unlock()).text == "first <pw>", "the entry's history")
            // The same code as keepassxc-cli's, read twice in case a 30-second step passed between them.
            var same = false
            for _ in 0..<2 where !same {
                let ours = try cli.run(["totp", "Email/Mail"] + cli.unlock()).text.trimmingCharacters(in: .whitespacesAndNewlines)
                let theirs = try Self.keepass(cli, tool, "echo pw | $KP show -q --totp kp.kdbx Email/Mail").text.trimmingCharacters(in: .whitespacesAndNewlines)
                same = ours.count == 6 && ours == theirs
            }
            #expect(same, "vaultfile totp and keepassxc-cli show --totp agree")
        }

        /// Two entries of one title in one group: the entries are not built as read (the second
        /// name needs numbering), and the decrypted payload is read again into items, attachment,
        /// history and all (`KDBXReader.entries`), as a database of distinct titles is built as read.
        @Test func test_import_kdbxWithARepeatedTitleIsReadAgainWhole() throws {
            guard let tool = Self.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            func entry(_ title: String, _ user: String, _ password: String) -> String {
                "<Entry><String><Key>Title</Key><Value>\(title)</Value></String><String><Key>UserName</Key><Value>\(user)</Value></String>"
                    + "<String><Key>Password</Key><Value>\(password)</Value></String></Entry>"
            }
            try cli.write("seed.xml", Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root>"
                + "<Group><Name>Passwords</Name><Group><Name>Email</Name>" + entry("Mail", "alice", "first") + entry("Mail", "bob", "other")
                + "</Group>" + entry("Web", "carol", "hn") + "</Group></Root></KeePassFile>").utf8))
            let made = try Self.keepass(cli, tool, """
                printf 'hello attachment\\n' > a.txt
                printf 'pw\\npw\\n' | $KP import -q -p -t 100 seed.xml kp.kdbx
                echo pw | $KP attachment-import -q kp.kdbx Web a.txt a.txt
                printf 'pw\\nsecond\\n' | $KP edit -q -p kp.kdbx Web
                """)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
            try cli.write("kpw", Array("pw\n".utf8))
            let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            let listed = try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
            #expect(listed.count == 3 && listed.contains("Web"), "\(listed)")
            let mails = listed.filter { $0.hasPrefix("Email/Mail") }
            let values = try Set(mails.map { try cli.run(["get", $0] + cli.unlock()).text })
            #expect(mails.count == 2 && values == ["first", "other"], "\(mails) \(values)")
            #expect(try cli.run(["get", "Web", "--field", "attachment.a.txt"] + cli.unlock()).text == "hello attachment\n")
            #expect(try cli.run(["get", "Web"] + cli.unlock()).text == "second")
            #expect(try cli.run(["get", "Web", "--revision", "1"] + cli.unlock()).text == "hn", "the entry's history")
        }

        /// KeePassXC keeps a version for every edit, whatever it changed: versions that differ only
        /// in the URL or the title (made within one second, so their times are the same) stay
        /// separate versions, each the whole entry it was (issue 45).
        @Test func test_import_kdbxHistoryVersionsThatDifferOnlyInOtherFieldsStaySeparate() throws {
            guard let tool = Self.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let made = try Self.keepass(cli, tool, """
                printf 'pw\\npw\\n' | $KP db-create -q -p -t 100 kp.kdbx
                printf 'pw\\nsecret1\\n' | $KP add -q -p -u alice --url https://a.example kp.kdbx Mail
                echo pw | $KP edit -q --url https://b.example kp.kdbx Mail
                echo pw | $KP edit -q --url https://c.example kp.kdbx Mail
                echo pw | $KP edit -q -t Mail2 kp.kdbx Mail
                """)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
            try cli.write("kpw", Array("pw\n".utf8))
            let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("history"), "no history is lost or counted: \(result.stderr)")
            func field(_ revision: Int, _ name: String) throws -> String {
                try cli.run(["get", "Mail2", "--revision", "\(revision)", "--field", name] + cli.unlock()).text
            }
            #expect(try field(1, "url") == "https://c.example" && field(1, "title") == "Mail", "the version before the title changed")
            #expect(try field(2, "url") == "https://b.example" && field(3, "url") == "https://a.example")
            #expect(try (1...3).allSatisfy { try cli.run(["get", "Mail2", "--revision", "\($0)"] + cli.unlock()).text == "secret1" })
            #expect(try cli.run(["get", "Mail2", "--revision", "4"] + cli.unlock()).status != 0, "three versions, none merged")
        }

        @Test func test_import_kdbxWithAKeyFileAloneOrWithAPassword() throws {
            guard let tool = Self.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            // keepassxc-cli writes a KeePass XML key file (version 2.0) when the file does not exist.
            let made = try Self.keepass(cli, tool, """
                printf 'pw\\npw\\n' | $KP db-create -q -p --set-key-file both.keyx -t 100 both.kdbx
                printf 'pw\\nboth-secret\\n' | $KP add -q -k both.keyx -p both.kdbx Both
                $KP db-create -q --set-key-file only.keyx -t 100 only.kdbx
                printf 'only-secret\\n' | $KP add -q --no-password -k only.keyx -p only.kdbx Only
                """)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(String(decoding: try cli.read("both.keyx"), as: UTF8.self).contains("<Version>2.0</Version>"))
            try cli.write("kpw", Array("pw".utf8))
            let both = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), "--kdbx-keyfile", cli.path("both.keyx"),
                                    cli.path("both.kdbx")] + cli.unlock())
            #expect(both.status == 0, "\(both.stderr)")
            let only = try cli.run(["import", "--format", "kdbx", "--kdbx-keyfile", cli.path("only.keyx"), "--kdbx-no-password",
                                    cli.path("only.kdbx")] + cli.unlock())
            #expect(only.status == 0, "\(only.stderr)")
            #expect(try cli.run(["get", "Both"] + cli.unlock()).text == "both-secret" && cli.run(["get", "Only"] + cli.unlock()).text == "only-secret")
            // The password without the key file does not open it: exit 3, the hint names --kdbx-keyfile.
            let missing = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("both.kdbx")] + cli.unlock())
            #expect(missing.status == 3 && missing.stderr.contains("--kdbx-keyfile"), "\(missing.stderr)")
        }

        @Test func test_import_kdbxFixturesOfKDBX4AndAutoDetection() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try cli.write("fpw", Array("kdbx-fixture".utf8))
            for (index, name) in ["kdbx4-argon2id-chacha20", "kdbx4-argon2d-aes", "kdbx4-aeskdf-chacha20", "kdbx31-aeskdf-salsa20"].enumerated() {
                // No --format: the KDBX signature says what it is.
                let format = index == 0 ? [] : ["--format", "kdbx"]
                let result = try cli.run(["import"] + format + ["--prefix", name, "--kdbx-password-file", cli.path("fpw"), "\(Self.fixtures)/\(name).kdbx"] + cli.unlock())
                #expect(result.status == 0, "\(name): \(result.stderr)")
                #expect(try cli.run(["get", "\(name)/Work/Mail"] + cli.unlock()).text == "pässword", "\(name)")
                #expect(try cli.run(["get", "\(name)/Work/Mail", "--field", "attachment.f.txt"] + cli.unlock()).text == "attached bytes\n", "\(name)")
            }
        }

        // MARK: - Failure

        @Test func test_import_kdbxRefusesHostileFilesAsDamagedAndImportsNothing() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try cli.write("fpw", Array("kdbx-fixture".utf8))
            for name in ["huge-header-field", "block-4gib", "hmac-block-7", "gzip-lying-size", "truncated-inner-header"] {
                let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw"), "\(Self.fixtures)/hostile/\(name).kdbx"] + cli.unlock())
                #expect(result.status == 4, "\(name): \(result.status) \(result.stderr)")
            }
            let bomb = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw"), "\(Self.fixtures)/hostile/gzip-bomb.kdbx"] + cli.unlock())
            #expect(bomb.status == 6 && bomb.stderr.contains("refused before inflating"), "the import growth limit: \(bomb.stderr)")
            #expect(try names(cli).isEmpty)
        }

        @Test func test_import_kdbxWrongPasswordAndKDFCaps() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try cli.write("bad", Array("not-it".utf8))
            let wrong = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("bad"), "\(Self.fixtures)/kdbx4-argon2id-chacha20.kdbx"] + cli.unlock())
            #expect(wrong.status == 3 && wrong.stderr.contains("does not open with the password given"), "\(wrong.stderr)")
            try cli.write("fpw", Array("kdbx-fixture".utf8))
            // The database asks Argon2 for 8 KiB; a cap of 4 KiB refuses it before any work (exit 6, the option named).
            let capped = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw"), "--kdf-max-memory", "4K",
                                      "\(Self.fixtures)/kdbx4-argon2id-chacha20.kdbx"] + cli.unlock())
            #expect(capped.status == 6 && capped.stderr.contains("--kdf-max-memory"), "\(capped.stderr)")
            let misplaced = try cli.run(["import", "--format", "json", "--kdbx-password-file", cli.path("fpw"), cli.path("fpw")] + cli.unlock())
            #expect(misplaced.status == 64 && misplaced.stderr.contains("go with --format kdbx"), "\(misplaced.stderr)")
            #expect(try names(cli).isEmpty)
        }
    }
}
