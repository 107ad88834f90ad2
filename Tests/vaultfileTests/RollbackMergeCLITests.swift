import Foundation
import TestSupport
import Testing

/// `vaultfile merge` of two copies outside git, and the rollback check staying out of git's way:
/// branch switches, `git log -p` and git merges, with real git.
@Suite struct RollbackMergeCLITests {
    private func set(_ cli: CLI, _ name: String, _ value: String, in vault: String, elsewhere: Bool = false) throws {
        // `elsewhere`: on another machine, which has its own state folder.
        let extra = elsewhere ? ["VAULTFILE_STATE_DIR": cli.path("other-machine")] : [:]
        let result = try cli.run(["set", name] + cli.unlock(vault), stdin: Array(value.utf8), extra: extra)
        #expect(result.status == 0, "\(result.stderr)")
    }

    private func get(_ cli: CLI, _ name: String, in vault: String) throws -> String? {
        let result = try cli.run(["get", name] + cli.unlock(vault))
        return result.status == 0 ? result.text : nil
    }

    private func generation(_ cli: CLI, _ vault: String) throws -> Int? {
        let info = try cli.run(["info", "--json", "--vault", cli.path(vault)])
        return (try JSONSerialization.jsonObject(with: Data(info.stdout)) as? [String: Any])?["generation"] as? Int
    }

    /// `base.vault` (a, b, shared) copied onto two sticks, `one/team.vault` and `two/team.vault`.
    private func twoSticks() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault("base.vault")
        for (name, value) in [("a", "a0"), ("b", "b0"), ("shared", "s0")] { try set(cli, name, value, in: "base.vault") }
        for stick in ["one", "two"] {
            try FileManager.default.createDirectory(atPath: cli.path(stick), withIntermediateDirectories: true)
            try cli.write("\(stick)/team.vault", try cli.read("base.vault"))
        }
        return cli
    }

    // MARK: - merge

    @Test func test_merge_twoSticksWithoutABaseKeepsOneSidedEntriesAndConflictsOnTheRest() throws {
        let cli = try twoSticks(); defer { cli.directory.remove() }
        try set(cli, "only-one", "1", in: "one/team.vault")
        try set(cli, "shared", "s-one", in: "one/team.vault")
        try set(cli, "only-two", "2", in: "two/team.vault", elsewhere: true)
        try set(cli, "shared", "s-two", in: "two/team.vault", elsewhere: true)
        let two = try cli.read("two/team.vault")
        let merge = try cli.run(["merge", cli.path("one/team.vault"), cli.path("two/team.vault"), "--password-file", cli.path("pw")])
        #expect(merge.status == 1, "a conflict, as with git: \(merge.stderr)")
        #expect(merge.stderr.contains("vaultfile: conflict in 'shared': differs between the two copies; theirs is in 'shared.conflict-theirs'"), "\(merge.stderr)")
        #expect(merge.stderr.contains("vaultfile resolve NAME --ours"))
        #expect(try get(cli, "only-one", in: "one/team.vault") == "1" && get(cli, "only-two", in: "one/team.vault") == "2")
        #expect(try get(cli, "a", in: "one/team.vault") == "a0")
        #expect(try get(cli, "shared", in: "one/team.vault") == "s-one" && get(cli, "shared.conflict-theirs", in: "one/team.vault") == "s-two")
        #expect(try cli.read("two/team.vault") == two, "THEIRS is left as it was")
        #expect(try generation(cli, "one/team.vault") == 7, "one more than both sides and the record (all 6)")
        #expect(try cli.run(["resolve", "shared", "--theirs"] + cli.unlock("one/team.vault")).status == 0)
        // The merged copy goes back onto the second stick: it opens silently there.
        try cli.write("two/team.vault", try cli.read("one/team.vault"))
        let back = try cli.run(["get", "shared"] + cli.unlock("two/team.vault"))
        #expect(back.text == "s-two" && back.stderr.isEmpty, "\(back.stderr)")
    }

    @Test func test_merge_withABaseIsThreeWayAndNeverRefusedAsStale() throws {
        let cli = try twoSticks(); defer { cli.directory.remove() }
        try set(cli, "a", "a-one", in: "one/team.vault")
        try set(cli, "b", "b-two", in: "two/team.vault", elsewhere: true)
        try set(cli, "c", "c-two", in: "two/team.vault", elsewhere: true)
        #expect(try get(cli, "c", in: "two/team.vault") == "c-two", "this machine sees stick two (6)")
        // Stick one (generation 5) is older than what this machine saw last: a merge into it still goes ahead.
        #expect(try cli.run(["set", "x"] + cli.unlock("one/team.vault"), stdin: [1]).status == 7)
        let merge = try cli.run(["merge", cli.path("one/team.vault"), cli.path("two/team.vault"), "--base", cli.path("base.vault"),
                                 "--password-file", cli.path("pw")])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stderr.contains("merged \(cli.path("two/team.vault")) into \(cli.path("one/team.vault")) (generation 7)"), "\(merge.stderr)")
        #expect(try get(cli, "a", in: "one/team.vault") == "a-one" && get(cli, "b", in: "one/team.vault") == "b-two")
        #expect(try get(cli, "c", in: "one/team.vault") == "c-two" && get(cli, "shared", in: "one/team.vault") == "s0")
        #expect(try cli.run(["set", "x"] + cli.unlock("two/team.vault"), stdin: [1]).status == 7, "stick two is now the older copy")
        #expect(try cli.run(["set", "x"] + cli.unlock("one/team.vault"), stdin: [1]).status == 0)
    }

    @Test func test_merge_refusesUnrelatedVaultsAndAVaultOption() throws {
        let cli = try twoSticks(); defer { cli.directory.remove() }
        try cli.initVault("other.vault")
        let unrelated = try cli.run(["merge", cli.path("one/team.vault"), cli.path("other.vault"), "--password-file", cli.path("pw")])
        #expect(unrelated.status == 2 && unrelated.stderr.contains("not the same vault"), "\(unrelated.stderr)")
        let vault = try cli.run(["merge", cli.path("one/team.vault"), cli.path("two/team.vault"), "--vault", cli.path("x.vault")])
        #expect(vault.status == 64)
    }

    // MARK: - git

    /// A repository holding `team.vault`, set up for vaultfile, on branch main; the weak-KDF warning off.
    private func repository() throws -> CLI {
        var cli = try CLI.gitRepository()
        try cli.write("pw", Array("pw".utf8))
        cli.environment["VAULTFILE_PASSWORD_FILE"] = cli.path("pw")
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        #expect(try cli.run(["init", "--vault", cli.path("team.vault")] + CLI.fastKDF).status == 0)
        #expect(try cli.run(["set", "a", "--vault", cli.path("team.vault")], stdin: Array("a0".utf8)).status == 0)
        #expect(try cli.run(["git", "setup"]).status == 0)
        try git(cli, "add -A && git commit -qm base")
        return cli
    }

    /// Runs vaultfile in the repository and expects exit 0 with nothing on stderr.
    @discardableResult
    private func silent(_ cli: CLI, _ arguments: [String], stdin: String = "") throws -> CLI.Result {
        let result = try cli.run(arguments + ["--vault", cli.path("team.vault")], stdin: Array(stdin.utf8))
        #expect(result.status == 0 && result.stderr.isEmpty, "\(arguments): \(result.status) \(result.stderr)")
        return result
    }

    /// Branch switches back and forth with writes on each, ten commits of `git log -p`, and the
    /// merge of the two branches: every command exits 0 with nothing on stderr, and nothing is recorded.
    @Test func test_git_branchSwitchesLogAndMergeAreNeverTakenForOlderCopies() throws {
        let cli = try repository(); defer { cli.directory.remove() }
        try git(cli, "checkout -qb feature")
        for round in 1...5 {
            try silent(cli, ["set", "feature-\(round)"], stdin: "f\(round)")
            try git(cli, "commit -qam feature-\(round)")
            try git(cli, "checkout -q main")  // an older generation than the one just written
            try silent(cli, ["get", "a"])
            try silent(cli, ["set", "main-\(round)"], stdin: "m\(round)")
            try git(cli, "commit -qam main-\(round)")
            try git(cli, "checkout -q feature")
        }
        try git(cli, "checkout -q main")
        let log = try cli.shell("git log -p --all")
        #expect(log.status == 0 && log.stderr.isEmpty, "\(log.stderr)")
        #expect(log.text.contains("+main-5  (modified") && log.text.contains("+feature-5  (modified"), "textconv ran: \(log.text.prefix(400))")
        #expect(try git(cli, "rev-list --all --count").text == "11\n")
        let merge = try cli.shell("git merge -q --no-edit feature")
        #expect(merge.status == 0 && !merge.stderr.contains("warning"), "\(merge.stderr)")
        #expect(try silent(cli, ["get", "feature-5"]).text == "f5")
        #expect(try silent(cli, ["get", "main-5"]).text == "m5")
        #expect(try silent(cli, ["info"]).text.contains("seen here:   not checked: git manages this file (work tree "))
        let records = (try? FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)) ?? []
        #expect(!records.contains { $0.hasSuffix(".generation") }, "nothing recorded inside git: \(records)")
    }

    @Test func test_git_checkOnInsideGitWarnsAboutAnOlderCheckout() throws {
        var cli = try repository(); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "on"
        try git(cli, "checkout -qb feature")
        try silent(cli, ["set", "f"], stdin: "f")
        try git(cli, "commit -qam feature && git checkout -q main")
        let read = try cli.run(["get", "a", "--vault", cli.path("team.vault")])
        #expect(read.status == 0 && read.stderr.contains("is an older copy"), "\(read.stderr)")
    }

    @Test func test_textconv_neverComparesNorRecords() throws {
        let cli = try twoSticks(); defer { cli.directory.remove() }
        try set(cli, "a", "newer", in: "one/team.vault")
        let before = (try? FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)) ?? []
        let textconv = try cli.run(["git", "textconv", cli.path("two/team.vault"), "--password-file", cli.path("pw")])
        #expect(textconv.status == 0 && textconv.stderr.isEmpty, "\(textconv.stderr)")
        try cli.initVault("fresh.vault")
        #expect(try cli.run(["git", "textconv", cli.path("fresh.vault"), "--password-file", cli.path("pw")]).status == 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)) ?? []) == before, "no record added")
    }
}
