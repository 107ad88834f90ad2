import Foundation
import KDF
import TestSupport
import Testing

extension ExternalTools {
    /// Real git on an entry with a field: merges part by part (value on one branch, field on the
    /// other), and `git diff` and textconv without a password or with a wrong one.
    @Suite struct GitFieldsCLITests {
        /// A repository holding `team.vault` (made with `kdf`) with entry `db` (value v0, field user u0),
        /// set up for vaultfile.
        private func repository(kdf: KDFParameters = CLI.testKDF) throws -> CLI {
            var cli = try CLI.gitRepository()
            cli.environment["VAULTFILE_PASSWORD_FILE"] = cli.path("pw")
            try cli.initVault("team.vault", kdf: kdf)
            try set(cli, "db", "v0")
            try set(cli, "db", "u0", field: "user")
            #expect(try cli.run(["git", "setup"]).status == 0)
            try git(cli, "add -A && git commit -qm base")
            return cli
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
    }
}
