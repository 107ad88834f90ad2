import Foundation
import TestSupport
import Testing

/// The one wording when nothing opens a vault (issue 41, `NothingOpens`): the sources tried, named
/// (never their contents), where identities are looked for, no word of passwords for a vault with
/// no password slot, an agent that no longer holds the vault; exit statuses as before.
@Suite struct NothingOpensCLITests {
    private typealias Support = DefaultIdentityCLITests

    // MARK: - A vault with no password slot

    @Test func test_nothingOpens_aRecipientVaultWithNoSourceNamesWhereIdentitiesAreLookedFor() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let own = try Support.newIdentity(cli)
        try Support.recipientVault(cli, "r.vault", recipient: own.recipient)
        let result = try cli.shell("\"$VF\" get a --vault r.vault <&-")
        #expect(result.status == 3, "\(result.stderr)")
        let file = cli.configDirectory + "/vaultfile/identity.txt"
        #expect(result.stderr.contains("nothing to open the vault with: no identity or key was given, and none was found in \(file)"),
                "\(result.stderr)")
        #expect(result.stderr.contains("\(cli.configDirectory)/vaultfile/identities/"), "\(result.stderr)")
        #expect(result.stderr.contains("an age identity (--identity FILE, VAULTFILE_IDENTITY_FILE"), "\(result.stderr)")
        #expect(!result.stderr.lowercased().contains("password"), "no password slot, no word of passwords: \(result.stderr)")
    }

    @Test func test_nothingOpens_explicitAndDefaultIdentitiesAreNamedNeverQuoted() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let (own, other, third) = (try Support.newIdentity(cli), try Support.newIdentity(cli), try Support.newIdentity(cli))
        try Support.recipientVault(cli, "r.vault", recipient: own.recipient)
        try Support.writeDefault(cli, "identity.txt", other.text)
        try cli.write("given.txt", third.text)
        let result = try cli.run(["get", "a", "--vault", cli.path("r.vault"), "--identity", cli.path("given.txt")])
        #expect(result.status == 3, "\(result.stderr)")
        let file = cli.configDirectory + "/vaultfile/identity.txt"
        #expect(result.stderr.contains("no keyslot of the vault opens with --identity \(cli.path("given.txt")) or the default identity \(file)"),
                "explicit first, then the default: \(result.stderr)")
        #expect(result.stderr.contains("'vaultfile slot list' on a machine that opens it"), "\(result.stderr)")
        #expect(!result.stderr.lowercased().contains("password"), "\(result.stderr)")
        #expect(!result.stderr.contains("AGE-SECRET-KEY"), "a key is never quoted")
    }

    // MARK: - A vault with a password slot

    @Test func test_nothingOpens_aWrongPasswordFileStillSaysWrongPasswordAndExits3() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("wrong", Array("nope".utf8))
        let result = try cli.run(["get", "a", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("wrong password: no keyslot of the vault opens with the password (the file \(cli.path("wrong")))"),
                "\(result.stderr)")
        #expect(result.stderr.contains("hint: this vault opens with a password (--password-file"), "\(result.stderr)")
        #expect(!result.stderr.contains("nope"))
    }

    @Test func test_nothingOpens_aDefaultIdentityThatOpensNothingThenThePasswordSource() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let (member, stranger) = (try Support.newIdentity(cli), try Support.newIdentity(cli))
        try cli.write("pw", Array("pw".utf8))
        let made = try cli.run(["init", "--vault", cli.path("m.vault"), "--password-file", cli.path("pw"), "--recipient", member.recipient] + CLI.fastKDF)
        #expect(made.status == 0, "\(made.stderr)")
        try Support.writeDefault(cli, "identity.txt", stranger.text)
        // Given on purpose, the password comes first and opens.
        let withFile = try cli.run(["set", "a", "--vault", cli.path("m.vault"), "--password-file", cli.path("pw")], stdin: Array("v".utf8))
        #expect(withFile.status == 0, "\(withFile.stderr)")
        let withVariable = try cli.run(["get", "a", "--vault", cli.path("m.vault")], extra: ["VAULTFILE_PASSWORD": "pw"])
        #expect(withVariable.status == 0 && withVariable.text == "v", "\(withVariable.stderr)")
        // No source: the default identity opens nothing, then the prompt, which has no terminal here.
        let none = try cli.shell("\"$VF\" get a --vault m.vault <&-")
        #expect(none.status == 2, "exit 2, as 'no password source' always was: \(none.stderr)")
        let file = cli.configDirectory + "/vaultfile/identity.txt"
        #expect(none.stderr.contains("no password source, and no terminal to ask on; no keyslot of the vault opens with the default identity \(file)"),
                "\(none.stderr)")
        // The member's identity as the default opens with no source at all.
        try Support.writeDefault(cli, "identity.txt", member.text)
        let opened = try cli.shell("\"$VF\" get a --vault m.vault <&-")
        #expect(opened.status == 0 && opened.text == "v", "\(opened.stderr)")
    }

    // MARK: - The agent no longer holds the vault

    @Test func test_nothingOpens_saysWhenTheAgentNoLongerHoldsTheVault() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let own = try Support.newIdentity(cli)
        try cli.write("own.txt", own.text)
        try Support.recipientVault(cli, "r.vault", recipient: own.recipient)
        #expect(try cli.run(["set", "a", "--vault", cli.path("r.vault"), "--identity", cli.path("own.txt")], stdin: [1]).status == 0)
        // Two vaults in the agent; after 'lock' of one, the agent runs on for the other.
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["unlock", "--vault", cli.path("r.vault"), "--identity", cli.path("own.txt")]).status == 0)
        #expect(try cli.run(["lock", "--vault", cli.path("r.vault")]).status == 0)
        let socket = cli.path("agent.sock")
        #expect(CLI.socketExists(socket))

        let recipients = try cli.shell("\"$VF\" get a --vault r.vault <&-")
        #expect(recipients.status == 3, "\(recipients.stderr)")
        #expect(recipients.stderr.contains("the agent at \(socket) does not hold this vault (it was locked, or its idle timeout passed)"),
                "\(recipients.stderr)")
        #expect(recipients.stderr.contains("hint: run 'vaultfile unlock' to hand the agent the vault's key again"), "\(recipients.stderr)")
        #expect(!recipients.stderr.lowercased().contains("password"), "\(recipients.stderr)")

        // The same for the password vault, whose prompt has no terminal here (exit 2, as before).
        #expect(try cli.run(["unlock", "--vault", cli.path("r.vault"), "--identity", cli.path("own.txt")]).status == 0)
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        let password = try cli.shell("\"$VF\" get a --vault t.vault <&-")
        #expect(password.status == 2, "\(password.stderr)")
        #expect(password.stderr.contains("no password source, and no terminal to ask on") && password.stderr.contains("does not hold this vault"),
                "\(password.stderr)")
        #expect(password.stderr.contains("vaultfile unlock"), "\(password.stderr)")
    }
}

// MARK: - On a terminal, and in git

extension ExternalTools {
    /// The prompt after the default identity, on a pseudo-terminal; textconv and the merge driver in a real repository.
    @Suite struct DefaultIdentityTerminalAndGitTests {
        private typealias Support = DefaultIdentityCLITests

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_prompt_aPasswordOnlyVaultStillPromptsBesideADefaultIdentity() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault(password: "tty pw")
            try cli.setEntries(["k": "value-on-tty"], password: "tty pw")
            // A good identity (not the vault's) and a broken one in the folder: neither stops the prompt.
            try Support.writeDefault(cli, "identity.txt", try Support.newIdentity(cli).text)
            try Support.writeDefault(cli, "identities/broken", Array("not an identity\n".utf8))
            let session = try cli.interactive(["get", "k", "--vault", cli.path("t.vault")], answers: [("Password for", "tty pw")])
            #expect(session.status == 0 && session.screen.contains("value-on-tty"), "\(session.screen)")
            #expect(session.screen.contains("the default identity \(cli.configDirectory)/vaultfile/identities/broken, line 1"), "\(session.screen)")
        }

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_prompt_followsADefaultIdentityThatOpensNothingAndIsNeverAskedForARecipientVault() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            let (member, stranger) = (try Support.newIdentity(cli), try Support.newIdentity(cli))
            try cli.write("pw", Array("tty pw".utf8))
            #expect(try cli.run(["init", "--vault", cli.path("m.vault"), "--password-file", cli.path("pw"), "--recipient", member.recipient]
                                + CLI.fastKDF).status == 0)
            #expect(try cli.run(["set", "k", "--vault", cli.path("m.vault"), "--password-file", cli.path("pw")], stdin: Array("typed".utf8)).status == 0)
            try Support.writeDefault(cli, "identity.txt", stranger.text)
            let session = try cli.interactive(["get", "k", "--vault", cli.path("m.vault")], answers: [("Password for", "tty pw")])
            #expect(session.status == 0 && session.screen.contains("typed"), "\(session.screen)")
            // A vault with no password slot: no prompt at all, even on a terminal.
            try Support.recipientVault(cli, "r.vault", recipient: member.recipient)
            let refused = try cli.interactive(["get", "k", "--vault", cli.path("r.vault")], answers: [])
            #expect(refused.status == 3 && !refused.screen.contains("Password for"), "\(refused.screen)")
            #expect(refused.screen.contains("no keyslot of the vault opens with the default identity"), "\(refused.screen)")
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git is not installed: skipped"))
        func test_git_textconvAndTheMergeDriverFindTheDefaultIdentity() throws {
            let cli = try CLI.gitRepository(); defer { cli.directory.remove() }
            let own = try Support.newIdentity(cli)
            try Support.writeDefault(cli, "identity.txt", own.text)
            try Support.recipientVault(cli, "team.vault", recipient: own.recipient)
            let vault = ["--vault", cli.path("team.vault")]
            for (name, value) in [("a", "alpha-0"), ("b", "bravo-0")] {
                #expect(try cli.run(["set", name] + vault, stdin: Array(value.utf8)).status == 0)
            }
            #expect(try cli.run(["git", "setup"]).status == 0)
            #expect(try git(cli, "config diff.vaultfile.textconv").text == "vaultfile git textconv\n", "no --identity in git's config")
            try git(cli, "add -A && git commit -qm base")
            #expect(try cli.run(["set", "b"] + vault, stdin: Array("new-secret".utf8)).status == 0)
            let diff = try git(cli, "diff").text
            #expect(diff.contains("-    value  fingerprint:") && diff.contains("+    value  fingerprint:"), "entries shown: \(diff)")
            #expect(!diff.contains("entries not shown") && !diff.contains("new-secret"), "\(diff)")
            try git(cli, "commit -qam main-b")

            try git(cli, "checkout -qb feature")
            #expect(try cli.run(["set", "c"] + vault, stdin: Array("charlie".utf8)).status == 0)
            try git(cli, "commit -qam feature")
            try git(cli, "checkout -q main")
            #expect(try cli.run(["set", "a"] + vault, stdin: Array("alpha-main".utf8)).status == 0)
            try git(cli, "commit -qam main-a")
            let merge = try cli.shell("git merge -q --no-edit feature")
            #expect(merge.status == 0, "the merge driver opened every side with the default identity: \(merge.stderr)")
            #expect(try cli.run(["get", "a"] + vault).text == "alpha-main")
            #expect(try cli.run(["get", "c"] + vault).text == "charlie")
        }
    }
}
