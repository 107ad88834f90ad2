import Foundation
import TestSupport
import Testing

/// A cold user's review of moving in and out (issues 44, 45; /work/reviews/cold4445.md M4–M7, L1–L10),
/// each finding replayed with the real producers where the review used them: ansible-vault,
/// pass with gpg under a throw-away GNUPGHOME, keepassxc-cli. Bitwarden's JSON (no client here) and
/// a KeePass 1 header are written by hand from their published formats.
extension ExternalTools {
    @Suite struct MovingInCLITests {
        static let hasAnsibleVault = CryptImportCLITests.hasAnsibleVault
        static let hasPass = CryptImportCLITests.hasPass
        static let keepassxc = KDBXImportCLITests.keepassxc
        static let inline = CryptImportCLITests.fixtures.appendingPathComponent("ansible-vault/inline.yml").path
        static let whole = CryptImportCLITests.fixtures.appendingPathComponent("ansible-vault/whole-1.1.yml").path

        private func get(_ cli: CLI, _ name: String) throws -> String {
            let result = try cli.run(["get", name] + cli.unlock())
            #expect(result.status == 0, "get \(name): \(result.stderr)")
            return result.text
        }

        // MARK: - ansible-vault (M4, M5, M6)

        /// M4: with no source password and no terminal, the message names the ansible-vault file and
        /// the --source-password-* options, not the vault's own --password-file (given already).
        @Test func test_importAnsibleVault_noSourcePasswordNamesTheFileAndTheSourceOptions() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let result = try cli.run(["import", "--format", "ansible-vault", Self.inline, "--prefix", "w"] + cli.unlock())
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("no password for the ansible-vault file \(Self.inline), and no terminal to ask on"), "\(result.stderr)")
            #expect(result.stderr.contains("--source-password-file FILE, --source-password-fd N or --source-password-command CMD"), "\(result.stderr)")
            #expect(!result.stderr.contains("--password-file FILE, --password-fd N"), "\(result.stderr)")
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        /// M5: values under two vault ids (ansible-vault encrypt_string, the default id and `prod`)
        /// import in one run with both passwords, whichever order and kind of source; one password
        /// alone imports nothing (exit 3) and the hint says to repeat the option.
        @Test(.enabled(if: hasAnsibleVault, "ansible-vault is absent: its vault-id test skipped"))
        func test_importAnsibleVault_valuesUnderTwoVaultIdsOpenWithTwoPasswords() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try CryptImportCLITests().sh(cli, """
                printf 'avpass\\n' > devpw && printf 'prodpw-secret\\n' > prodpw
                { echo 'app:'; echo '  name: plain'
                  ansible-vault encrypt_string --vault-password-file devpw 'dev-secret' --name dev_pass 2>/dev/null | sed 's/^/  /'; echo
                  ansible-vault encrypt_string --vault-id prod@prodpw 'prod-secret' --name prod_pass 2>/dev/null | sed 's/^/  /'; echo
                } > multi.yml
                grep -q 'AES256;prod' multi.yml
                """, [:])
            let file = cli.path("multi.yml")
            let both = try cli.run(["import", "--format", "ansible-vault", file, "--source-password-file", cli.path("prodpw"),
                                    "--source-password-file", cli.path("devpw")] + cli.unlock())
            #expect(both.status == 0, "\(both.stderr)")
            #expect(try get(cli, "multi/app/dev_pass") == "dev-secret")
            #expect(try get(cli, "multi/app/prod_pass") == "prod-secret")
            // A file and a command together are both tried too.
            let mixed = try cli.run(["import", "--format", "ansible-vault", file, "--overwrite", "--prefix", "m", "--source-password-file", cli.path("devpw"),
                                     "--source-password-command", "cat \(cli.path("prodpw"))"] + cli.unlock())
            #expect(mixed.status == 0, "\(mixed.stderr)")
            #expect(try get(cli, "m/multi/app/prod_pass") == "prod-secret")
            let one = try cli.run(["import", "--format", "ansible-vault", file, "--prefix", "one", "--source-password-file", cli.path("devpw")] + cli.unlock())
            #expect(one.status == 3, "\(one.stderr)")
            #expect(one.stderr.contains("does not open with the vault password (vault id 'prod')"), "\(one.stderr)")
            #expect(one.stderr.contains("give each id's password: each option may be repeated"), "\(one.stderr)")
            #expect(!one.stderr.contains("one import per password"), "\(one.stderr)")
            let wrong = try cli.run(["import", "--format", "ansible-vault", file, "--prefix", "two", "--source-password-command", "echo a",
                                     "--source-password-command", "echo b"] + cli.unlock())
            #expect(wrong.status == 3 && wrong.stderr.contains("does not open with any of the 2 vault passwords given"), "\(wrong.stderr)")
            #expect(try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").allSatisfy { !$0.hasPrefix("one/") && !$0.hasPrefix("two/") })
        }

        /// M6: an ansible-vault file cut short, a header with no body and broken hex are damage:
        /// exit 4 and "nothing was imported", as the man page says; "1 line", not "1 lines".
        @Test func test_importAnsibleVault_damagedFileExitsFourAndImportsNothing() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try "fixture-password\n".write(toFile: cli.path("vault-pass"), atomically: true, encoding: .utf8)
            let lines = try String(contentsOfFile: Self.whole, encoding: .utf8).split(separator: "\n")
            let oneLineBody = Array("abcd".utf8).map { String(format: "%02x", $0) }.joined()
            let cases: [(String, String, String)] = [
                ("trunc.yml", lines.prefix(3).joined(separator: "\n") + "\n", "is damaged or was modified: the "),
                ("header.yml", "$ANSIBLE_VAULT;1.1;AES256\n", "is followed by no vault body"),
                ("hex.yml", lines.enumerated().map { $0.offset == 2 ? "zz" + $0.element.dropFirst(2) : String($0.element) }.joined(separator: "\n") + "\n",
                 "the vault body is not hexadecimal"),
                ("one.yml", "$ANSIBLE_VAULT;1.1;AES256\n\(oneLineBody)\n", "the decoded body holds 1 line; an ansible vault holds three"),
            ]
            for (name, text, says) in cases {
                try cli.write(name, Array(text.utf8))
                let result = try cli.run(["import", "--format", "ansible-vault", cli.path(name), "--source-password-file", cli.path("vault-pass")] + cli.unlock())
                #expect(result.status == 4, "\(name): \(result.stderr)")
                #expect(result.stderr.contains(says) && result.stderr.contains("nothing was imported"), "\(name): \(result.stderr)")
                #expect(!result.stderr.contains("1 lines"), "\(name): \(result.stderr)")
            }
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        // MARK: - pass stores (L2, L3, L10)

        /// L2: the default store (PASSWORD_STORE_DIR) is named in the summary, not "stdin"; a
        /// default store that does not exist is refused with a hint naming the variable.
        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass import tests skipped"))
        func test_importPass_defaultStoreNamedAndMissingOneExplained() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let environment = try CryptImportCLITests().passStore(cli)
            defer { _ = try? cli.shell("gpgconf --kill gpg-agent", extra: environment) }
            let dry = try cli.run(["import", "--format", "pass", "--dry-run"] + cli.unlock(), extra: environment)
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stderr.contains("would import 3 entries from \(cli.path("store")) ("), "\(dry.stderr)")
            #expect(!dry.stderr.contains("from stdin"), "\(dry.stderr)")
            let json = try cli.run(["import", "--format", "pass", "--dry-run", "--json"] + cli.unlock(), extra: environment)
            #expect(json.text.contains("\"source\":\"\(cli.path("store"))\"") || json.text.contains("\"source\": \"\(cli.path("store"))\""), "\(json.text)")
            var moved = environment
            moved["PASSWORD_STORE_DIR"] = cli.path("nowhere")
            let missing = try cli.run(["import", "--format", "pass"] + cli.unlock(), extra: moved)
            #expect(missing.status == 2, "\(missing.stderr)")
            #expect(missing.stderr.contains("there is no pass store at \(cli.path("nowhere")) ($PASSWORD_STORE_DIR)"), "\(missing.stderr)")
            #expect(missing.stderr.contains("set PASSWORD_STORE_DIR to it"), "\(missing.stderr)")
            moved["PASSWORD_STORE_DIR"] = nil
            moved["HOME"] = cli.path("home")
            let unset = try cli.run(["import", "--format", "passage"] + cli.unlock(), extra: moved)
            #expect(unset.status == 2 && unset.stderr.contains("there is no passage store at \(cli.path("home"))/.passage/store (the default, $PASSAGE_DIR being unset)"),
                    "\(unset.stderr)")
        }

        /// L3: a folder that is no store (no .gpg-id, no .gpg file) imports nothing with success no
        /// more: refused (exit 2); passage's own folder (identities beside store/) points at store/.
        @Test func test_importPass_folderThatIsNoStoreIsRefused() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            #expect(try cli.shell("mkdir -p home/docs && echo hi > home/docs/readme.txt && mkdir -p pg/store/web && echo x > pg/identities && echo x > pg/store/web/a.age").status == 0)
            let pass = try cli.run(["import", "--format", "pass", cli.path("home")] + cli.unlock())
            #expect(pass.status == 2, "\(pass.stderr)")
            #expect(pass.stderr.contains("\(cli.path("home")) is not pass input: it looks like a folder with neither a .gpg-id file nor any .gpg file; nothing was imported"),
                    "\(pass.stderr)")
            let passage = try cli.run(["import", "--format", "passage", cli.path("pg")] + cli.unlock())
            #expect(passage.status == 2, "\(passage.stderr)")
            #expect(passage.stderr.contains("passage's own folder"), "\(passage.stderr)")
            #expect(passage.stderr.contains("vaultfile import --format passage \(cli.path("pg"))/store"), "\(passage.stderr)")
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        /// L10: when one file does not decrypt, the gpg processes vaultfile stops are not heard
        /// ("gpg: signal Terminated caught"); the failed one's own message is.
        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass import tests skipped"))
        func test_importPass_stoppedGpgProcessesAreSilent() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            var environment = try CryptImportCLITests().passStore(cli)
            defer { _ = try? cli.shell("gpgconf --kill gpg-agent", extra: environment) }
            // Many good files after one bad one (sorted first), so that gpg processes run when it fails.
            try CryptImportCLITests().sh(cli, "for n in $(seq 10 69); do cp store/empty.gpg store/z$n.gpg; done && printf 'not gpg data' > store/a-bad.gpg", environment)
            environment["VAULTFILE_IMPORT_JOBS"] = "16"
            for _ in 0..<3 {
                let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: environment)
                #expect(result.status == 3, "\(result.stderr)")
                #expect(result.stderr.contains("gpg could not decrypt \(cli.path("store"))/a-bad.gpg"), "\(result.stderr)")
                #expect(result.stderr.contains("gpg: no valid OpenPGP data found"), "the failed gpg is heard: \(result.stderr)")
                #expect(!result.stderr.contains("signal"), "\(result.stderr)")
            }
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        // MARK: - import --help (L1)

        /// L1: the overview names every format --format takes, grouped, and its wrapped lines are
        /// indented under their description (none starts at column 0).
        @Test func test_importHelp_overviewNamesEveryFormatWithIndentedLines() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let help = try cli.run(["import", "--help"]).text
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let start = try #require(lines.firstIndex(of: "vaultfile's own:"))
            let end = try #require(lines.firstIndex { $0.hasPrefix("Details and samples of each") })
            let overview = lines[(start + 1)..<end]
            for line in overview {
                #expect(line.hasSuffix(":") && !line.hasPrefix(" ") || line.hasPrefix("  "), "not indented: \(line)")
                #expect(line.count <= 80, "wrapped by the parser: \(line)")
            }
            let flat = help.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            let values = try #require(flat.range(of: "(values: ").flatMap { found in flat[found.upperBound...].range(of: "; default").map { flat[found.upperBound..<$0.lowerBound] } })
            let formats = values.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(formats.count >= 20, "\(formats)")
            for format in formats {
                #expect(overview.contains { $0.hasPrefix("  " + format + " ") }, "\(format) is not in the overview")
            }
        }

        // MARK: - Wrong formats (L9)

        /// L9: a KeePass 1 database is named as such with the way to convert it; a KDBX file given
        /// to --format pass gets the command that imports it, not only "not a folder".
        @Test func test_import_keePass1AndKDBXAsPassAreNamed() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try cli.write("old.kdb", [0x03, 0xD9, 0xA2, 0x9A, 0x65, 0xFB, 0x4B, 0xB5] + [UInt8](repeating: 0, count: 116))
            let auto = try cli.run(["import", cli.path("old.kdb")] + cli.unlock())
            #expect(auto.status == 64, "\(auto.stderr)")
            #expect(auto.stderr.contains("it looks like a KeePass 1 database (.kdb)"), "\(auto.stderr)")
            #expect(auto.stderr.contains("save it as KDBX"), "\(auto.stderr)")
            let asKDBX = try cli.run(["import", "--format", "kdbx", cli.path("old.kdb")] + cli.unlock())
            #expect(asKDBX.status == 2 && asKDBX.stderr.contains("KeePass 1 database") && asKDBX.stderr.contains("KeePassXC"), "\(asKDBX.stderr)")
            try cli.write("kx.kdbx", [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0x01, 0x00, 0x04, 0x00] + [UInt8](repeating: 0, count: 64))
            let pass = try cli.run(["import", "--format", "pass", cli.path("kx.kdbx")] + cli.unlock())
            #expect(pass.status == 2, "\(pass.stderr)")
            #expect(pass.stderr.contains("it looks like a KeePass database (KDBX)"), "\(pass.stderr)")
            #expect(pass.stderr.contains("import it with: vaultfile import --format kdbx \(cli.path("kx.kdbx"))"), "\(pass.stderr)")
        }

        // MARK: - Losses said (M7, L4, L6)

        /// M7: Bitwarden's linked custom fields, URI match rules and an organization's
        /// collections are each counted in a warning (before: dropped without a word).
        @Test func test_importBitwardenJSON_linkedFieldsMatchRulesAndOrganizationAreSaid() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let json = """
                {"encrypted": false, "folders": [], "items": [
                  {"id": "1", "organizationId": "org-1", "collectionIds": ["c-1"], "folderId": null, "type": 1, "reprompt": 0,
                   "name": "Shared", "notes": null, "favorite": false,
                   "fields": [{"name": "linkuser", "value": null, "type": 3, "linkedId": 100}, {"name": "PIN", "value": "1234", "type": 1, "linkedId": null}],
                   "login": {"uris": [{"match": 3, "uri": "https://a.example"}, {"match": null, "uri": "https://b.example"}],
                             "username": "alice", "password": "pw", "totp": null},
                   "revisionDate": "2024-01-02T03:04:05.000Z", "creationDate": "2024-01-02T03:04:05.000Z"},
                  {"id": "2", "organizationId": null, "folderId": null, "type": 1, "name": "Own",
                   "login": {"uris": [{"match": null, "uri": "https://c.example"}], "username": "bob", "password": "pw2", "totp": null},
                   "collectionIds": null, "fields": [{"name": "linkpass", "value": null, "type": 3, "linkedId": 101}]}
                ]}
                """
            try cli.write("bw.json", Array(json.utf8))
            let result = try cli.run(["import", "--format", "bitwarden-json", cli.path("bw.json")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("not kept: Bitwarden's linked custom fields (each shows another property of its item, which is imported), in 2 items"),
                    "\(result.stderr)")
            #expect(result.stderr.contains("not kept: Bitwarden's URI match rules, in 1 item"), "\(result.stderr)")
            #expect(result.stderr.contains("not kept: Bitwarden's organization and collections of shared items, in 1 item"), "\(result.stderr)")
            #expect(try get(cli, "Shared") == "pw")
            #expect(try cli.run(["get", "Shared", "--field", "PIN"] + cli.unlock()).text == "1234")
        }

        /// L4: keepassxc-cli's CSV export of a database with a deleted entry: the recycle bin's rows
        /// are left out and counted, as the KDBX and XML readers do.
        /// M7: an entry moved by keepassxc-cli (PreviousParentGroup) is named by its element.
        /// L6: the attachment KeePassXC's XML export leaves out names its entry, and says nothing untrue.
        @Test(.enabled(if: keepassxc != nil, "skipped: needs keepassxc-cli (apt-get install keepassxc)"))
        func test_importKeePassXCExports_recycleBinElementsAndMissingAttachmentsSaid() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let tool = Self.keepassxc!
            let made = try KDBXImportCLITests.makeDatabase(cli, tool)
            #expect(made.status == 0, "\(made.stderr)")
            let exported = try KDBXImportCLITests.keepass(cli, tool, """
                echo pw | $KP mkdir -q kp.kdbx Other
                echo pw | $KP mv -q kp.kdbx Web Other
                echo pw | $KP add -q kp.kdbx Gone
                echo pw | $KP rm -q kp.kdbx Gone
                echo pw | $KP export -q -f csv kp.kdbx > kp.csv
                echo pw | $KP export -q -f xml kp.kdbx > kp.xml
                """)
            #expect(exported.status == 0, "\(exported.stderr)")
            let csvText = String(decoding: try cli.read("kp.csv"), as: UTF8.self)
            #expect(csvText.contains("Recycle Bin"), "the deleted entry is in KeePassXC's CSV: \(csvText)")
            let csv = try cli.run(["import", "--format", "keepassxc-csv", cli.path("kp.csv"), "--prefix", "csv"] + cli.unlock())
            #expect(csv.status == 0, "\(csv.stderr)")
            #expect(csv.stderr.contains("not kept: entries in KeePass's recycle bin, in 1 item"), "\(csv.stderr)")
            let names = try cli.run(["list"] + cli.unlock()).text
            #expect(names.contains("csv/Email/Mail") && names.contains("csv/Other/Web") && !names.contains("Recycle Bin") && !names.contains("Gone"), "\(names)")
            let xml = try cli.run(["import", "--format", "keepass-xml", cli.path("kp.xml"), "--prefix", "xml"] + cli.unlock())
            #expect(xml.status == 0, "\(xml.stderr)")
            #expect(xml.stderr.contains("not kept: entries in KeePass's recycle bin, in 1 item"), "\(xml.stderr)")
            let xmlText = String(decoding: try cli.read("kp.xml"), as: UTF8.self)
            if xmlText.contains("<PreviousParentGroup>") {
                #expect(xml.stderr.contains("not kept: KeePass's entry element <PreviousParentGroup>, in 1 item"), "\(xml.stderr)")
            }
            #expect(!xml.stderr.contains("other KeePass entry elements"), "\(xml.stderr)")
            if !xmlText.contains("<Binaries>") {  // KeePassXC 2.7 leaves the attachments' data out of its XML
                #expect(xml.stderr.contains("not kept: KeePass attachments whose data the XML does not hold, in 1 item ('xml/Email/Mail'); "), "\(xml.stderr)")
            }
            let attachments = xml.stderr.split(separator: "\n").filter { $0.contains("attachments whose data") }
            #expect(attachments.count == 1 && !attachments[0].contains("has no place for it"), "\(xml.stderr)")
        }

        // MARK: - Export to a pass store (L8)

        /// L8: `export --format pass --overwrite` onto a store made by `pass git init` keeps the
        /// store's .git and .gitattributes (`*.gpg diff=gpg`): git sees only the entries change.
        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass export tests skipped"))
        func test_exportPass_overwriteKeepsGitAndGitattributes() throws {
            let cli = try PeerExportCLITests.filled(); defer { cli.directory.remove() }
            var environment = try PeerExportCLITests.gnupg(cli)
            defer { _ = try? cli.shell("gpgconf --kill gpg-agent", extra: environment) }
            environment.merge(["PASSWORD_STORE_DIR": cli.path("store"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"]) { $1 }
            let setUp = try cli.shell("timeout 30 pass init throwaway@example.invalid >/dev/null && timeout 30 pass git init >/dev/null && printf 'old\\n' | timeout 30 pass insert -e gone >/dev/null"
                                      + " && mkdir -p store/.extensions && echo '#' > store/.extensions/x.bash", extra: environment)
            #expect(setUp.status == 0, "\(setUp.stderr)")
            #expect(try cli.shell("cat store/.gitattributes").text == "*.gpg diff=gpg\n")
            let replaced = try cli.run(["export", "--format", "pass", "--out", cli.path("store"), "--overwrite"] + cli.unlock(), extra: environment)
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(try cli.shell("cat store/.gitattributes && cat store/.extensions/x.bash").text == "*.gpg diff=gpg\n#\n")
            let status = try cli.shell("cd store && git status --porcelain", extra: environment)
            #expect(!status.text.contains(".gitattributes") && status.text.contains(" D gone.gpg"), "\(status.text)")
            let shown = try cli.shell("timeout 30 pass show top", extra: environment)
            #expect(shown.status == 0 && shown.text == "v\n", "\(shown.text) \(shown.stderr)")
        }
    }
}
