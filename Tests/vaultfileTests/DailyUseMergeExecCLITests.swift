import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultModel

/// Issue 26 through the binary: git merges part by part, git diff without a password, exec's
/// binary entries, exit statuses, prefixes and fields, and names in two Unicode forms.
@Suite struct DailyUseMergeExecCLITests {
    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    private func vaultWith(_ entries: [(String, [UInt8])]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: value)
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: - git: a repository

    /// A repository holding `team.vault` (made with `kdf`) with entry `db` (value v0, field user u0),
    /// set up for vaultfile.
    private func repository(kdf: KDFParameters = CLI.testKDF) throws -> CLI {
        var cli = try CLI()
        cli.environment = [
            "PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
            "VAULTFILE_PASSWORD_FILE": cli.path("pw"),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
        ]
        try git(cli, "init -q -b main")
        try cli.initVault("team.vault", kdf: kdf)
        try set(cli, "db", "v0")
        try set(cli, "db", "u0", field: "user")
        #expect(try cli.run(["git", "setup"]).status == 0)
        try git(cli, "add -A && git commit -qm base")
        return cli
    }

    @discardableResult
    private func git(_ cli: CLI, _ command: String) throws -> CLI.Result {
        let result = try cli.shell("git " + command)
        #expect(result.status == 0, "git \(command): \(result.stderr)")
        return result
    }

    private func set(_ cli: CLI, _ name: String, _ value: String, field: String? = nil) throws {
        let result = try cli.run(["set", name, "--vault", cli.path("team.vault")] + (field.map { ["--field", $0] } ?? []), stdin: bytes(value))
        #expect(result.status == 0, "\(result.stderr)")
    }

    private func get(_ cli: CLI, _ name: String, field: String? = nil) throws -> String {
        try cli.run(["get", name, "--vault", cli.path("team.vault")] + (field.map { ["--field", $0] } ?? [])).text
    }

    // MARK: - git merge: part by part

    @Test func test_gitMerge_valueOnOursAndFieldOnTheirsBothSurvive() throws {
        let cli = try repository(); defer { cli.directory.remove() }
        try git(cli, "checkout -qb feature")
        try set(cli, "db", "u1", field: "user")
        try git(cli, "commit -qam user")
        try git(cli, "checkout -q main")
        try set(cli, "db", "v1")
        try git(cli, "commit -qam value")
        try git(cli, "merge -q --no-edit feature")
        #expect(try get(cli, "db") == "v1" && get(cli, "db", field: "user") == "u1")
        #expect(try cli.run(["get", "db.conflict-theirs", "--vault", cli.path("team.vault")]).status == 1)
    }

    @Test func test_gitMerge_aConflictOnTheValueKeepsTheirFieldAfterResolveOurs() throws {
        let cli = try repository(); defer { cli.directory.remove() }
        try git(cli, "checkout -qb feature")
        try set(cli, "db", "theirs")
        try set(cli, "db", "u1", field: "user")
        try git(cli, "commit -qam feature")
        try git(cli, "checkout -q main")
        try set(cli, "db", "ours")
        try git(cli, "commit -qam main")
        let merge = try cli.shell("git merge --no-edit feature")
        #expect(merge.status != 0, "git reports the conflict")
        #expect((merge.stderr + merge.text).contains("(the value)"), "\(merge.stderr)")
        #expect(try get(cli, "db") == "ours" && get(cli, "db", field: "user") == "u1")
        #expect(try get(cli, "db.conflict-theirs") == "theirs" && get(cli, "db.conflict-theirs", field: "user") == "u1")
        #expect(try cli.run(["resolve", "db", "--ours", "--vault", cli.path("team.vault")]).status == 0)
        #expect(try get(cli, "db", field: "user") == "u1", "resolve --ours keeps their one-sided field change")
    }

    // MARK: - git diff without a password

    @Test func test_gitDiff_withoutAPasswordSourceShowsTheHeaderAndExitsZero() throws {
        // A real-size KDF, as the header view shows it: "Argon2id 8 MiB".
        var cli = try repository(kdf: CLI.eightMiBKDF); defer { cli.directory.remove() }
        try set(cli, "db", "v1")
        cli.environment["VAULTFILE_PASSWORD_FILE"] = nil
        // setsid: no controlling terminal, as under a GUI or a pager without one.
        let diff = try cli.shell("setsid git diff </dev/null")
        #expect(diff.status == 0, "\(diff.stderr)")
        let lines = diff.text.split(separator: "\n")
        #expect(lines.contains("-generation  3") && lines.contains("+generation  4"), "\(diff.text)")
        #expect(diff.text.contains("keyslot 0  password, Argon2id 8 MiB, t=1, p=1"))
        #expect(diff.text.contains("vaultfile unlock") && diff.text.contains("VAULTFILE_PASSWORD_COMMAND"))
        #expect(!diff.text.contains("v1") && !diff.stderr.contains("unable to read"))
    }

    @Test func test_textconv_aWrongPasswordStillFails() throws {
        let cli = try repository(); defer { cli.directory.remove() }
        try cli.write("wrong", bytes("wrong"))
        let wrong = try cli.shell("setsid \"$VF\" git textconv team.vault </dev/null", extra: ["VAULTFILE_PASSWORD_FILE": cli.path("wrong")])
        #expect(wrong.status == 3 && wrong.text.isEmpty, "\(wrong.stderr)")
        let missing = try cli.shell("setsid \"$VF\" git textconv team.vault --password-file nowhere </dev/null")
        #expect(missing.status == 2 && missing.text.isEmpty)
    }

    // MARK: - exec

    @Test func test_exec_skipsABinaryEntryWithAWarning() throws {
        let cli = try vaultWith([("app/key", [0x00, 0xFF, 0x01]), ("app/token", bytes("t"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "sh", "-c", "printf '%s|%s' \"$APP_TOKEN\" \"${APP_KEY-unset}\""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "t|unset")
        #expect(result.stderr.contains("warning: left out 1 binary value") && result.stderr.contains("'app/key'"), "\(result.stderr)")
    }

    @Test func test_exec_onlyNamingABinaryEntryFailsWithStatus2() throws {
        let cli = try vaultWith([("app/key", [0x00, 0xFF]), ("app/token", bytes("t"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--only", "app/key"] + cli.unlock() + ["--", "sh", "-c", "touch ran"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'app/key' holds binary data"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")))
    }

    @Test func test_exec_aMissingCommandExits127AndANonExecutableOne126() throws {
        let cli = try vaultWith([("a", bytes("x"))]); defer { cli.directory.remove() }
        let missing = try cli.run(["exec"] + cli.unlock() + ["--", "no-such-command-here"])
        #expect(missing.status == 127 && missing.stderr.contains("'no-such-command-here': command not found"), "\(missing.stderr)")
        #expect(try cli.run(["exec"] + cli.unlock() + ["--", "./nowhere/x"]).status == 127)
        try cli.write("plain.sh", bytes("#!/bin/sh\n"), mode: 0o644)
        let plain = try cli.run(["exec"] + cli.unlock() + ["--", "./plain.sh"])
        #expect(plain.status == 126 && plain.stderr.contains("not an executable file"), "\(plain.stderr)")
        #expect(try cli.run(["exec"] + cli.unlock() + ["--", "/tmp"]).status == 126)
    }

    @Test func test_exec_anEnvironmentTooLargeToStartExits126AndSaysHowToExportFewer() throws {
        // One variable over Linux's 128 KiB limit for a single string makes posix_spawn fail with E2BIG.
        let cli = try vaultWith([("app/big", [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)), ("app/small", bytes("s"))])
        defer { cli.directory.remove() }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "true"])
        #expect(result.status == 126, "\(result.stderr)")
        #expect(result.stderr.contains("cannot run 'true': its environment and arguments are larger than the system allows"), "\(result.stderr)")
        #expect(result.stderr.contains("2 variables were exported: choose fewer with --prefix or --only"), "\(result.stderr)")
        // Another failure to start gets no such hint.
        let small = try cli.run(["exec", "--only", "app/small"] + cli.unlock() + ["--", "/tmp"])
        #expect(small.status == 126 && !small.stderr.contains("choose fewer"), "\(small.stderr)")
    }

    @Test func test_exec_aPrefixWithoutSlashIsAWholeSegment() throws {
        let cli = try vaultWith([("prod/db/main", bytes("m")), ("production/x", bytes("p"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--prefix", "prod"] + cli.unlock() + ["--", "sh", "-c", "printf '%s|%s|%s' \"${DB_MAIN-unset}\" \"${_DB_MAIN-unset}\" \"${UCTION_X-unset}\""])
        #expect(result.text == "m|unset|unset", "\(result.stderr)")
    }

    @Test func test_exec_fieldsOnlyWithTheFlagAsNameField() throws {
        var cli = try vaultWith([("app/db", bytes("pw"))]); defer { cli.directory.remove() }
        cli.environment = [:]
        #expect(try cli.run(["set", "app/db", "--field", "user"] + cli.unlock(), stdin: bytes("admin")).status == 0)
        let script = ["--", "sh", "-c", "printf '%s|%s' \"$APP_DB\" \"${APP_DB_USER-unset}\""]
        #expect(try cli.run(["exec"] + cli.unlock() + script).text == "pw|unset", "fields are never exported by default")
        #expect(try cli.run(["exec", "--fields"] + cli.unlock() + script).text == "pw|admin")
        #expect(try cli.run(["set", "app/db/user"] + cli.unlock(), stdin: bytes("x")).status == 0)
        let clash = try cli.run(["exec", "--fields"] + cli.unlock() + ["--", "true"])
        #expect(clash.status == 2 && clash.stderr.contains("'app/db#user'") && clash.stderr.contains("'app/db/user'"), "\(clash.stderr)")
    }

    // MARK: - names in two Unicode forms

    @Test func test_names_aDecomposedNameFindsTheComposedEntry() throws {
        let cli = try vaultWith([(composed, bytes("secret"))]); defer { cli.directory.remove() }
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
        let cli = try vaultWith([(decomposed + "/a", bytes("x"))]); defer { cli.directory.remove() }
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes(composed + "/a\n"))
        #expect(try cli.run(["mv", composed + "/a", "b/" + decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("b/" + composed + "\n"))
        // cp: the source found in either form, the copy named in NFC; a folder likewise.
        #expect(try cli.run(["cp", "b/" + decomposed, "c/" + decomposed] + cli.unlock()).status == 0)
        #expect(try cli.run(["cp", decomposed + "/", "d/"] + cli.unlock()).status != 0, "no folder café/ any more")
        #expect(try cli.run(["cp", "c/", decomposed + "/"] + cli.unlock()).status == 0)
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("b/\(composed)\nc/\(composed)\n\(composed)/\(composed)\n"))
    }

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

    @Test func test_import_refusesTwinsInOneFileNamingBoth() throws {
        let cli = try vaultWith([]); defer { cli.directory.remove() }
        let both = "{\"vaultfile_export\":1,\"entries\":[{\"name\":\"\(composed)\",\"value\":\"1\"},{\"name\":\"\(decomposed)\",\"value\":\"2\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: bytes(both))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("$'caf\\u00e9'") && result.stderr.contains("$'cafe\\u0301'"), "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty, "nothing was imported")
    }
}
