import Foundation
import TestSupport
import Testing

/// `vaultfile git merge` and `vaultfile git textconv` run directly on copies of one vault, as git
/// runs them (no repository): parked conflicts, wrong or changed passwords, a weaker KDF, fingerprints.
@Suite struct GitDriverCLITests {

    // MARK: - git merge

    /// A conflict parks theirs at NAME.conflict-theirs; when a side already holds an entry of that
    /// name (an earlier conflict committed unresolved), parking there lost theirs or that entry.
    /// The merge now stops (git merge: exit 1, as a conflict; merge: 2) and OURS stays as it was.
    @Test(arguments: ["THEIRS", "OURS"])
    func test_gitMerge_aConflictWhoseParkingNameIsTakenLosesNothing(holder: String) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        // Copies of one vault written apart, as branches are: no rollback warning between them.
        let copies = ["VAULTFILE_ROLLBACK_CHECK": "off"]
        try cli.initVault("base.vault")
        #expect(try cli.run(["set", "X"] + cli.unlock("base.vault"), stdin: Array("base".utf8), extra: copies).status == 0)
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        #expect(try cli.run(["set", "X"] + cli.unlock("ours.vault"), stdin: Array("ours".utf8), extra: copies).status == 0)
        #expect(try cli.run(["set", "X"] + cli.unlock("theirs.vault"), stdin: Array("theirs".utf8), extra: copies).status == 0)
        let holderVault = holder == "OURS" ? "ours.vault" : "theirs.vault"
        #expect(try cli.run(["set", "X.conflict-theirs"] + cli.unlock(holderVault), stdin: Array("its own entry".utf8), extra: copies).status == 0)
        let before = try cli.read("ours.vault")

        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")], extra: copies)
        #expect(merge.status == 1, "\(merge.stderr)")
        #expect(merge.stderr.contains("a conflict in 'X' needs 'X.conflict-theirs'") && merge.stderr.contains("\(holder) already holds"), "\(merge.stderr)")
        #expect(merge.stderr.contains("vaultfile resolve X --ours"), "the hint says how to settle it: \(merge.stderr)")
        #expect(try cli.read("ours.vault") == before, "OURS is left as it was")

        // The same copies merged outside git, three-way and two-way: refused (status 2), OURS unchanged.
        let threeWay = try cli.run(["merge", cli.path("ours.vault"), cli.path("theirs.vault"), "--base", cli.path("base.vault")] + ["--password-file", cli.path("pw")], extra: copies)
        #expect(threeWay.status == 2 && threeWay.stderr.contains("needs 'X.conflict-theirs'"), "\(threeWay.stderr)")
        let twoWay = try cli.run(["merge", cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")], extra: copies)
        #expect(twoWay.status == 2 && twoWay.stderr.contains("needs 'X.conflict-theirs'"), "\(twoWay.stderr)")
        #expect(try cli.read("ours.vault") == before)
    }

    @Test func test_gitMerge_wrongPasswordIsNotBlamedOnAChange() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault("base.vault")
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        try cli.write("wrong", Array("wrong".utf8))
        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("wrong")])
        #expect(merge.status == 2)
        #expect(merge.stderr.contains("wrong password: it opens none of BASE"), "\(merge.stderr)")
        #expect(!merge.stderr.contains("changed") && !merge.stderr.contains("passwd"), "no change was made on any side: \(merge.stderr)")
    }

    @Test func test_gitMerge_namesTheSideWhereThePasswordChanged() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault("base.vault")
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        try cli.write("new", Array("new-pw".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("new")] + cli.unlock("ours.vault")).status == 0)
        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("new")])
        #expect(merge.status == 2)
        #expect(merge.stderr.contains("the password opens OURS (this branch) at \(cli.path("ours.vault")) but not BASE"), "\(merge.stderr)")
        #expect(merge.stderr.contains("changed on that side since BASE"), "\(merge.stderr)")
    }

    /// The finding: a branch that ran `passwd --kdf pbkdf2 --kdf-iterations 1 --allow-weak-kdf`
    /// passed its KDF on through a merge, silently.
    @Test func test_gitMerge_stopsOnTheirLowerKDFUnlessAllowed() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        // The three copies stand for git's branches: no rollback check, as inside a work tree.
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "off"
        try cli.initVault("base.vault", kdf: CLI.eightMiBKDF)
        let base = try cli.read("base.vault")
        try cli.write("ours.vault", base)
        try cli.write("theirs.vault", base)
        #expect(try cli.run(["set", "ours-only"] + cli.unlock("ours.vault"), stdin: [1]).status == 0)
        let weaker = try cli.run(["passwd", "--new-password-file", cli.path("pw"), "--kdf", "pbkdf2", "--kdf-iterations", "1", "--allow-weak-kdf"]
                                 + cli.unlock("theirs.vault"))
        #expect(weaker.status == 0, "\(weaker.stderr)")
        let ours = try cli.read("ours.vault")
        let merge = ["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")]

        let refused = try cli.run(merge)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("lowers the key derivation from Argon2id 8 MiB, t=1, p=1 to PBKDF2-SHA256 1 iterations"), "\(refused.stderr)")
        #expect(refused.stderr.contains("VAULTFILE_MERGE_ALLOW_WEAK=1"))
        #expect(try cli.read("ours.vault") == ours, "ours is left byte for byte")

        let allowed = try cli.run(merge, extra: ["VAULTFILE_MERGE_ALLOW_WEAK": "1"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try cli.run(["info", "--vault", cli.path("ours.vault")]).text.contains("PBKDF2-SHA256 1 iterations"))
        #expect(try cli.run(["get", "ours-only"] + cli.unlock("ours.vault")).stdout == [1])
    }

    // MARK: - git textconv

    /// The finding: equal values had equal fingerprints, so a pasted diff showed a reused secret.
    @Test func test_textconv_equalValuesOfTwoEntriesGetDifferentFingerprints() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for name in ["db/password", "other/pw"] {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: Array("same-secret".utf8)).status == 0)
        }
        let listing = try cli.run(["git", "textconv", cli.path("t.vault"), "--password-file", cli.path("pw")])
        #expect(listing.status == 0, "\(listing.stderr)")
        let prints = listing.text.split(separator: "\n").filter { $0.contains("value  fingerprint:") }
        #expect(prints.count == 2 && Set(prints).count == 2, "\(listing.text)")
        #expect(!listing.text.contains("same-secret"))
    }
}
