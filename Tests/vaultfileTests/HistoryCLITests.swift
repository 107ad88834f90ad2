import Foundation
import Testing
import VaultModel

/// Entry history through the binary (issue 30): init's default, no silent upgrade of an older
/// vault, history/get --revision/restore, the trash, and exports with history.
@Suite struct HistoryCLITests {
    private func format(_ cli: CLI, _ name: String = "t.vault") throws -> String {
        let info = try cli.run(["info", "--vault", cli.path(name)]).text
        return info.split(separator: "\n").first { $0.hasPrefix("format:") }.map(String.init) ?? ""
    }

    private func set(_ cli: CLI, _ name: String, _ value: String, _ extra: [String] = [], vault: String = "t.vault") throws {
        let result = try cli.run(["set", name] + extra + cli.unlock(vault), stdin: Array(value.utf8))
        #expect(result.status == 0, "\(result.stderr)")
    }

    // MARK: - init

    @Test func test_init_newVaultsKeepHistoryAndKeepHistory0MakesA10Vault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["init"] + CLI.fastKDF + cli.unlock("new.vault")).status == 0)
        // Signed as well since issue 40 (format 1.3, which also has the history flag).
        #expect(try format(cli, "new.vault").hasSuffix("vaultfile 1.3"))
        #expect(try cli.run(["init", "--unsigned"] + CLI.fastKDF + cli.unlock("unsigned.vault")).status == 0)
        #expect(try format(cli, "unsigned.vault").hasSuffix("vaultfile 1.2"))
        #expect(try cli.run(["init", "--unsigned", "--keep-history", "0"] + CLI.fastKDF + cli.unlock("old.vault")).status == 0)
        #expect(try format(cli, "old.vault").hasSuffix("vaultfile 1.0"))
        try set(cli, "k", "v", vault: "old.vault")
        #expect(try format(cli, "old.vault").hasSuffix("vaultfile 1.0"))
    }

    // MARK: - No silent upgrade

    @Test func test_history_anOlderVaultKeepsItsFormatUntilAsked() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try set(cli, "db", "one")
        try set(cli, "db", "two")
        #expect(try format(cli).hasSuffix("vaultfile 1.0"), "ordinary writes keep the version")
        let refused = try cli.run(["history", "db"] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("keeps no history") && refused.stderr.contains("history --enable"))
        #expect(try cli.run(["get", "db", "--revision", "1"] + cli.unlock()).status == 2)

        let enabled = try cli.run(["history", "--enable"] + cli.unlock())
        #expect(enabled.status == 0 && enabled.stderr.contains("can no longer read"), "\(enabled.stderr)")
        #expect(try format(cli).hasSuffix("vaultfile 1.2"))
        try set(cli, "db", "three")
        try set(cli, "db", "admin", ["--field", "user"])
        let listed = try cli.run(["history", "db"] + cli.unlock())
        #expect(listed.status == 0)
        let lines = listed.text.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("1  replaced ") && lines[0].hasSuffix("changed: user (added)"))
        #expect(lines[1].hasSuffix("changed: value") && !listed.text.contains("two"), "values only with --show")
        #expect(try cli.run(["history", "db", "--show"] + cli.unlock()).text.contains("value: \"two\""))
        #expect(try cli.run(["get", "db", "--revision", "2"] + cli.unlock()).stdout == Array("two".utf8))
        let missing = try cli.run(["get", "db", "--revision", "3"] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("no revision 3"))

        #expect(try cli.run(["history", "--keep-history", "0"] + cli.unlock()).status == 0)
        #expect(try format(cli).hasSuffix("vaultfile 1.0"), "--keep-history 0 goes back")
        #expect(try cli.run(["get", "db"] + cli.unlock()).stdout == Array("three".utf8))
    }

    @Test func test_history_jsonListsTimesSizesAndChangesNeverValues() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--keep-history", "5", "--history-bytes", "1K"] + cli.unlock()).status == 0)
        try set(cli, "k", "secret-one")
        try set(cli, "k", "secret-two")
        let json = try cli.run(["history", "k", "--json"] + cli.unlock())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let revisions = try #require(object["revisions"] as? [[String: Any]])
        #expect(object["name"] as? String == "k" && revisions.count == 1)
        #expect(revisions[0]["revision"] as? Int == 1 && revisions[0]["size"] as? Int == 10 && revisions[0]["changed"] as? [String] == ["value"])
        #expect((revisions[0]["replaced"] as? String)?.hasSuffix("Z") == true)
        #expect(!json.text.contains("secret-one"))
        let settings = try cli.run(["history", "--json"] + cli.unlock()).text
        #expect(settings.contains("\"versions\":5") && settings.contains("\"bytesPerEntry\":1024"))
    }

    // MARK: - Readers that keep only the entries

    /// get, list, ls, search, inject, exec and totp read a vault whose history fills chunks after
    /// the entries without keeping those chunks; --revision, history and verify read them all.
    @Test func test_readers_ofAVaultWithALargeHistoryReadTheEntriesAndVerifyReadsAll() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["init", "--history-bytes", "8M"] + CLI.fastKDF + cli.unlock()).status == 0)
        // About 2.4 MiB of history: more than 32 chunks after the entries, authenticated on two threads.
        let big = (0..<400_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        for round in 0..<8 {
            try cli.write("big", big + Array("\(round)".utf8))
            #expect(try cli.run(["set", "app/big", "--value-file", cli.path("big")] + cli.unlock()).status == 0)
        }
        try set(cli, "app/db", "s3cret")
        try set(cli, "app/otp", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", ["--totp"])
        #expect(try cli.read("t.vault").count > 48 * 65_536, "the history spans more than 32 chunks after the entries'")
        #expect(try cli.run(["get", "app/db"] + cli.unlock()).text == "s3cret")
        #expect(try cli.run(["get", "app/big", "--revision", "5"] + cli.unlock()).stdout == big + Array("2".utf8))
        #expect(try cli.run(["get", "app/big"] + cli.unlock()).stdout == big + Array("7".utf8))
        #expect(try cli.run(["list"] + cli.unlock()).text == "app/big\napp/db\napp/otp\n")
        #expect(try cli.run(["ls", "app"] + cli.unlock()).status == 0)
        #expect(try cli.run(["search", "--values", "s3cr"] + cli.unlock()).text == "app/db\n")
        #expect(try cli.run(["inject"] + cli.unlock(), stdin: Array("x={{ vf://app/db }}".utf8)).text == "x=s3cret")
        let exec = try cli.run(["exec", "--only", "app/db"] + cli.unlock() + ["--", "sh", "-c", "printf %s \"$APP_DB\""])
        #expect(exec.text == "s3cret", "\(exec.stderr)")
        #expect(try cli.run(["totp", "app/otp", "--at", "59"] + cli.unlock()).status == 0)
        #expect(try cli.run(["history", "app/big"] + cli.unlock()).status == 0)
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
        // A damaged history chunk, early or late: every reader still refuses the file (all of it is authenticated).
        let intact = try cli.read("t.vault")
        for offset in [6 * 65_536, intact.count / 2, intact.count - 70_000] {
            var bytes = intact
            bytes[offset] ^= 1
            try cli.write("t.vault", bytes)
            for arguments in [["get", "app/db"], ["list"], ["search", "db"]] {
                #expect(try cli.run(arguments + cli.unlock()).status == 4, "\(arguments), byte \(offset)")
            }
        }
    }

    // MARK: - restore, prune

    @Test func test_restore_bringsBackARevisionAndCanBeUndone() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        try set(cli, "k", "a")
        try set(cli, "k", "b")
        #expect(try cli.run(["restore", "k", "--revision", "1"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "k"] + cli.unlock()).stdout == Array("a".utf8))
        #expect(try cli.run(["get", "k", "--revision", "1"] + cli.unlock()).stdout == Array("b".utf8))
        let pruned = try cli.run(["history", "--prune"] + cli.unlock())
        #expect(pruned.status == 0 && pruned.stderr.contains("dropped 2 earlier versions"))
        #expect(try cli.run(["history", "k"] + cli.unlock()).text.isEmpty)
    }

    // MARK: - The trash

    @Test func test_trash_rmKeepsTheEntryUntilRestoredOrEmptied() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        try set(cli, "gone", "v1")
        try set(cli, "gone", "v2")
        #expect(try cli.run(["rm", "gone"] + cli.unlock()).status == 0)
        #expect(try cli.run(["trash", "list"] + cli.unlock()).text.hasPrefix("gone  removed "))
        #expect(try cli.run(["trash", "restore", "gone"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "gone"] + cli.unlock()).stdout == Array("v2".utf8))
        #expect(try cli.run(["rm", "gone"] + cli.unlock()).status == 0)
        let emptied = try cli.run(["trash", "empty"] + cli.unlock())
        #expect(emptied.status == 0 && emptied.stderr.contains("dropped 1 removed entry"))
        #expect(try cli.run(["trash", "list"] + cli.unlock()).text.isEmpty)
        #expect(try cli.run(["trash", "restore", "gone"] + cli.unlock()).status == 1)
    }

    /// Issue 39, item 8, as filed: `rm db; set db fresh; trash empty` left the removed entry's
    /// values, and `history db --show` printed them. `rm` ends a line; the new db starts its own.
    @Test func test_trashEmpty_afterANameIsUsedAgainLeavesNoOldValue() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        try set(cli, "db", "old-one")
        try set(cli, "db", "old-two")
        #expect(try cli.run(["rm", "db"] + cli.unlock()).status == 0)
        try set(cli, "db", "fresh")
        #expect(try cli.run(["trash", "empty"] + cli.unlock()).status == 0)
        let shown = try cli.run(["history", "db", "--show"] + cli.unlock())
        #expect(shown.status == 0 && !shown.text.contains("old-"), "\(shown.text)")
        #expect(try cli.run(["get", "db", "--revision", "1"] + cli.unlock()).status == 1)
        let exported = try cli.run(["export", "--format", "json", "--with-history"] + cli.unlock())
        #expect(!exported.text.contains("old-"), "no old value anywhere in the vault")
        // trash restore of a name in use is refused as before; once the new db is removed, it
        // brings back that entry and its own line only.
        try set(cli, "db", "fresh-two")
        #expect(try cli.run(["trash", "restore", "db"] + cli.unlock()).status == 2)
        #expect(try cli.run(["rm", "db"] + cli.unlock()).status == 0)
        #expect(try cli.run(["trash", "restore", "db"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "db"] + cli.unlock()).stdout == Array("fresh-two".utf8))
        #expect(try cli.run(["history", "db", "--show"] + cli.unlock()).text.contains("\"fresh\""))
        // history --prune drops every version of every removed entry too.
        #expect(try cli.run(["rm", "db"] + cli.unlock()).status == 0)
        try set(cli, "db", "third")
        #expect(try cli.run(["history", "--prune"] + cli.unlock()).status == 0)
        #expect(!(try cli.run(["export", "--format", "json", "--with-history"] + cli.unlock())).text.contains("fresh"))
    }

    // MARK: - export --with-history

    @Test func test_export_historyOnlyWhenAskedAndImportNeedsHistoryOn() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        try set(cli, "k", "old-secret")
        try set(cli, "k", "new-secret")
        let plain = try cli.run(["export", "--format", "json"] + cli.unlock())
        #expect(plain.text.contains("\"vaultfile_export\" : 1") && !plain.text.contains("old-secret"), "no history by default")
        let full = try cli.run(["export", "--format", "json", "--with-history"] + cli.unlock())
        #expect(full.text.contains("\"vaultfile_export\" : 2") && full.text.contains("old-secret"))
        #expect(try cli.run(["export", "--format", "csv", "--with-history"] + cli.unlock()).status == 64)
        try cli.write("full.json", full.stdout)

        try cli.initVault("plain.vault")
        let refused = try cli.run(["import", cli.path("full.json"), "--format", "json"] + cli.unlock("plain.vault"))
        #expect(refused.status == 2 && refused.stderr.contains("history --enable"), "\(refused.stderr)")
        #expect(try cli.run(["list"] + cli.unlock("plain.vault")).text.isEmpty, "nothing imported")

        try cli.initVault("kept.vault")
        #expect(try cli.run(["history", "--enable"] + cli.unlock("kept.vault")).status == 0)
        #expect(try cli.run(["import", cli.path("full.json"), "--format", "json"] + cli.unlock("kept.vault")).status == 0)
        #expect(try cli.run(["get", "k", "--revision", "1"] + cli.unlock("kept.vault")).stdout == Array("old-secret".utf8))
    }

    // MARK: - Merges keep what one side dropped dropped

    /// Issue 39, item 8 (re-test): after `rm db; set db fresh; trash empty` on main, a `git merge`
    /// of a branch that only set another entry brought db's removed line (old1) back as the new
    /// entry's history; `vaultfile merge --base` did the same.
    @Test func test_gitMerge_keepsARemovedLineThatOneSideEmptiedOutOfTheNewEntry() throws {
        var cli = try CLI.gitRepository()
        try cli.write("pw", Array("pw".utf8))
        try cli.write(".gitignore", Array("/state/\n/pw\n".utf8))
        cli.environment["VAULTFILE_PASSWORD_FILE"] = cli.path("pw")
        try cli.initVault("t.vault")
        #expect(try cli.run(["git", "setup"]).status == 0)
        func run(_ arguments: [String], _ value: String = "") throws {
            let result = try cli.run(arguments + ["--vault", cli.path("t.vault")], stdin: Array(value.utf8))
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        try run(["history", "--enable"])
        try run(["set", "db"], "OLD1")
        try run(["set", "db"], "OLD2")
        try git(cli, "add -A && git commit -qm base && git checkout -qb f")
        try run(["set", "other"], "x")
        try git(cli, "commit -qam f && git checkout -q main")
        try run(["rm", "db"])
        try run(["set", "db"], "fresh")
        try run(["trash", "empty"])
        try git(cli, "commit -qam main")
        try git(cli, "show f:t.vault > f.vault && git show HEAD~1:t.vault > base.vault && cp t.vault main.vault")
        try git(cli, "merge -q --no-edit f")
        let history = try cli.run(["history", "db", "--show", "--vault", cli.path("t.vault")])
        #expect(history.status == 0 && !history.text.contains("OLD"), "\(history.text) \(history.stderr)")
        #expect(try cli.run(["get", "other", "--vault", cli.path("t.vault")]).text == "x")
        // The same through vaultfile merge --base, outside git.
        let merged = try cli.run(["merge", cli.path("main.vault"), cli.path("f.vault"), "--base", cli.path("base.vault")],
                                 extra: ["VAULTFILE_ROLLBACK_CHECK": "off"])
        #expect(merged.status == 0, "\(merged.stderr)")
        let outside = try cli.run(["history", "db", "--show", "--vault", cli.path("main.vault")], extra: ["VAULTFILE_ROLLBACK_CHECK": "off"])
        #expect(outside.status == 0 && !outside.text.contains("OLD"), "\(outside.text) \(outside.stderr)")
    }

    /// A new entry under a removed one's name drops the removed one's versions from the trash:
    /// a one-line note on stderr says so (before, silently); stdout stays as scripts know it.
    @Test func test_set_onARemovedNameNotesTheDroppedVersionsOnStderr() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        for value in ["1", "2"] { #expect(try cli.run(["set", "db"] + cli.unlock(), stdin: Array(value.utf8)).status == 0) }
        #expect(try cli.run(["set", "src"] + cli.unlock(), stdin: Array("s".utf8)).status == 0)
        #expect(try cli.run(["rm", "db"] + cli.unlock()).status == 0)
        let set = try cli.run(["set", "db"] + cli.unlock(), stdin: Array("fresh".utf8))
        #expect(set.status == 0 && set.text.isEmpty, "\(set.stderr)")
        #expect(set.stderr == "vaultfile: note: the removed 'db' in the trash and its 2 versions were dropped: a new entry took its name\n")
        #expect(try cli.run(["rm", "db"] + cli.unlock()).status == 0)
        let copied = try cli.run(["cp", "src", "db"] + cli.unlock())
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stderr.contains("the removed 'db' in the trash and its 1 version were dropped"), "\(copied.stderr)")
        // A name that was never removed, and a second set, say nothing.
        let plain = try cli.run(["set", "db"] + cli.unlock(), stdin: Array("again".utf8))
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
    }
}
