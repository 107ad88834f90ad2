import Foundation
import TestSupport
import Testing
@testable import vaultfile

/// The low findings of cold58, att58 and recheck58 on `import` (issue 44), through the built
/// binary: a headerless Dashlane CSV pointed to `--format dashlane-csv`; every `--format` refused
/// on content recognised as another format, before its reader (or a password prompt) runs; a
/// Bitwarden item type that is no integer named; items held back for another account counted;
/// invisible characters shown escaped in rename lines; a pass file's second `login:` keeping its
/// key as its label; `get --field` of a label two fields share naming both.
@Suite struct ImportLowFindingsCLITests {
    private static let importFixtures = ProjectPaths.fixtures.appendingPathComponent("import")
    private static func fixture(_ name: String) -> String { importFixtures.appendingPathComponent(name).path }

    // MARK: - A headerless Dashlane CSV (cold58 L3)

    @Test func test_import_headerlessDashlaneCSVIsPointedToDashlaneCSVNotGuessed() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Dashlane's older credentials export: title, url, login, password, note; ragged rows.
        try cli.write("dl2.csv", bytes("\"Wifi\",\"https://w.example\",\"me\",\"pw\",\"note\"\n\"Bank\",\"https://b.example\",\"u\"\n"))
        let path = cli.path("dl2.csv")
        let auto = try cli.run(["import", path] + cli.unlock())
        #expect(auto.status == 64 && auto.stderr.contains("cannot tell the format of \(path)"), "auto does not guess: \(auto.stderr)")
        #expect(auto.stderr.contains("its first line is no header line any tool writes: a row of values?"), "\(auto.stderr)")
        #expect(auto.stderr.contains("vaultfile: hint: if it is Dashlane's older credentials export")
                && auto.stderr.contains("import it with: vaultfile import --format dashlane-csv \(path)"), "\(auto.stderr)")
        let chrome = try cli.run(["import", "--format", "chrome-csv", path] + cli.unlock())
        #expect(chrome.status != 0 && chrome.stderr.contains("vaultfile: hint: if it is Dashlane's older credentials export")
                && chrome.stderr.contains("import it with: vaultfile import --format dashlane-csv \(path)"), "\(chrome.stderr)")
        #expect(try names(cli).isEmpty)
        // The command the hint names imports it.
        let right = try cli.run(["import", "--format", "dashlane-csv", path] + cli.unlock())
        #expect(right.status == 0, "\(right.stderr)")
        #expect(try names(cli) == ["Bank", "Wifi"])
    }

    @Test func test_import_aCSVWithAHeaderOrTextWithoutCommasIsNotHintedAsDashlane() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // A header no tool writes, made of column names, and plain text: the generic hint.
        try cli.write("other.csv", bytes("Title,URL,\"Password\"\nA,https://a.example,x\n"))
        try cli.write("plain.txt", bytes("just some words\n"))
        for file in ["other.csv", "plain.txt"] {
            let result = try cli.run(["import", cli.path(file)] + cli.unlock())
            #expect(result.status == 64 && result.stderr.contains("matches none of the formats import reads"), "\(file): \(result.stderr)")
            #expect(!result.stderr.contains("dashlane"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("name it with --format"), "\(file): \(result.stderr)")
        }
    }

    // MARK: - Every --format on content recognised as another (att58 F5)

    /// One file of each kind the sniffer recognises: its path, the format that imports it, what it looks like.
    private func samples(_ cli: CLI) throws -> [(path: String, right: String, looks: String)] {
        try cli.write("a.env", bytes("A=1\nexport B=two\n# c\n"))
        try cli.write("export.json", bytes("{\"vaultfile_export\": 1, \"entries\": []}\n"))
        return [
            (cli.path("a.env"), "dotenv", "a dotenv file (KEY=value lines)"),
            (cli.path("export.json"), "json", "a vaultfile JSON export"),
            (ProjectPaths.fixtures.appendingPathComponent("interchange/sample.csv").path, "csv", "a vaultfile CSV file"),
            (Self.fixture("chrome.csv"), "chrome-csv", "a Chrome (or Chromium, Edge) CSV export"),
            (ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json").path, "bitwarden-json", "a Bitwarden JSON export"),
            (Self.fixture("keepass2.xml"), "keepass-xml", "a KeePass 2 XML export"),
            (ProjectPaths.fixtures.appendingPathComponent("kdbx/kdbx4-aeskdf-chacha20.kdbx").path, "kdbx", "a KeePass database (KDBX)"),
            (Self.fixture("ansible-vault/whole-1.1.yml"), "ansible-vault", "an Ansible Vault file"),
            (Self.fixture("sops/secrets.yaml"), "sops", "a sops-encrypted file"),
            (Self.fixture("1password.1pux"), "1pux", "a 1Password export (1PUX)"),
        ]
    }

    @Test func test_import_everyOtherFormatRefusesRecognisedContentBeforeItsReader() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let formats = ImportFormatChoice.allValueStrings.filter { $0 != "auto" }
        #expect(formats.contains("sops") && formats.contains("ansible-vault") && formats.contains("pass") && formats.count >= 18)
        for sample in try samples(cli) {
            for given in formats where given != sample.right {
                // No terminal and no password given: a reader that asked for one would fail otherwise.
                let result = try cli.run(["import", "--format", given, sample.path] + cli.unlock())
                let pair = "\(sample.right) as \(given)"
                #expect(result.status == 2, "\(pair): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("\(sample.path) is not \(given) input: it looks like \(sample.looks); nothing was imported"),
                        "\(pair): \(result.stderr)")
                #expect(result.stderr.contains("hint: import it with: vaultfile import --format \(sample.right) \(sample.path)"), "\(pair): \(result.stderr)")
                #expect(!result.stderr.contains("no password for") && !result.stderr.contains("no terminal"), "\(pair): no password is asked: \(result.stderr)")
            }
        }
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_sopsAndAnsibleVaultOfADotenvFileAreRefusedAsDotenv() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("a.env", bytes("A=1\n"))
        // Before: a YAML error for sops; a password asked for (no terminal: "no password") for ansible-vault.
        for given in ["sops", "ansible-vault"] {
            let result = try cli.run(["import", "--format", given, cli.path("a.env")] + cli.unlock())
            #expect(result.status == 2, "\(given): \(result.stderr)")
            #expect(result.stderr.contains("is not \(given) input: it looks like a dotenv file"), "\(given): \(result.stderr)")
            #expect(result.stderr.contains("import it with: vaultfile import --format dotenv \(cli.path("a.env"))"), "\(given): \(result.stderr)")
            #expect(!result.stderr.contains("no password") && !result.stderr.contains("a value without a key"), "\(given): \(result.stderr)")
        }
    }

    @Test func test_import_ansibleVaultOfAFileWithoutAVaultValueAsksNoPassword() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Plain YAML no format claims: before, a password was asked for (no terminal: "no password for").
        try cli.write("plain.yaml", bytes("a: 1\nb: two\n"))
        let result = try cli.run(["import", "--format", "ansible-vault", cli.path("plain.yaml")] + cli.unlock())
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("cannot read \(cli.path("plain.yaml")) as ansible-vault: it holds no ansible-vault value"), "\(result.stderr)")
        #expect(!result.stderr.contains("no password for"), "\(result.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_encryptedValuesInKeyValueLinesAreRefusedUnderEveryFormat() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // sops's own dotenv form, KEY=ENC[…] lines (cold60 H1): before, auto and dotenv imported
        // the ciphertext and sops's metadata as entries, and sops failed on a YAML parse error.
        try cli.write("s.env", bytes("DB=ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi=,type:str]\n"
                                     + "sops_age__list_0__map_recipient=age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n"
                                     + "sops_mac=ENC[AES256_GCM,data:AAAA,iv:def=,tag:ghi=,type:str]\nsops_version=3.8.1\n"))
        let path = cli.path("s.env")
        for format in [[], ["--format", "dotenv"], ["--format", "sops"], ["--format", "csv"], ["--dry-run"]] {
            let result = try cli.run(["import"] + format + [path] + cli.unlock())
            #expect(result.status == 2, "\(format): \(result.stderr)")
            #expect(result.stderr.contains("\(path) is a sops-encrypted dotenv file") && result.stderr.contains("nothing was imported"),
                    "\(format): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: hint: decrypt it with sops and import the plain lines: sops -d \(path) | vaultfile import --format dotenv"),
                    "\(format): \(result.stderr)")
            #expect(!result.stderr.contains("ENC[AES256_GCM,data:abc"), "no value is said")
            #expect(result.stdout.isEmpty, "\(format): \(result.stdout)")
        }
        // From standard input too; and an Ansible Vault value in KEY=value lines.
        let piped = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes("A=x\nsops_mac=ENC[AES256_GCM,data:AAAA]\nsops_version=3.8.1\n"))
        #expect(piped.status == 2 && piped.stderr.contains("stdin is a sops-encrypted dotenv file"), "\(piped.stderr)")
        #expect(piped.stderr.contains("sops -d FILE | vaultfile import --format dotenv"), "\(piped.stderr)")
        try cli.write("a.env", bytes("A=plain\nB=\"$ANSIBLE_VAULT;1.1;AES256\"\n"))
        for format in [[], ["--format", "dotenv"], ["--format", "ansible-vault"]] {
            let result = try cli.run(["import"] + format + [cli.path("a.env")] + cli.unlock())
            #expect(result.status == 2 && result.stderr.contains("holds Ansible Vault ciphertext in KEY=value lines"), "\(format): \(result.stderr)")
            #expect(!result.stderr.contains("password"), "no password is asked: \(result.stderr)")
        }
        // Past the sniffer's first 200 lines, the dotenv reader refuses it.
        try cli.write("long.env", bytes((0..<250).map { "K\($0)=v\n" }.joined() + "DB=ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi=,type:str]\n"))
        let long = try cli.run(["import", cli.path("long.env")] + cli.unlock())
        #expect(long.status == 2 && long.stderr.contains("line 251: this is a sops-encrypted dotenv file"), "\(long.stderr)")
        // The same words and hint as the sniffer's refusal (recheck62 N7).
        #expect(long.stderr.contains("import does not read sops's dotenv form, and imports no ciphertext as a secret; nothing was imported"), "\(long.stderr)")
        #expect(long.stderr.contains("vaultfile: hint: decrypt it with sops and import the plain lines: sops -d \(cli.path("long.env")) | vaultfile import"),
                "\(long.stderr)")
        #expect(try names(cli).isEmpty)
        // A plain dotenv with keys called as sops's metadata is no sops file: imported.
        try cli.write("plain.env", bytes("A=1\nsops_version=3.8.1\nsops_mac=x\n"))
        let plain = try cli.run(["import", cli.path("plain.env")] + cli.unlock())
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try names(cli) == ["A", "sops_mac", "sops_version"])
    }

    @Test func test_import_sopsFromAPipeIsNamedStdin() throws {
        // Every import message names a pipe "stdin" (recheck62 N7: --format sops said "standard input").
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "sops"] + cli.unlock(), stdin: bytes("hello: there\n"))
        #expect(result.status == 2 && result.stderr.contains("cannot read stdin as sops:"), "\(result.stderr)")
        #expect(!result.stderr.contains("standard input"), "\(result.stderr)")
    }

    @Test func test_import_kdbxOfAFileWithoutItsSignatureIsRefusedBeforeAnyPassword() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Text the sniffer does not recognise: before, a password was asked (or read), then exit 4, "damaged".
        try cli.write("t.txt", bytes("hello there\nsome words\n"))
        try cli.write("wp", bytes("wrong\n"))
        for extra in [[], ["--kdbx-password-file", cli.path("wp")]] {
            let result = try cli.run(["import", "--format", "kdbx", cli.path("t.txt")] + extra + cli.unlock())
            #expect(result.status == 2, "\(extra): \(result.stderr)")
            #expect(result.stderr.contains("\(cli.path("t.txt")) is not kdbx input: it does not start with KeePass 2's signature"), "\(result.stderr)")
            #expect(!result.stderr.contains("damaged") && !result.stderr.contains("no password for"), "\(result.stderr)")
        }
        // A database cut short still has it: damage, status 4, as before.
        let whole = Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("kdbx/kdbx4-aeskdf-chacha20.kdbx")))
        try cli.write("cut.kdbx", Array(whole.prefix(40)))
        let cut = try cli.run(["import", "--format", "kdbx", cli.path("cut.kdbx"), "--kdbx-password-file", cli.path("wp")] + cli.unlock())
        #expect(cut.status == 4 && cut.stderr.contains("damaged"), "\(cut.stderr)")
    }

    // MARK: - A Bitwarden item type that is no integer (att58 F9)

    @Test func test_import_bitwardenItemTypeThatIsNoIntegerIsNamedWithItsPlace() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        for (file, type) in [("big.json", "1e308"), ("fraction.json", "1.5"), ("huge.json", "123456789012345678901234567890")] {
            try cli.write(file, bytes("{\"encrypted\": false, \"folders\": [], \"items\": [{\"type\": 1, \"name\": \"ok\", \"login\": {\"password\": \"p\"}},\n"
                                      + " {\"type\": \(type), \"name\": \"odd\", \"login\": {\"password\": \"q\"}}]}\n"))
            let result = try cli.run(["import", "--format", "bitwarden-json", cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(!result.stderr.contains("not valid JSON"), "it is valid JSON: \(result.stderr)")
            #expect(result.stderr.contains("items[1].type: expected an item type (a small integer: 1 login,"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("found a number that is none (line 2); nothing was imported"), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }

    // MARK: - --skip-existing: items held back counted; accounts matched loosely (recheck58 N3)

    @Test func test_import_skipExistingCountsItemsHeldBackForAnotherAccount() throws {
        // Since cold60 M2 d a new account is not held back but numbered after the vault's entries:
        // counted as new, listed as renamed, `not_imported` 0; the vault's entries never replaced.
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("t1.csv", bytes("name,url,username,password\nTwitter,https://t.example,tw_b,pb\nTwitter,https://t.example,tw_c,pc\n"))
        try cli.write("t2.csv", bytes("name,url,username,password\nTwitter,https://t.example,tw_a,pa\nTwitter,https://t.example,tw_b,pb\n"
                                      + "Twitter,https://t.example,tw_c,pc\n"))
        #expect(try cli.run(["import", cli.path("t1.csv")] + cli.unlock()).status == 0)
        let dry = try cli.run(["import", "--skip-existing", "--dry-run", "--json", cli.path("t2.csv")] + cli.unlock())
        #expect(dry.status == 0, "\(dry.stderr)")
        let planned = try jsonObject(dry.stdout)
        #expect(planned["skipped"] as? Int == 2 && planned["not_imported"] as? Int == 0 && planned["added"] as? Int == 1, "\(dry.text)")
        #expect(planned["not_imported_names"] as? [String] == [], "\(dry.text)")
        #expect(dry.stderr.contains("(1 new, 0 replaced, 2 skipped); nothing was changed"), "\(dry.stderr)")
        let lines = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("t2.csv")] + cli.unlock())
        #expect(lines.text.contains("add Twitter (3)\n"), "\(lines.text)")
        let result = try cli.run(["import", "--skip-existing", "--json", cli.path("t2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("imported 1 entry from \(cli.path("t2.csv")) (1 new, 0 replaced, 2 skipped)"), "\(result.stderr)")
        let summary = try jsonObject(result.stdout)
        #expect(summary["not_imported"] as? Int == 0 && summary["skipped"] as? Int == 2, "\(result.text)")
        #expect(try cli.run(["get", "Twitter", "--field", "username"] + cli.unlock()).text == "tw_b", "never overwritten")
        #expect(try cli.run(["get", "Twitter (3)", "--field", "username"] + cli.unlock()).text == "tw_a")
        // Nothing held back: the count is 0 in JSON, and absent from the line.
        let none = try cli.run(["import", "--skip-existing", "--json", cli.path("t1.csv")] + cli.unlock())
        #expect(try jsonObject(none.stdout)["not_imported"] as? Int == 0, "\(none.text)")
        #expect(!none.stderr.contains("not imported"), "\(none.stderr)")
    }

    @Test func test_import_skipExistingMatchesAnAccountByFoldedUsernameAndHost() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("v.csv", bytes("name,url,username,password\nFoo,https://f.example,amy,p1\n"))
        #expect(try cli.run(["import", cli.path("v.csv")] + cli.unlock()).status == 0)
        // The same account written otherwise: the username's case, `www.`, a path, a port-less scheme change.
        for (file, url, user) in [("case.csv", "https://f.example", "AMY"), ("www.csv", "https://www.f.example/login", "amy"),
                                  ("scheme.csv", "http://F.example/?next=/", "Amy")] {
            try cli.write(file, bytes("name,url,username,password\nFoo,\(url),\(user),p1\n"))
            let result = try cli.run(["import", "--skip-existing", cli.path(file)] + cli.unlock())
            // The file's username or URL is written otherwise: the same account, the difference said (cold60 M2 a).
            #expect(result.status == 0 && result.stderr.contains("(0 new, 0 replaced, 1 skipped (1 with changes))"), "\(file): \(result.stderr)")
            #expect(!result.stderr.contains("another account"), "\(file): \(result.stderr)")
        }
        // Another host or another user of the one item of its title, the vault's one entry of that
        // name: that entry edited (cold60 M2 c), skipped by name with what differs said, never overwritten.
        for (file, url, user) in [("host.csv", "https://g.example", "amy"), ("sub.csv", "https://login.f.example", "amy"),
                                  ("user.csv", "https://f.example", "amy2")] {
            try cli.write(file, bytes("name,url,username,password\nFoo,\(url),\(user),other\n"))
            let result = try cli.run(["import", "--skip-existing", cli.path(file)] + cli.unlock())
            #expect(result.status == 0 && result.stderr.contains("(0 new, 0 replaced, 1 skipped (1 with changes))"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("skipped 'Foo': the file's password and field '\(user == "amy" ? "url" : "username")' differ"), "\(file): \(result.stderr)")
        }
        // Two items of that title: by account, and the new one numbered after the vault's entry.
        try cli.write("two.csv", bytes("name,url,username,password\nFoo,https://f.example,AMY,p1\nFoo,https://g.example,bo,p2\n"))
        let two = try cli.run(["import", "--skip-existing", cli.path("two.csv")] + cli.unlock())
        #expect(two.status == 0 && two.stderr.contains("(1 new, 0 replaced, 1 skipped (1 with changes))"), "\(two.stderr)")
        #expect(try cli.run(["get", "Foo (2)"] + cli.unlock()).text == "p2")
        #expect(try cli.run(["get", "Foo"] + cli.unlock()).text == "p1")
        #expect(try names(cli) == ["Foo", "Foo (2)"])
    }

    // MARK: - Invisible characters escaped in rename lines (recheck58 N4)

    @Test func test_import_renameLinesShowInvisibleCharactersEscaped() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let titles = ["Git\u{200B}Hub", "\u{FEFF}Bank", "Mail\u{200F}", "Word\u{2060}Joiner", "soft\u{AD}hyphen"]
        try cli.write("c.csv", bytes("name,url,username,password\n" + titles.enumerated().map { "\($1),https://s\($0).example,u,p\n" }.joined()))
        let result = try cli.run(["import", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        for (shown, stored) in [("Git\\u{200B}Hub", "GitHub"), ("\\u{FEFF}Bank", "Bank"), ("Mail\\u{200F}", "Mail"),
                                ("Word\\u{2060}Joiner", "WordJoiner"), ("soft\\u{00AD}hyphen", "softhyphen")] {
            #expect(result.stderr.contains("vaultfile: renamed '\(shown)' to '\(stored)'"), "\(shown): \(result.stderr)")
        }
        for scalar in ["\u{200B}", "\u{FEFF}", "\u{200F}", "\u{2060}", "\u{AD}"] {
            #expect(!result.stderr.unicodeScalars.contains(scalar.unicodeScalars.first!), "U+\(String(scalar.unicodeScalars.first!.value, radix: 16)) raw")
        }
        #expect(try names(cli) == ["Bank", "GitHub", "Mail", "WordJoiner", "softhyphen"])
    }

    // MARK: - pass: a second login line keeps its key as its label (recheck58 N5)

    @Test func test_importPass_aSecondLoginLineIsAUsernameLabelledAsWritten() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
        try cli.write("bin/gpg", bytes("#!/bin/sh\ncat\n"), mode: 0o700)  // "decrypts" by copying
        try cli.write("store/.gpg-id", bytes("K\n"))
        try cli.write("store/e.gpg", bytes("pw1\nusername: u1\nlogin: u2\nUser: u3\n"))
        let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        // Numbered by label, never by the file's order (cold62 L3): `User` sorts before `login`, byte by byte.
        #expect(result.stderr.contains("field 'User' stored as 'username_2'"), "\(result.stderr)")
        #expect(result.stderr.contains("field 'login' stored as 'username_3'"), "\(result.stderr)")
        func get(_ field: String) throws -> String { try cli.run(["get", "e", "--field", field] + cli.unlock()).text }
        #expect(try get("username") == "u1" && get("username_2") == "u3" && get("username_3") == "u2")
        #expect(try get("labels") == "username_2\tUser\nusername_3\tlogin\n")
        #expect(try get("login") == "u2", "the label finds its field")
    }

    // MARK: - get --field of a label two fields share (cold58 L7)

    @Test func test_get_aLabelTwoFieldsShareNamesThemAndHowToGetEach() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes("""
            {"encrypted": false, "folders": [], "items": [{"type": 1, "name": "Coll", "login": {"password": "p"}, "fields": [\
            {"name": "API Key", "value": "one", "type": 0}, {"name": "API_Key", "value": "two", "type": 0}, \
            {"name": "API Key", "value": "three", "type": 0}, {"name": "Пин", "value": "1234", "type": 1}]}]}
            """))
        #expect(try cli.run(["import", cli.path("bw.json")] + cli.unlock()).status == 0)
        let shared = try cli.run(["get", "Coll", "--field", "API Key"] + cli.unlock())
        #expect(shared.status == 1 && shared.stdout.isEmpty, "\(shared.stderr)")
        #expect(shared.stderr.contains("the entry 'Coll' has no field 'API Key', and the label 'API Key' an import kept names 2 of its fields: API_Key_2, API_Key_3"),
                "\(shared.stderr)")
        #expect(shared.stderr.contains("vaultfile: hint: ask for each by the name it is stored under (--field API_Key_2, --field API_Key_3)"), "\(shared.stderr)")
        // share --field says the same.
        try cli.write("phrase", bytes("a long enough passphrase for the test\n"))
        let share = try cli.run(["share", "Coll", "--field", "API Key", "--passphrase-file", cli.path("phrase"), "--out", cli.path("c.age")] + cli.unlock())
        #expect(share.status == 1 && share.stderr.contains("names 2 of its fields: API_Key_2, API_Key_3"), "\(share.stderr)")
        // Each by its name; a label that names one field finds it; a field that does not exist keeps its message.
        func get(_ field: String) throws -> String { try cli.run(["get", "Coll", "--field", field] + cli.unlock()).text }
        #expect(try get("API_Key") == "two" && get("API_Key_2") == "one" && get("API_Key_3") == "three" && get("Пин") == "1234")
        let missing = try cli.run(["get", "Coll", "--field", "nope"] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("the entry 'Coll' has no field 'nope'; its fields:"), "\(missing.stderr)")
    }
}
