import Foundation
import TestSupport
import Testing

/// cold60's findings on what `import` (issue 44) recognises before it reads, through the built
/// binary: an ansible-vault file without a vault value refused before any password source is
/// touched (M1); ZIP archives said as such, never sent through iconv (M3, L7); the sops and
/// ansible-vault readers' refusals in the common form (L5); an empty input said as empty (L7).
@Suite struct ImportColdReview60CLITests {
    // MARK: - M1, L5: ansible-vault and sops refusals

    @Test func test_import_ansibleVaultOfAFileThatOnlyMentionsTheHeaderRunsNoPasswordCommand() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // The header in a comment, then in a plain (untagged) string: neither is a vault value.
        try cli.write("comment.yml", bytes("# vault password in $ANSIBLE_VAULT; see docs\nkey: plain\n"))
        try cli.write("plainstr.yml", bytes("db_pass: \"$ANSIBLE_VAULT;1.1;AES256 is the header\"\n"))
        for file in ["comment.yml", "plainstr.yml"] {
            let ran = cli.path("ran." + file)
            let result = try cli.run(["import", "--dry-run", "--format", "ansible-vault", "--source-password-command", "touch \(ran); echo avpw",
                                      cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: ran), "\(file): the password command ran")
            #expect(result.stderr.contains("vaultfile: error: cannot read \(cli.path(file)) as ansible-vault: it holds no ansible-vault value"),
                    "\(file): \(result.stderr)")
            #expect(result.stderr.contains("; nothing was imported\n") && result.stderr.contains("vaultfile: hint: "), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_ansibleVaultWithAMalformedVaultValueIsRefusedBeforeThePassword() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // A `!vault` tag whose block is no vault (its header's version unknown): the reader's parse
        // refuses it, in the common form, and the password command never runs.
        try cli.write("bad.yml", bytes("db_pass: !vault |\n  $ANSIBLE_VAULT;9.9;AES256\n  6162\n"))
        let ran = cli.path("ran")
        let result = try cli.run(["import", "--format", "ansible-vault", "--source-password-command", "touch \(ran); echo avpw",
                                  cli.path("bad.yml")] + cli.unlock())
        #expect(result.status == 2, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ran), "the password command ran")
        #expect(result.stderr.contains("cannot read \(cli.path("bad.yml")) as ansible-vault: line "), "\(result.stderr)")
        #expect(result.stderr.contains("('db_pass'): ansible-vault format 9.9 is not supported (1.1 and 1.2 are); nothing was imported"), "\(result.stderr)")
        #expect(result.stderr.contains("; nothing was imported\nvaultfile: hint: an ansible-vault file is"), "\(result.stderr)")
    }

    @Test func test_import_sopsRefusalsSayTheFileTheFormatAndThatNothingWasImported() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("random.bin", [0x8F, 0x00, 0xFF, 0x13, 0xC3, 0x28, 0x01])
        try cli.write("plain.yml", bytes("key: plain\nother: 2\n"))
        let cases = [("random.bin", "not UTF-8 text"), ("plain.yml", "it has no 'sops' metadata")]
        for (file, why) in cases {
            let result = try cli.run(["import", "--format", "sops", cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: error: cannot read \(cli.path(file)) as sops: \(why)"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("; nothing was imported\nvaultfile: hint: a sops file is"), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }
}

/// ZIP archives and empty input (cold60 M3, L7), and Dashlane's headerless form kept from taking
/// any text (M3).
@Suite struct ImportColdReview60ArchiveCLITests {
    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// A ZIP archive `name` of `files` (name, text), written by Python's zipfile.
    private func writeZIP(_ cli: CLI, _ name: String, _ files: [(String, String)]) throws {
        for (file, text) in files { try cli.write(file, bytes(text)) }
        let made = try cli.run(["-c", "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                                    + "for f in sys.argv[2:]: z.write(f)\nz.close()", name] + files.map(\.0),
                               executable: "/usr/bin/python3")
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test(.enabled(if: hasPython, "python3 is not installed: skipped"))
    func test_import_dashlaneExportZIPIsSaidAsAZIPWithTheCommandsThatImportItsCSVs() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try writeZIP(cli, "dashlane.zip", [("credentials.csv", "username,username2,username3,title,password,note,url,category,otpSecret\n"
                                                + "amy,,,Site,pw,,https://site.example,,\n"),
                                           ("securenotes.csv", "title,note\nWifi,the code\n")])
        let zip = cli.path("dashlane.zip")
        let auto = try cli.run(["import", "--dry-run", zip] + cli.unlock())
        #expect(auto.status == 64, "\(auto.stderr)")
        #expect(auto.stderr.contains("cannot tell the format of \(zip): it is a ZIP archive (Dashlane's export"), "\(auto.stderr)")
        #expect(auto.stderr.contains("hint: unzip it, then import each CSV: 'vaultfile import --format dashlane-csv credentials.csv'"), "\(auto.stderr)")
        let given = try cli.run(["import", "--dry-run", "--format", "dashlane-csv", zip] + cli.unlock())
        #expect(given.status == 2, "\(given.stderr)")
        #expect(given.stderr.contains("\(zip) is not dashlane-csv input: it looks like a ZIP archive (Dashlane's export"), "\(given.stderr)")
        #expect(given.stderr.contains("nothing was imported") && given.stderr.contains("unzip it"), "\(given.stderr)")
        for result in [auto, given] { #expect(!result.stderr.contains("iconv") && !result.stderr.contains("delete both"), "\(result.stderr)") }
        // What the hint says imports the credentials.
        let csv = try cli.run(["import", "--format", "dashlane-csv", cli.path("credentials.csv")] + cli.unlock())
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(try names(cli) == ["Site"])
    }

    @Test(.enabled(if: hasPython, "python3 is not installed: skipped"))
    func test_import_aZIPWithoutExportDataIsSaidAsSuchAndAnyTextFormatRefusesIt() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try writeZIP(cli, "other.zip", [("readme.txt", "hello\n")])
        let zip = cli.path("other.zip")
        let auto = try cli.run(["import", zip] + cli.unlock())
        #expect(auto.status == 64, "\(auto.stderr)")
        #expect(auto.stderr.contains("cannot tell the format of \(zip): it is a ZIP archive that holds no export.data (not a 1pux)"), "\(auto.stderr)")
        #expect(!auto.stderr.contains("matches none"), "\(auto.stderr)")
        for format in ["chrome-csv", "dashlane-csv", "dotenv", "bitwarden-json"] {
            let given = try cli.run(["import", "--format", format, zip] + cli.unlock())
            #expect(given.status == 2, "\(format): \(given.stderr)")
            #expect(given.stderr.contains("is not \(format) input: it looks like a ZIP archive"), "\(format): \(given.stderr)")
            #expect(!given.stderr.contains("iconv"), "\(format): \(given.stderr)")
        }
        // --format 1pux reads the archive itself, which names what it lacks.
        let onePUX = try cli.run(["import", "--format", "1pux", zip] + cli.unlock())
        #expect(onePUX.status == 2 && onePUX.stderr.contains("holds no export.data"), "\(onePUX.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test(.enabled(if: hasPython, "python3 is not installed: skipped"))
    func test_import_1puxItemOfAnUnknownStateIsImportedAndCounted() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        func item(_ uuid: String, _ title: String, _ state: String) -> String {
            """
            {"uuid": "\(uuid)", "createdAt": 1600000000, "updatedAt": 1600000000, "state": "\(state)", "categoryUuid": "001", \
            "overview": {"title": "\(title)"}, "details": {"loginFields": [], "password": "pw-\(uuid)"}}
            """
        }
        let items = [item("A1", "Kept", "active"), item("D1", "Gone", "deleted"), item("D2", "Gone too", "deleted"), item("T1", "Bin", "trashed")]
        try writeZIP(cli, "p.1pux", [("export.data", #"{"accounts": [{"attrs": {}, "vaults": [{"attrs": {"name": "V"}, "items": ["#
                                        + items.joined(separator: ", ") + "]}]}]}")])
        let result = try cli.run(["import", "--format", "1pux", cli.path("p.1pux")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("not kept: 1Password's unknown item state 'deleted', in 2 items (imported as active items"), "\(result.stderr)")
        #expect(try names(cli) == ["Gone", "Gone too", "Kept"])
    }

    @Test func test_import_keepassUnprotectedMarkWarningNamesTheFirstThreeEntries() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let entries = ["Alpha", "Beta", "Gamma", "Delta"].map { title in
            "<Entry><String><Key>Title</Key><Value>\(title)</Value></String><String><Key>Port</Key><Value>8443</Value></String></Entry>"
        }
        try cli.write("kp.xml", bytes("""
            <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Root</Name>
            \(entries.joined(separator: "\n"))
            <Entry><String><Key>Title</Key><Value>Safe</Value></String><String><Key>PIN</Key><Value ProtectInMemory="True">9</Value></String></Entry>
            </Group></Root></KeePassFile>
            """))
        let imported = try cli.run(["import", "--json", cli.path("kp.xml")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        let text = imported.stderr + imported.text
        #expect(text.contains("not kept: KeePass's unprotected mark of custom strings (the kdbx and keepass-xml exports protect every custom string), in 4 items ("),
                "\(text)")
        #expect(text.contains("Alpha'") && text.contains("Beta'") && text.contains("Gamma'") && text.contains(" and 1 more)"), "\(text)")
        #expect(!text.contains("Delta'") && !text.contains("Safe'"), "\(text)")
        #expect(imported.text.contains("not_kept"), "\(imported.text)")
    }

    @Test func test_import_nfcRenamingShowsTheOriginalsCombiningMarksEscaped() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // "Café" decomposed (e, U+0301): the line showed 'Café' to 'Café' before (cold60 L8).
        try cli.write("c.csv", bytes("name,url,username,password\nCafe\u{0301},https://c.example,u,p\n"))
        let dry = try cli.run(["import", "--dry-run", cli.path("c.csv")] + cli.unlock())
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stderr.contains("vaultfile: would be renamed 'Cafe\\u{0301}' to 'Caf\u{E9}' ("), "\(dry.stderr)")
        #expect(dry.stderr.contains("put in Unicode NFC"), "\(dry.stderr)")
        let real = try cli.run(["import", cli.path("c.csv")] + cli.unlock())
        #expect(real.stderr.contains("vaultfile: renamed 'Cafe\\u{0301}' to 'Caf\u{E9}'"), "\(real.stderr)")
        #expect(try names(cli) == ["Caf\u{E9}"])
    }

    @Test func test_import_binaryDataGetsNoIconvHint() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("random.bin", [0x8F, 0x00, 0xFF, 0x13, 0xC3, 0x28, 0x2C, 0x01, 0x0A])
        try cli.write("latin.csv", [0x6E, 0x61, 0x6D, 0x65, 0x2C, 0x75, 0x72, 0x6C, 0x2C, 0x75, 0x73, 0x65, 0x72, 0x6E, 0x61, 0x6D, 0x65, 0x2C,
                                    0x70, 0x61, 0x73, 0x73, 0x77, 0x6F, 0x72, 0x64, 0x0A] + bytes("Caf") + [0xE9] + bytes(",https://c.example,u,p\n"))
        let binary = try cli.run(["import", "--format", "chrome-csv", cli.path("random.bin")] + cli.unlock())
        #expect(binary.status == 2 && binary.stderr.contains("nothing was imported"), "\(binary.stderr)")
        #expect(!binary.stderr.contains("iconv") && binary.stderr.contains("it holds NUL bytes"), "\(binary.stderr)")
        // Latin-1 text still gets the conversion.
        let latin = try cli.run(["import", "--format", "chrome-csv", cli.path("latin.csv")] + cli.unlock())
        #expect(latin.status == 2 && latin.stderr.contains("iconv -f WINDOWS-1252 -t UTF-8"), "\(latin.stderr)")
    }

    @Test func test_import_emptyInputIsSaidToBeEmpty() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("empty.txt", [])
        let file = try cli.run(["import", cli.path("empty.txt")] + cli.unlock())
        #expect(file.status == 64, "\(file.stderr)")
        #expect(file.stderr.contains("cannot tell the format of \(cli.path("empty.txt")): it is empty; nothing was imported"), "\(file.stderr)")
        let stdin = try cli.run(["import"] + cli.unlock(), stdin: [])
        #expect(stdin.status == 64, "\(stdin.stderr)")
        #expect(stdin.stderr.contains("cannot tell the format of stdin: it is empty; nothing was imported"), "\(stdin.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_dashlaneHeaderlessFormRefusesTextOfShortRows() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("hello.txt", bytes("hello world\nthis is text\n"))
        let text = try cli.run(["import", "--format", "dashlane-csv", cli.path("hello.txt")] + cli.unlock())
        #expect(text.status == 2, "\(text.stderr)")
        #expect(text.stderr.contains("cannot read \(cli.path("hello.txt")) as dashlane-csv: line 1: 1 cell, and no row has 4 or more"), "\(text.stderr)")
        #expect(try names(cli).isEmpty)
        // A short row beside a full one is Dashlane's ragged form: imported (padded).
        try cli.write("ragged.csv", bytes("\"Short\",\"https://s.example\"\n\"Full\",\"https://f.example\",\"u\",\"pw\"\n"))
        let ragged = try cli.run(["import", "--format", "dashlane-csv", cli.path("ragged.csv")] + cli.unlock())
        #expect(ragged.status == 0, "\(ragged.stderr)")
        #expect(try names(cli) == ["Full", "Short"])
    }
}
