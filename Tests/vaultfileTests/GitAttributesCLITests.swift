import Foundation
import TestSupport
import Testing

extension ExternalTools {
    /// `--out`'s "git marks this path as a vault", checked against what real git says
    /// (`git check-attr`): macros within macros, and a linked work tree's common info/attributes.
    @Suite struct GitAttributesCLITests {
        /// A vault `t.vault` (outside any repository) and a repository `main` with one commit.
        private func prepared() throws -> CLI {
            var cli = try CLI()
            cli.environment = ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"]
            try cli.initVault()
            #expect(try cli.run(["set", "a"] + cli.unlock(), stdin: [0x31]).status == 0)
            #expect(try cli.shell("git init -q -b main main && cd main && git commit -q --allow-empty -m base").status == 0)
            return cli
        }

        /// What git itself says of `attribute` for `path`, run in the folder `folder`.
        private func gitSays(_ cli: CLI, in folder: String, _ attribute: String, _ path: String) throws -> String {
            try cli.shell("cd '\(cli.path(folder))' && git check-attr \(attribute) -- '\(path)'").text
        }

        private func export(_ cli: CLI, to out: String) throws -> CLI.Result {
            try cli.run(["export", "--format", "json", "--out", cli.path(out), "--overwrite"] + cli.unlock())
        }

        @Test func test_out_refusesAPathMarkedThroughMacrosWithinMacros() throws {
            let cli = try prepared(); defer { cli.directory.remove() }
            try cli.write("main/.gitattributes", Array("""
                [attr]vaultdiff diff=vaultfile merge=vaultfile
                [attr]secret vaultdiff
                [attr]topsecret secret -text
                *.sec secret
                deep/*.env topsecret
                *.plain secret -diff -merge

                """.utf8))
            #expect(mkdir(cli.path("main/deep"), 0o700) == 0)
            #expect(try gitSays(cli, in: "main", "diff", "x.sec") == "x.sec: diff: vaultfile\n", "git expands the macro in the macro")
            #expect(try gitSays(cli, in: "main", "merge", "deep/a.env") == "deep/a.env: merge: vaultfile\n")
            for target in ["main/x.sec", "main/deep/a.env"] {
                let refused = try export(cli, to: target)
                #expect(refused.status == 2 && refused.stderr.contains("vault for git") && refused.stderr.contains(cli.path("main/.gitattributes")),
                        "\(target): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: cli.path(target)))
            }
            #expect(try gitSays(cli, in: "main", "diff", "y.plain") == "y.plain: diff: unset\n")
            #expect(try export(cli, to: "main/y.plain").status == 0, "later attributes of the line still unset the macro's")
        }

        @Test func test_out_refusesAPathMarkedInTheCommonInfoAttributesOfALinkedWorkTree() throws {
            let cli = try prepared(); defer { cli.directory.remove() }
            #expect(try cli.shell("cd main && git worktree add -q ../linked").status == 0)
            #expect(mkdir(cli.path("main/.git/info"), 0o755) == 0 || errno == EEXIST)
            try cli.write("main/.git/info/attributes", Array("*.vault filter=vaultfile\n".utf8))
            #expect(try gitSays(cli, in: "linked", "filter", "team.vault") == "team.vault: filter: vaultfile\n", "git reads the common folder's")
            let refused = try export(cli, to: "linked/team.vault")
            #expect(refused.status == 2 && refused.stderr.contains(cli.path("main/.git/info/attributes")), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("linked/team.vault")))
            #expect(try export(cli, to: "linked/team.json").status == 0)
        }
    }
}
