import Foundation
import TestSupport
import Testing

/// `export --format keepass-xml | bitwarden-json | pass` with the real peers: keepassxc-cli
/// imports the XML into a new database (ls, show, show --totp); pass (gpg under a throw-away key
/// in a temporary GNUPGHOME, its agent stopped at the end) shows the store; and each export
/// comes back through vaultfile's own importer of that format. A test whose tool is absent says so.
extension ExternalTools {
    @Suite struct PeerExportCLITests {
        static let hasPass = CryptImportCLITests.hasPass

        /// A vault with `Work/Mail` (every kind of field, one earlier version) and `top`.
        static func filled() throws -> CLI {
            let cli = try CLI.withEntriesSet([])
            #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "Work/Mail"] + cli.unlock(), stdin: Array("first".utf8)).status == 0)
            #expect(try cli.run(["set", "Work/Mail"] + cli.unlock(), stdin: Array("s3cret <&>".utf8)).status == 0)
            for (field, value) in [("username", "alice"), ("url", "https://mail.example"), ("notes", "one\ntwo"), ("PIN", "8642")] {
                #expect(try cli.run(["set", "Work/Mail", "--field", field] + cli.unlock(), stdin: Array(value.utf8)).status == 0)
            }
            try cli.write("att", [0x00, 0x01, 0xFF, 0x0A])
            #expect(try cli.run(["set", "Work/Mail", "--field", "attachment.key.bin", "--value-file", cli.path("att")] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "Work/Mail", "--totp"] + cli.unlock(), stdin: Array("otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP".utf8)).status == 0)
            #expect(try cli.run(["set", "top"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
            return cli
        }

        /// Imports `file` (or the store folder) as `format` into a new vault, with history on; returns that vault's CLI.
        static func reimported(_ path: String, format: String, extra: [String: String] = [:]) throws -> CLI {
            let again = try CLI.withEntriesSet([])
            #expect(try again.run(["history", "--enable"] + again.unlock()).status == 0)
            let result = try again.run(["import", "--format", format, path] + again.unlock(), extra: extra)
            #expect(result.status == 0, "import --format \(format): \(result.stderr)")
            return again
        }

        static func get(_ cli: CLI, _ name: String, _ field: String? = nil) throws -> String {
            try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock()).text
        }

        // MARK: - keepass-xml

        @Test func test_export_keepassXMLImportedByKeePassXC() throws {
            guard let tool = KDBXImportCLITests.keepassxc else { print(KDBXImportCLITests.skipped); return }
            let cli = try Self.filled(); defer { cli.directory.remove() }
            let out = try cli.run(["export", "--format", "keepass-xml", "--out", cli.path("db.xml"), "--json"] + cli.unlock())
            #expect(out.status == 0 && out.stderr.contains("exported 2 entries"), "\(out.stderr)")
            #expect(out.text.contains("\"not_carried\":[]"), "KeePass XML carries everything here: \(out.text)")
            let made = try KDBXImportCLITests.keepass(cli, tool, "printf 'pw\\npw\\n' | $KP import -q -p db.xml kp.kdbx")
            #expect(made.status == 0, "\(made.stderr)")
            func kp(_ command: String) throws -> String {
                let result = try KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP \(command)")
                #expect(result.status == 0, "\(command): \(result.stderr)")
                return result.text
            }
            #expect(try kp("ls -q -R -f kp.kdbx").split(separator: "\n").map(String.init).sorted() == ["Work/", "Work/Mail", "top"])
            #expect(try kp("show -q -s -a Password -a UserName -a URL -a Notes -a PIN kp.kdbx Work/Mail") == "s3cret <&>\nalice\nhttps://mail.example\none\ntwo\n8642\n")
            var same = false
            for _ in 0..<2 where !same {  // read twice in case a 30-second step passed between them
                let theirs = try kp("show -q --totp kp.kdbx Work/Mail").trimmingCharacters(in: .whitespacesAndNewlines)
                let ours = try cli.run(["totp", "Work/Mail"] + cli.unlock()).text.trimmingCharacters(in: .whitespacesAndNewlines)
                same = theirs.count == 6 && theirs == ours
            }
            #expect(same, "keepassxc-cli show --totp and vaultfile totp agree")
            _ = try kp("attachment-export -q kp.kdbx Work/Mail key.bin out.bin")
            #expect(try cli.read("out.bin") == [0x00, 0x01, 0xFF, 0x0A])
        }

        @Test func test_export_keepassXMLReimportedLosesNothing() throws {
            let cli = try Self.filled(); defer { cli.directory.remove() }
            #expect(try cli.run(["export", "--format", "keepass-xml", "--out", cli.path("db.xml")] + cli.unlock()).status == 0)
            let again = try Self.reimported(cli.path("db.xml"), format: "keepass-xml"); defer { again.directory.remove() }
            for field in [nil, "username", "url", "notes", "PIN", "totp"] {
                #expect(try Self.get(again, "Work/Mail", field) == Self.get(cli, "Work/Mail", field), "\(field ?? "value")")
            }
            #expect(try again.run(["get", "Work/Mail", "--field", "attachment.key.bin"] + again.unlock()).stdout == [0x00, 0x01, 0xFF, 0x0A])
            // Every earlier value comes back in order, the oldest "first". (vaultfile's keepass-xml reader keeps a
            // version's value, username and notes; versions that differed only in other fields, which it counts
            // in a warning as not kept, come back as one.)
            func values(_ vault: CLI) throws -> [String] {
                var values: [String] = [], revision = 1
                while true {
                    let result = try vault.run(["get", "Work/Mail", "--revision", "\(revision)"] + vault.unlock())
                    guard result.status == 0 else { return values }
                    if values.last != result.text { values.append(result.text) }
                    revision += 1
                }
            }
            #expect(try values(again) == values(cli) && values(cli) == ["s3cret <&>", "first"])
        }

        // MARK: - bitwarden-json

        @Test func test_export_bitwardenJSONReimportedAndSaysWhatItCannotCarry() throws {
            let cli = try Self.filled(); defer { cli.directory.remove() }
            let out = try cli.run(["export", "--format", "bitwarden-json", "--out", cli.path("bw.json")] + cli.unlock())
            #expect(out.status == 0 && out.stderr.contains("1 attachment not written"), "\(out.stderr)")
            let again = try Self.reimported(cli.path("bw.json"), format: "bitwarden-json"); defer { again.directory.remove() }
            for field in [nil, "username", "url", "notes", "PIN", "totp"] {
                #expect(try Self.get(again, "Work/Mail", field) == Self.get(cli, "Work/Mail", field), "\(field ?? "value")")
            }
            #expect(try Self.get(again, "top") == "v")
            #expect(try again.run(["get", "Work/Mail", "--revision", "1"] + again.unlock()).text == "first")
        }

        // MARK: - pass

        /// A throw-away key in `gnupg` of the test's folder; the environment that uses it.
        static func gnupg(_ cli: CLI) throws -> [String: String] {
            let home = cli.path("gnupg")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let environment = ["GNUPGHOME": home, "HOME": cli.directory.url.path]
            let made = try cli.shell("timeout 30 gpg --batch --quiet --passphrase '' --quick-gen-key 'Throwaway <throwaway@example.invalid>' ed25519 cert "
                                     + "&& timeout 30 gpg --batch --quiet --passphrase '' --quick-add-key \"$(gpg --list-keys --with-colons | awk -F: '/^fpr/ {print $10; exit}')\" cv25519 encr",
                                     extra: environment)
            #expect(made.status == 0, "\(made.stderr)")
            return environment
        }

        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass export tests skipped"))
        func test_export_passStoreShownByPassAndReimported() throws {
            let cli = try Self.filled(); defer { cli.directory.remove() }
            let environment = try Self.gnupg(cli)
            defer { _ = try? cli.shell("gpgconf --kill gpg-agent", extra: environment) }
            let out = try cli.run(["export", "--format", "pass", "--out", cli.path("store"), "--gpg-id", "throwaway@example.invalid"] + cli.unlock(),
                                  extra: environment)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("1 attachment not written") && out.stderr.contains("earlier versions not written"), "\(out.stderr)")
            let files = try cli.shell("cd store && find . -type f | sort && stat -c %a .gpg-id Work/Mail.gpg Work && cat .gpg-id")
            #expect(files.text == "./.gpg-id\n./Work/Mail.gpg\n./top.gpg\n600\n600\n700\nthrowaway@example.invalid\n", "\(files.text)")
            let shown = try cli.shell("timeout 30 pass show Work/Mail", extra: environment.merging(["PASSWORD_STORE_DIR": cli.path("store")]) { $1 })
            #expect(shown.status == 0 && shown.text.hasPrefix("s3cret <&>\nlogin: alice\nurl: https://mail.example\notpauth://totp/Mail?"), "\(shown.text) \(shown.stderr)")
            if FileManager.default.fileExists(atPath: "/usr/lib/password-store/extensions/otp.bash") {
                var same = false
                for _ in 0..<2 where !same {  // read twice in case a 30-second step passed between them
                    let theirs = try cli.shell("timeout 30 pass otp Work/Mail", extra: environment.merging(["PASSWORD_STORE_DIR": cli.path("store")]) { $1 })
                    let ours = try cli.run(["totp", "Work/Mail"] + cli.unlock()).text.trimmingCharacters(in: .whitespacesAndNewlines)
                    let code = theirs.text.trimmingCharacters(in: .whitespacesAndNewlines)
                    same = code.count == 6 && code == ours
                }
                #expect(same, "pass otp and vaultfile totp agree")
            } else {
                print("skipped: pass otp (apt-get install pass-extension-otp)")
            }
            let again = try Self.reimported(cli.path("store"), format: "pass", extra: environment); defer { again.directory.remove() }
            for field in [nil, "username", "url", "notes", "PIN", "totp"] {
                #expect(try Self.get(again, "Work/Mail", field) == Self.get(cli, "Work/Mail", field), "\(field ?? "value")")
            }
            // A store there already: refused without --overwrite; with it, replaced, its .gpg-id reused, its .git kept.
            #expect(try cli.shell("mkdir store/.git && echo x > store/.git/HEAD").status == 0)
            let refused = try cli.run(["export", "--format", "pass", "--out", cli.path("store")] + cli.unlock(), extra: environment)
            #expect(refused.status == 2 && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
            #expect(try cli.run(["rm", "top"] + cli.unlock()).status == 0)
            let replaced = try cli.run(["export", "--format", "pass", "--out", cli.path("store"), "--overwrite"] + cli.unlock(), extra: environment)
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(try cli.shell("cd store && find . -type f | sort").text == "./.git/HEAD\n./.gpg-id\n./Work/Mail.gpg\n")
            #expect(try cli.shell("ls -a | grep -c vaultfile || true").text == "0\n", "no folder left beside")
        }

        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass export tests skipped"))
        func test_export_passStoreRefusedWritesNothing() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            let environment = try Self.gnupg(cli)
            defer { _ = try? cli.shell("gpgconf --kill gpg-agent", extra: environment) }
            // A folder that is not a store, an unknown key, no key at all, an option gpg would read.
            #expect(try cli.shell("mkdir other && echo keep > other/file").status == 0)
            let notStore = try cli.run(["export", "--format", "pass", "--out", cli.path("other"), "--gpg-id", "throwaway@example.invalid", "--overwrite"] + cli.unlock(),
                                       extra: environment)
            #expect(notStore.status == 2 && notStore.stderr.contains("not a pass store"), "\(notStore.stderr)")
            let unknown = try cli.run(["export", "--format", "pass", "--out", cli.path("new"), "--gpg-id", "nobody@example.invalid"] + cli.unlock(), extra: environment)
            #expect(unknown.status == 2 && unknown.stderr.contains("gpg could not encrypt the entry 'a'"), "\(unknown.stderr)")
            let noKey = try cli.run(["export", "--format", "pass", "--out", cli.path("new")] + cli.unlock(), extra: environment)
            #expect(noKey.status == 2 && noKey.stderr.contains("--gpg-id"), "\(noKey.stderr)")
            #expect(try cli.run(["export", "--format", "pass", "--out", cli.path("new"), "--gpg-id", "--batch"] + cli.unlock()).status == 64)
            #expect(try cli.run(["export", "--format", "pass"] + cli.unlock()).status == 64, "a store needs --out DIR")
            #expect(try cli.shell("ls -a").text.split(separator: "\n").filter { $0.contains("new") || $0.contains("vaultfile") }.isEmpty)
            #expect(try cli.read("other/file") == Array("keep\n".utf8))
        }

        // MARK: - The formats each verb names

        @Test func test_exportHelp_listsExactlyWhatExportWrites() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            let help = try cli.run(["export", "--help"]).text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(help.contains("json, dotenv, csv, kdbx, keepass-xml, bitwarden-json or pass"))
            #expect(!help.contains("keepassxc-csv") && !help.contains("1password"))
            let refused = try cli.run(["export", "--format", "bitwarden-csv"])
            #expect(refused.status == 64 && refused.stderr.contains("json, dotenv, csv, kdbx, keepass-xml, bitwarden-json or pass"), "\(refused.stderr)")
        }

        @Test func test_import_kdbxOptionsRefusedForAnotherFormatUnderAuto() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            try cli.write("in.json", Array(#"{"vaultfile_export": 1, "entries": [{"name": "b", "value": "2"}]}"#.utf8))
            try cli.write("kpw", Array("x".utf8))
            let result = try cli.run(["import", "--kdbx-password-file", cli.path("kpw"), cli.path("in.json")] + cli.unlock())
            #expect(result.status == 64 && result.stderr.contains("--kdbx-password-file goes with a KeePass database"), "\(result.stderr)")
            #expect(try cli.run(["get", "b"] + cli.unlock()).status == 1, "nothing was imported")
        }
    }
}
