import Foundation
import TestSupport
import Testing

/// Keyslots in a real git repository: a removal on one branch and edits on another merge cleanly,
/// the result does not open with the removed key, and diffs show who was given or lost access.
@Suite struct KeyslotGitCLITests {
    /// A repository with `team.vault` (recipients alice and bob only), on branch main; git's
    /// vaultfile runs open it with alice's identity (VAULTFILE_IDENTITY_FILE), no password.
    private func repository() throws -> CLI {
        var cli = try CLI.gitRepository()
        let alice = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
        let bob = try cli.run(["keygen", "-o", cli.path("bob.txt")]).text.trimmingCharacters(in: .newlines)
        try cli.write("recipients", Array("# the team\n\(alice)\n".utf8))
        let created = try cli.run(["init", "--vault", cli.path("team.vault"), "--recipients-file", cli.path("recipients"), "--recipient", bob])
        precondition(created.status == 0, created.stderr)
        cli.environment["VAULTFILE_IDENTITY_FILE"] = cli.path("alice.txt")
        for (name, value) in [("a", "alpha-0"), ("b", "bravo-0")] {
            let stored = try cli.run(["set", name, "--vault", cli.path("team.vault")], stdin: Array(value.utf8))
            precondition(stored.status == 0, stored.stderr)
        }
        let setup = try cli.run(["git", "setup"])
        precondition(setup.status == 0, setup.stderr)
        try cli.write(".gitignore", Array("*.vault.lock\n*.txt\nrecipients\nother-machine/\nstate/\n".utf8))
        try git(cli, "add -A && git commit -qm base")
        return cli
    }

    @Test func test_merge_aSlotRemovalAndAnEditMergeCleanlyAndTheRemovedKeyCannotOpenTheResult() throws {
        let cli = try repository(); defer { cli.directory.remove() }
        let vault = ["--vault", cli.path("team.vault")]
        try git(cli, "checkout -qb remove-bob")
        let list = try cli.run(["slot", "list", "--json"] + vault)
        let slots = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        let bob = String(decoding: try cli.read("bob.txt"), as: UTF8.self)
        let bobID = try #require(slots.first { bob.contains($0["recipient"] as? String ?? "-") }?["id"] as? Int)
        let rm = try cli.run(["slot", "rm", String(bobID)] + vault)
        #expect(rm.status == 0, "\(rm.stderr)")
        try git(cli, "commit -qam 'remove bob'")
        // The diff names the slot that went, and nothing secret.
        let diff = try git(cli, "diff HEAD~1 HEAD").text
        #expect(diff.contains("-# keyslot \(bobID): recipient"), "\(diff)")
        #expect(!diff.contains("alpha-0") && !diff.contains("AGE-SECRET-KEY"))
        try git(cli, "checkout -q main")
        // Another member's edit on main, made on their machine (which has not seen the removal): here
        // main's file key is retired, and a write to it would be refused (RetiredKeyGitCLITests).
        let edit = try cli.run(["set", "c", "--vault", cli.path("team.vault")], stdin: Array("charlie-main".utf8),
                               extra: ["VAULTFILE_STATE_DIR": cli.path("other-machine")])
        #expect(edit.status == 0, "\(edit.stderr)")
        try git(cli, "commit -qam 'edit on main'")
        let merge = try cli.shell("git merge -q --no-edit remove-bob")
        #expect(merge.status == 0, "git merge: \(merge.stderr)")
        #expect(try git(cli, "status --porcelain").text.isEmpty)
        #expect(try cli.run(["get", "c"] + vault).text == "charlie-main")
        #expect(try cli.run(["get", "a"] + vault).text == "alpha-0")
        let asBob = try cli.run(["get", "a"] + vault, extra: ["VAULTFILE_IDENTITY_FILE": cli.path("bob.txt")])
        #expect(asBob.status == 3, "the removed key opens the merged vault")
        // The history still holds the old file, which Bob's key opens: rotation protects the new file only.
        let old = try git(cli, "show HEAD~2:team.vault > old.vault")
        #expect(old.status == 0)
        #expect(try cli.run(["get", "a", "--vault", cli.path("old.vault")], extra: ["VAULTFILE_IDENTITY_FILE": cli.path("bob.txt")]).text == "alpha-0")
    }
}
