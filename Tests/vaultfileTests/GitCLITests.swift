import Foundation
import TestSupport
import Testing

extension ExternalTools {
    /// Real git in temporary repositories: setup, diffs that hide values, merges with and without conflicts.
    @Suite struct GitCLITests {
        /// A repository holding `team.vault` with entries a, b, c, set up for vaultfile, on branch main.
        private func repository() throws -> CLI {
            var cli = try CLI.gitRepository()
            try cli.write("pw", Array("pw".utf8))
            // git runs vaultfile as a child: it finds the binary by path and the password through the environment.
            cli.environment["VAULTFILE_PASSWORD_FILE"] = cli.path("pw")
            try cli.initVault("team.vault")
            try cli.setEntries(["a": "alpha-0", "b": "bravo-0", "c": "charlie-0"], in: "team.vault")
            let setup = try cli.run(["git", "setup"])
            precondition(setup.status == 0, setup.stderr)
            try git(cli, "add -A && git commit -qm base")
            return cli
        }

        private func set(_ cli: CLI, _ name: String, _ value: String) throws {
            #expect(try cli.run(["set", name, "--vault", cli.path("team.vault")], stdin: Array(value.utf8)).status == 0)
        }

        private func get(_ cli: CLI, _ name: String) throws -> CLI.Result {
            try cli.run(["get", name, "--vault", cli.path("team.vault")])
        }

        // MARK: - setup

        @Test func test_setup_isIdempotent() throws {
            let cli = try repository(); defer { cli.directory.remove() }
            #expect(try cli.run(["git", "setup"]).status == 0)
            let attributes = String(decoding: try cli.read(".gitattributes"), as: UTF8.self)
            #expect(attributes == "*.vault diff=vaultfile merge=vaultfile\n")
            #expect(String(decoding: try cli.read(".gitignore"), as: UTF8.self) == "*.vault.lock\n")
            #expect(try git(cli, "config merge.vaultfile.driver").text == "vaultfile git merge %O %A %B\n")
            #expect(try git(cli, "status --porcelain").text.isEmpty, "the lock file is ignored")
        }

        @Test func test_gitSetup_twiceSaysAlreadyConfigured() throws {
            var cli = try CLI(); defer { cli.directory.remove() }
            cli.environment = ["GIT_CONFIG_NOSYSTEM": "1"]
            #expect(try cli.shell("git init -q").status == 0)
            let first = try cli.run(["git", "setup"])
            #expect(first.status == 0 && first.stderr.contains("configured ") && !first.stderr.contains("already"), "\(first.stderr)")
            let attributes = try cli.read(".gitattributes")
            let second = try cli.run(["git", "setup"])
            #expect(second.status == 0 && second.stderr.contains("already configured") && second.stderr.contains("nothing changed"), "\(second.stderr)")
            #expect(!second.stderr.contains("VAULTFILE_PASSWORD_COMMAND"))
            #expect(try cli.read(".gitattributes") == attributes)
            let other = try cli.run(["git", "setup", "--pattern", "*.vf"])
            #expect(other.status == 0 && !other.stderr.contains("already"), "a new pattern changes something: \(other.stderr)")
        }

        // MARK: - diff

        @Test func test_diff_showsNamesAndHidesValues() throws {
            let cli = try repository(); defer { cli.directory.remove() }
            try set(cli, "b", "new-secret-value")
            try set(cli, "d", "another-secret")
            let diff = try git(cli, "diff").text
            #expect(diff.contains("+d  (modified"), "\(diff)")
            #expect(diff.contains("-    value  fingerprint:") && diff.contains("+    value  fingerprint:"))
            #expect(!diff.contains("new-secret-value") && !diff.contains("another-secret") && !diff.contains("bravo-0"))
            let textconv = try cli.run(["git", "textconv", cli.path("team.vault"), "--show-secrets"])
            #expect(textconv.text.contains("\"new-secret-value\""))
        }

        // MARK: - merge

        @Test func test_merge_differentEntriesMergeCleanly() throws {
            let cli = try repository(); defer { cli.directory.remove() }
            try git(cli, "checkout -qb feature")
            try set(cli, "a", "a-feature")
            try set(cli, "new-on-feature", "f")
            try git(cli, "commit -qam feature")
            try git(cli, "checkout -q main")
            try set(cli, "b", "b-main")
            #expect(try cli.run(["rm", "c", "--vault", cli.path("team.vault")]).status == 0)
            try git(cli, "commit -qam main")
            try git(cli, "merge -q --no-edit feature")
            #expect(try get(cli, "a").text == "a-feature")
            #expect(try get(cli, "b").text == "b-main")
            #expect(try get(cli, "new-on-feature").text == "f")
            #expect(try get(cli, "c").status == 1, "the deletion merged")
            #expect(try cli.run(["verify", "--vault", cli.path("team.vault")]).status == 0)
        }

        @Test func test_merge_sameEntryBothSidesIsAConflictWithBothValues() throws {
            let cli = try repository(); defer { cli.directory.remove() }
            try git(cli, "checkout -qb feature")
            try set(cli, "a", "a-feature")
            try git(cli, "commit -qam feature")
            try git(cli, "checkout -q main")
            try set(cli, "a", "a-main")
            try git(cli, "commit -qam main")
            let merge = try cli.shell("git merge --no-edit feature")
            #expect(merge.status != 0, "git reports the conflict")
            #expect(merge.stderr.contains("conflict in 'a'") || merge.text.contains("conflict in 'a'"), "\(merge.stderr)\(merge.text)")
            let bytes = try cli.read("team.vault")
            #expect(!String(decoding: bytes, as: UTF8.self).contains("<<<<<<<"), "no conflict markers in a vault")
            #expect(try cli.run(["verify", "--vault", cli.path("team.vault")]).status == 0)
            #expect(try get(cli, "a").text == "a-main")
            #expect(try get(cli, "a.conflict-theirs").text == "a-feature")
            #expect(try cli.run(["resolve", "a", "--theirs", "--vault", cli.path("team.vault")]).status == 0)
            #expect(try get(cli, "a").text == "a-feature")
            #expect(try get(cli, "a.conflict-theirs").status == 1)
            try git(cli, "commit -qam resolved")
        }

        @Test func test_merge_deletionAgainstEditKeepsTheEdit() throws {
            let cli = try repository(); defer { cli.directory.remove() }
            try git(cli, "checkout -qb feature")
            try set(cli, "b", "b-edited")
            try git(cli, "commit -qam feature")
            try git(cli, "checkout -q main")
            #expect(try cli.run(["rm", "b", "--vault", cli.path("team.vault")]).status == 0)
            try git(cli, "commit -qam main")
            let merge = try cli.shell("git merge --no-edit feature")
            #expect(merge.status != 0)
            #expect((merge.stderr + merge.text).contains("deleted on one side"))
            #expect(try get(cli, "b").text == "b-edited", "nothing is lost")
        }

        @Test func test_merge_refusesDifferentVaultsAndNamesTheFailingPassword() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault("one.vault")
            try cli.initVault("two.vault")
            let different = try cli.run(["git", "merge", cli.path("one.vault"), cli.path("one.vault"), cli.path("two.vault"), "--password-file", cli.path("pw")])
            #expect(different.status == 2 && different.stderr.contains("not the same vault"))
            try cli.write("other.vault", try cli.read("one.vault"))
            try cli.write("new", Array("changed".utf8))
            #expect(try cli.run(["passwd", "--new-password-file", cli.path("new")] + cli.unlock("other.vault")).status == 0)
            let password = try cli.run(["git", "merge", cli.path("one.vault"), cli.path("one.vault"), cli.path("other.vault"), "--password-file", cli.path("pw")])
            #expect(password.status == 2)
            #expect(password.stderr.contains("THEIRS"), "\(password.stderr)")
        }
    }
}
