import Foundation
import TestSupport
import Testing

/// Retired file keys on the command line: after `passwd`, `slot rm` or `rekey`, a copy still
/// sealed under the old key is read with one notice and written never (exit 7) until `rekey` or
/// a merge with the rotated copy; the merge refusal names the unlock sources tried.
@Suite struct RetiredKeyCLITests {
    @Test func test_set_onACopyFromBeforePasswdExits7EvenWithTheRollbackCheckOff() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "off"
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault()
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        try cli.write("old.vault", try cli.read("t.vault"))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("pw")] + cli.unlock())
        #expect(passwd.status == 0, "\(passwd.stderr)")
        let before = try cli.read("old.vault")
        let set = try cli.run(["set", "new"] + cli.unlock("old.vault"), stdin: Array("secret".utf8))
        #expect(set.status == 7, "\(set.stderr)")
        #expect(set.stderr.contains("sealed under a file key that was retired here"), "\(set.stderr)")
        #expect(set.stderr.contains("readable by whoever lost access") && set.stderr.contains("vaultfile rekey"), "\(set.stderr)")
        #expect(try cli.read("old.vault") == before, "nothing was written")
        // Reads go on, with one notice however many times the command opens the vault.
        let get = try cli.run(["get", "k"] + cli.unlock("old.vault"))
        #expect(get.status == 0 && get.text == "v")
        #expect(get.stderr.components(separatedBy: "retired here").count == 2, "\(get.stderr)")
        #expect(try cli.run(["get", "k"] + cli.unlock()).stderr.isEmpty, "the rotated vault is not reported")
    }

    @Test func test_rekey_printsTheFingerprintOfEveryKeyItWrapsTo() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let alice = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
        let bob = try cli.run(["keygen", "-o", cli.path("bob.txt")]).text.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["init", "--vault", cli.path("t.vault"), "--recipient", alice, "--recipient", bob]).status == 0)
        #expect(try cli.run(["keygen", "--keyfile", cli.path("key")]).status == 0)
        #expect(try cli.run(["slot", "add", "keyfile", cli.path("key"), "--vault", cli.path("t.vault"),
                             "--identity", cli.path("alice.txt")]).status == 0)
        let before = try cli.run(["slot", "list", "--json", "--vault", cli.path("t.vault"), "--identity", cli.path("alice.txt")])
        let rekey = try cli.run(["rekey", "--vault", cli.path("t.vault"), "--keyfile", cli.path("key")])
        #expect(rekey.status == 0, "\(rekey.stderr)")
        #expect(rekey.stderr.contains(alice) && rekey.stderr.contains(bob), "\(rekey.stderr)")
        let keyfileLine = try #require(rekey.stderr.split(separator: "\n").first { $0.contains("keyfile") })
        #expect(keyfileLine.contains("x25519:"), "the re-salted keyfile slot's new key: \(keyfileLine)")
        // The slot it was opened with was re-salted: its public key (so its fingerprint) changed.
        let oldFingerprint = try #require(try (JSONSerialization.jsonObject(with: Data(before.stdout)) as? [[String: Any]])?
            .first { $0["kind"] as? String == "keyfile" }?["fingerprint"] as? String)
        #expect(!keyfileLine.contains(oldFingerprint), "\(keyfileLine) kept \(oldFingerprint)")
    }

    @Test func test_merge_thatNoSourceOpensNamesTheIdentityNotAPassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let alice = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
        _ = try cli.run(["keygen", "-o", cli.path("carol.txt")])
        #expect(try cli.run(["init", "--vault", cli.path("one.vault"), "--recipient", alice]).status == 0)
        try cli.write("two.vault", try cli.read("one.vault"))
        let merge = try cli.run(["merge", cli.path("one.vault"), cli.path("two.vault"), "--identity", cli.path("carol.txt")])
        #expect(merge.status == 2, "\(merge.stderr)")
        #expect(merge.stderr.contains("the unlock source tried (--identity \(cli.path("carol.txt")))"), "\(merge.stderr)")
        #expect(!merge.stderr.contains("password"), "\(merge.stderr)")
        #expect(!merge.stderr.contains("AGE-SECRET-KEY"))
    }
}

extension ExternalTools {
    /// An old git branch after a member's removal, with real git.
    @Suite struct RetiredKeyGitCLITests {
        /// A repository with `team.vault` (recipients alice and bob), a branch `old` made before
        /// `slot rm` of bob on main; vaultfile runs open it with alice's identity.
        private func repository() throws -> (cli: CLI, bobID: Int) {
            var cli = try CLI.gitRepository()
            let alice = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
            let bob = try cli.run(["keygen", "-o", cli.path("bob.txt")]).text.trimmingCharacters(in: .newlines)
            let created = try cli.run(["init", "--vault", cli.path("team.vault"), "--recipient", alice, "--recipient", bob])
            precondition(created.status == 0, created.stderr)
            cli.environment["VAULTFILE_IDENTITY_FILE"] = cli.path("alice.txt")
            let stored = try cli.run(["set", "a", "--vault", cli.path("team.vault")], stdin: Array("alpha-0".utf8))
            precondition(stored.status == 0, stored.stderr)
            let setup = try cli.run(["git", "setup"])
            precondition(setup.status == 0, setup.stderr)
            try cli.write(".gitignore", Array("*.vault.lock\n*.txt\nstate/\nother-machine/\n".utf8))
            try git(cli, "add -A && git commit -qm base")
            try git(cli, "branch old")
            let rm = try cli.run(["slot", "rm", "1", "--vault", cli.path("team.vault")])
            precondition(rm.status == 0 && rm.stderr.contains("removed keyslot 1 (recipient, age1"), rm.stderr)
            try git(cli, "commit -qam 'remove bob'")
            return (cli, 1)
        }

        @Test func test_set_onABranchFromBeforeASlotRemovalExits7AndRekeyLetsItWrite() throws {
            let (cli, _) = try repository(); defer { cli.directory.remove() }
            let vault = ["--vault", cli.path("team.vault")]
            try git(cli, "checkout -q old")
            let before = try cli.read("team.vault")
            let set = try cli.run(["set", "b"] + vault, stdin: Array("bravo-old".utf8))
            #expect(set.status == 7, "\(set.stderr)")
            #expect(set.stderr.contains("readable by whoever lost access") && set.stderr.contains("vaultfile rekey")
                    && set.stderr.contains("merge it with the rotated copy"), "\(set.stderr)")
            #expect(try cli.read("team.vault") == before, "nothing was written")
            let get = try cli.run(["get", "a"] + vault)
            #expect(get.status == 0 && get.text == "alpha-0" && get.stderr.contains("a write to it is refused (exit 7)"), "\(get.stderr)")
            // A rekey would wrap the new key to bob's slot again: refused, naming it (issue 39, F7).
            let rekey = try cli.run(["rekey"] + vault)
            #expect(rekey.status == 7 && rekey.stderr.contains("would keep keyslot 1") && rekey.stderr.contains("'vaultfile slot rm 1'"),
                    "\(rekey.stderr)")
            let rm = try cli.run(["slot", "rm", "1"] + vault)
            #expect(rm.status == 0, "\(rm.stderr)")
            #expect(rm.stderr.contains("the new key is wrapped to 1 keyslot") && rm.stderr.contains("age1"), "\(rm.stderr)")
            let again = try cli.run(["set", "b"] + vault, stdin: Array("bravo-old".utf8))
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
            try git(cli, "commit -qam 'rekey and edit on old'")
            // git log -p (textconv) shows both sides of every commit, and no refusal.
            let log = try git(cli, "log -p --all")
            #expect(log.text.contains("-# keyslot 1: recipient") && log.text.contains("+b "), "\(log.text)")
            #expect(!log.stderr.contains("error"), "\(log.stderr)")
        }

        @Test func test_gitMerge_ofTheOldBranchWithTheRotatedOneIsSealedUnderTheNewestKey() throws {
            let (cli, _) = try repository(); defer { cli.directory.remove() }
            let vault = ["--vault", cli.path("team.vault")]
            try git(cli, "checkout -q old")
            // An edit made on the old branch by a member whose machine has not seen the removal.
            let edit = try cli.run(["set", "b"] + vault, stdin: Array("bravo-old".utf8), extra: ["VAULTFILE_STATE_DIR": cli.path("other-machine")])
            #expect(edit.status == 0, "\(edit.stderr)")
            try git(cli, "commit -qam 'edit on old'")
            let merge = try cli.shell("git merge -q --no-edit main")
            #expect(merge.status == 0, "git merge: \(merge.stderr)")
            #expect(try cli.run(["get", "b"] + vault).text == "bravo-old")
            let asBob = try cli.run(["get", "a"] + vault, extra: ["VAULTFILE_IDENTITY_FILE": cli.path("bob.txt")])
            #expect(asBob.status == 3, "the removed key opens the merged vault")
            let set = try cli.run(["set", "c"] + vault, stdin: Array("charlie".utf8))
            #expect(set.status == 0 && set.stderr.isEmpty, "the merge is sealed under the newest key: \(set.stderr)")
        }
    }
}
