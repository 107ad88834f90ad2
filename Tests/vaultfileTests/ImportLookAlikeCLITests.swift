import Foundation
import TestSupport
import Testing

/// att58 F1 through the built binary: a look-alike title (`db .gpg` in a pass store, a Bitwarden
/// row titled `db `) that cleaning turns into the name of an item titled exactly so never takes
/// that name, whatever value or username its author picked; its renaming line says which exact
/// title kept the name; `--skip-existing` and `--dry-run` agree. att60 F1: the same in a folder that
/// needs cleaning (a KeePass group `Email/Web` or `Work `, a 1Password vault `Dev/Ops`, an NFD pass
/// folder). And recheck58 N1 for KeePassXC CSV: a title of only format characters under `--prefix`
/// never names the prefix itself.
@Suite struct ImportLookAlikeCLITests {
    /// A pass store `folder` (its `.gpg-id`) holding `db.gpg` (`real`) and `db .gpg` (`lookAlike`), as the fake gpg reads them.
    private func store(_ cli: CLI, _ folder: String, real: String, lookAlike: String) throws {
        try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
        try cli.write("\(folder)/.gpg-id", bytes("K\n"))
        try cli.write("\(folder)/db.gpg", bytes(real + "\n"))
        try cli.write("\(folder)/db .gpg", bytes(lookAlike + "\n"))
    }

    private func get(_ cli: CLI, _ name: String) throws -> String {
        try cli.run(["get", name] + cli.unlock()).text
    }

    /// att58's scenario: a store holding `db.gpg` and a look-alike (trailing space, DEL, tab) whose
    /// value the attacker picked (8 of 8 values took `db` before): the real one keeps `db`.
    @Test func test_importPass_lookAlikeFileNeverTakesTheRealEntrysName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        let values = ["hunter2", "Tr0ub4dor&3", "correcthorse", "zzzz", "0000", "qwerty", "S3cret!", "xyz"]
        let lookAlikes = ["db ", "db\u{7F}", "db\t"]
        for (index, value) in values.enumerated() {
            let lookAlike = lookAlikes[index % lookAlikes.count]
            let store = "st\(index)"
            try FileManager.default.createDirectory(atPath: cli.path(store), withIntermediateDirectories: true)
            try cli.write("\(store)/.gpg-id", bytes("K\n"))
            try cli.write("\(store)/db.gpg", bytes("REAL-db-password\n"))
            try cli.write("\(store)/\(lookAlike).gpg", bytes(value + "\n"))
            let result = try cli.run(["import", "--format", "pass", "--prefix", "\(store)/", cli.path(store)] + cli.unlock(), extra: path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "\(store)/db") == "REAL-db-password", "\(value) with \(lookAlike.debugDescription)")
            #expect(try get(cli, "\(store)/db (2)") == value)
            let shown = lookAlike.replacingOccurrences(of: "\u{7F}", with: "\\x7F").replacingOccurrences(of: "\t", with: "\\x09")
            let line = "vaultfile: renamed '\(store)/\(shown)' to '\(store)/db (2)' (no username or URL; characters a name cannot hold were replaced; "
                + "the original title is kept in the field 'title'; another item's title is exactly 'db': it keeps that name)"
            #expect(result.stderr.split(separator: "\n").contains { $0 == line }, "\(result.stderr)")
            #expect(!result.stderr.contains("renamed '\(store)/db' to"), "the real entry is not renamed: \(result.stderr)")
        }
    }

    /// `--dry-run` says the same, and a second import with `--skip-existing` finds both accounts
    /// in the vault: nothing is imported and no name moves.
    @Test func test_importPass_dryRunAndSkipExistingAgreeWithTheOrder() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        try store(cli, "st", real: "REAL", lookAlike: "hunter2")
        let dry = try cli.run(["import", "--dry-run", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.text.split(separator: "\n").sorted() == ["add db", "add db (2)"], "\(dry.text)")
        #expect(dry.stderr.contains("vaultfile: would be renamed 'db ' to 'db (2)' (no username or URL; characters a name cannot hold were replaced; "
            + "the original title is kept in the field 'title'; another item's title is exactly 'db': it keeps that name)"), "\(dry.stderr)")
        #expect(try cli.run(["import", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path).status == 0)
        #expect(try get(cli, "db") == "REAL" && get(cli, "db (2)") == "hunter2")
        let again = try cli.run(["import", "--skip-existing", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("imported 0 entries") && again.stderr.contains("2 skipped"), "\(again.stderr)")
        #expect(try names(cli) == ["db", "db (2)"])
        #expect(try get(cli, "db") == "REAL" && get(cli, "db (2)") == "hunter2")
    }

    /// A vault an earlier release named the other way round (the look-alike holds `db`): a
    /// re-import with `--skip-existing` finds each account under its name and moves nothing.
    @Test func test_importPass_skipExistingOverAnEarlierOrderMovesNothing() throws {
        let cli = try CLI.withEntriesSet([("db", bytes("hunter2")), ("db (2)", bytes("REAL"))]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        try store(cli, "st", real: "REAL", lookAlike: "hunter2")
        let again = try cli.run(["import", "--skip-existing", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("imported 0 entries") && again.stderr.contains("2 skipped"), "\(again.stderr)")
        #expect(try get(cli, "db") == "hunter2" && get(cli, "db (2)") == "REAL")
    }

    /// Bitwarden CSV: rows `db` and `db ` (and `db<TAB>` with the username `alice`, which sorts
    /// before the real `bob`): the row titled exactly `db` keeps the name whatever the others hold.
    @Test func test_importBitwardenCSV_lookAlikeRowNeverTakesTheRealRowsName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let header = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        for (index, (title, user, value)) in [("db ", "", "EVILa"), ("db ", "", "EVILb"), ("db ", "", "EVILf"), ("db\t", "alice", "EVILPW"),
                                                ("db ", "bob", "EVIL-same-user")].enumerated() {
            for realFirst in [true, false] {
                let real = ",,login,db,,,0,,bob,REALPW,\n", other = ",,login,\"\(title)\",,,0,,\(user),\(value),\n"
                try cli.write("b.csv", bytes(header + (realFirst ? real + other : other + real)))
                let prefix = "c\(index)\(realFirst ? "a" : "b")/"
                let result = try cli.run(["import", "--format", "bitwarden-csv", "--prefix", prefix, cli.path("b.csv")] + cli.unlock())
                #expect(result.status == 0, "\(result.stderr)")
                #expect(try get(cli, prefix + "db") == "REALPW", "\(title.debugDescription) \(user) \(value)")
                #expect(try get(cli, prefix + "db (2)") == value)
                #expect(result.stderr.contains("to '\(prefix)db (2)' (\(user.isEmpty ? "no username or URL" : "user " + user); characters a name cannot hold"),
                        "\(result.stderr)")
                #expect(result.stderr.contains("another item's title is exactly 'db': it keeps that name)"), "\(result.stderr)")
            }
        }
    }

    // MARK: - Folders that need cleaning (att60 F1)

    /// A KeePass XML export whose groups (under the root) hold entries `(title, password)`.
    private static func keePassXML(_ groups: [(String, [(String, String)])]) -> String {
        func text(_ value: String) -> String {
            value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        }
        let body = groups.map { group, entries in
            "<Group><Name>\(text(group))</Name>" + entries.map { title, password in
                "<Entry><String><Key>Title</Key><Value>\(text(title))</Value></String><String><Key>Password</Key><Value>\(text(password))</Value></String></Entry>"
            }.joined() + "</Group>"
        }.joined()
        return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<KeePassFile><Root><Group><Name>Root</Name>\(body)</Group></Root></KeePassFile>\n"
    }

    /// att60's KeePass scenario: in the group `Email/Web` and in the group `Work `, the entry titled
    /// `db` keeps the name from the look-alike `db `, whatever the look-alike's password, and the
    /// line names the title, not the whole name.
    @Test func test_importKeePassXML_lookAlikeInAGroupThatNeedsCleaningNeverTakesTheName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        for (index, (group, folder)) in [("Email/Web", "Email-Web"), ("Work ", "Work"), ("Work", "Work")].enumerated() {
            for (second, value) in ["EVIL1", "hunter2", "zzzz", "0000"].enumerated() {
                let prefix = "g\(index)\(second)/"
                let entries = second % 2 == 0 ? [("db", "REAL"), ("db ", value)] : [("db ", value), ("db", "REAL")]
                try cli.write("k.xml", bytes(Self.keePassXML([(group, entries)])))
                let result = try cli.run(["import", "--format", "keepass-xml", "--prefix", prefix, cli.path("k.xml")] + cli.unlock())
                #expect(result.status == 0, "\(result.stderr)")
                #expect(try get(cli, "\(prefix)\(folder)/db") == "REAL", "\(group.debugDescription) \(value)")
                #expect(try get(cli, "\(prefix)\(folder)/db (2)") == value)
                #expect(result.stderr.contains("to '\(prefix)\(folder)/db (2)' (no username or URL; characters a name cannot hold were replaced; "
                    + "the original title is kept in the field 'title'; another item's title is exactly 'db': it keeps that name)"), "\(result.stderr)")
            }
        }
    }

    /// An NFD folder, as a pass store copied from macOS has: the file `db.gpg` in it keeps the name
    /// from `db .gpg`, whatever its value (before: the value decided).
    @Test func test_importPass_lookAlikeInAnNFDFolderNeverTakesTheName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        for (index, value) in ["EVIL1", "hunter2", "zzzz", "0000"].enumerated() {
            let root = "st\(index)"
            try store(cli, "\(root)/Cafe\u{301}", real: "REAL", lookAlike: value)
            try cli.write("\(root)/.gpg-id", bytes("K\n"))
            let result = try cli.run(["import", "--format", "pass", "--prefix", "\(root)/", cli.path(root)] + cli.unlock(), extra: path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "\(root)/Caf\u{E9}/db") == "REAL", "\(value)")
            #expect(try get(cli, "\(root)/Caf\u{E9}/db (2)") == value)
            #expect(result.stderr.contains("another item's title is exactly 'db': it keeps that name"), "\(result.stderr)")
        }
    }

    /// A 1Password vault named `Dev/Ops` (a shared vault: any member adds items) holding `db` and
    /// `db `, beside a vault `Personal` (with several vaults, each one's name is a folder): the
    /// item titled `db` keeps `Dev-Ops/db`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed: skipped"))
    func test_import1pux_lookAlikeInAVaultWhoseNameNeedsCleaningNeverTakesTheName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        func item(_ uuid: String, _ title: String, _ password: String) -> String {
            """
            {"uuid": "\(uuid)", "createdAt": 1600000000, "updatedAt": 1600000000, "state": "active", "categoryUuid": "001", \
            "overview": {"title": "\(title)"}, "details": {"loginFields": [], "password": "\(password)"}}
            """
        }
        for (index, value) in ["EVIL1", "hunter2", "zzzz", "0000"].enumerated() {
            let items = index % 2 == 0 ? [item("A1", "db", "REAL"), item("B1", "db ", value)] : [item("B1", "db ", value), item("A1", "db", "REAL")]
            try cli.write("export.data", bytes("""
                {"accounts": [{"attrs": {"accountName": "me"}, "vaults": [{"attrs": {"name": "Dev/Ops"}, "items": [\(items.joined(separator: ", "))]}, \
                {"attrs": {"name": "Personal"}, "items": [\(item("C1", "mail", "m"))]}]}]}
                """))
            let made = try cli.shell("python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], \"w\", zipfile.ZIP_DEFLATED); "
                                     + "z.write(sys.argv[2], \"export.data\"); z.close()' v\(index).1pux export.data")
            #expect(made.status == 0, "\(made.stderr)")
            let result = try cli.run(["import", "--prefix", "p\(index)/", cli.path("v\(index).1pux")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            let listed = try names(cli).filter { $0.hasPrefix("p\(index)/") }
            #expect(listed == ["p\(index)/Dev-Ops/db", "p\(index)/Dev-Ops/db (2)", "p\(index)/Personal/mail"], "\(listed)")
            #expect(try get(cli, "p\(index)/Dev-Ops/db") == "REAL", "\(value)")
            #expect(try get(cli, "p\(index)/Dev-Ops/db (2)") == value)
        }
    }

    /// recheck58 N1 with KeePassXC's CSV: a title of only format characters under `--prefix imp/`
    /// is named after its site under the prefix, and `--overwrite` leaves the entry `imp` alone.
    @Test func test_importKeePassXCCSV_titleOfOnlyFormatCharactersNeverTakesThePrefixsName() throws {
        let cli = try CLI.withEntriesSet([("imp", bytes("mine"))]); defer { cli.directory.remove() }
        try cli.write("k.csv", bytes("\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n"
            + "\"Root\",\"\u{200B}\",\"u\",\"ATTACKER\",\"https://zw.example/login\",\"\"\n"
            + "\"Root/imp\",\"\u{FEFF}\",\"\",\"NOSITE\",\"\",\"\"\n"))
        let result = try cli.run(["import", "--format", "keepassxc-csv", "--prefix", "imp/", "--overwrite", cli.path("k.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try get(cli, "imp") == "mine", "the entry named as the prefix is untouched")
        let all = try names(cli)
        #expect(all == ["imp", "imp/imp/untitled", "imp/zw.example-login"], "\(all)")
        #expect(try cli.run(["get", "imp/zw.example-login", "--field", "title"] + cli.unlock()).text == "\u{200B}", "the title is kept")
    }
}
