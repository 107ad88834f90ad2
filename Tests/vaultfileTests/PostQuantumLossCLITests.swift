import Foundation
import TestSupport
import Testing
import VaultFormat

/// A vault that stops being post-quantum is noticed by every member (issue 41): each member's
/// machine remembers, in its state folder, that it opened the vault while it was post-quantum,
/// and warns on every later command on it that it no longer is, until the classical slot is
/// removed or `slot list --accept-classical` takes it. Two members are two state folders here
/// (VAULTFILE_STATE_DIR): `state` (alice, who changes the vault) and `state-bob`.
@Suite struct PostQuantumLossCLITests {
    /// Bob's environment: his own state folder.
    static func bob(_ cli: CLI) -> [String: String] { ["VAULTFILE_STATE_DIR": cli.path("state-bob")] }

    /// A vault `name` (password `pw`) holding `db` = `secret` with a post-quantum recipient beside its
    /// password: post-quantum against outsiders. Returns the recipient.
    @discardableResult
    static func postQuantumVault(_ cli: CLI, _ name: String = "t.vault") throws -> String {
        _ = try CLI.withVault(["db": "secret"], name: name, in: cli)
        let recipient = try PostQuantumCLITests.pqKey(cli, "pq-\(name).txt")
        let added = try cli.run(["slot", "add", "recipient", recipient, "--label", "quantum"] + cli.unlock(name))
        #expect(added.status == 0, "\(added.stderr)")
        return recipient
    }

    /// `vaultfile get db` on `name` as bob (his state folder): it must open and print the value whatever it warns.
    static func bobGets(_ cli: CLI, _ name: String = "t.vault") throws -> String {
        let got = try cli.run(["get", "db"] + cli.unlock(name), extra: bob(cli))
        #expect(got.status == 0 && got.stdout == bytes("secret"), "\(got.stderr)")
        return got.stderr
    }

    /// Alice adds a classical age recipient, labelled `carol`, with --allow-classical.
    static func addClassical(_ cli: CLI, _ name: String = "t.vault", extra: [String: String] = [:]) throws {
        let classical = AgeIdentity.generate().recipient.description
        let added = try cli.run(["slot", "add", "recipient", classical, "--label", "carol", "--allow-classical"] + cli.unlock(name), extra: extra)
        #expect(added.status == 0 && added.stderr.contains("no longer"), "\(added.stderr)")
    }

    static let lossWords = "when last opened here"

    // MARK: - Every member

    @Test func test_open_warnsEveryMemberOfAVaultNoLongerPostQuantumUntilAccepted() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        // Bob opens it while it is post-quantum against outsiders: nothing to say, the status is recorded.
        #expect(!(try Self.bobGets(cli)).contains("post-quantum"))
        #expect(FileManager.default.fileExists(atPath: cli.path("state-bob")))
        try Self.addClassical(cli)
        // Alice added it on purpose and was told then: her later commands say nothing more.
        let alice = try cli.run(["get", "db"] + cli.unlock())
        #expect(alice.status == 0 && !alice.stderr.contains(Self.lossWords), "\(alice.stderr)")
        // Bob: warned, on every command, with the slot, what a harvest gives, and the ways out; the exit status is unchanged.
        let warned = try Self.bobGets(cli)
        #expect(warned.contains("was post-quantum against outsiders \(Self.lossWords)") && warned.contains("keyslot 2 (recipient, carol) is classical"),
                "\(warned)")
        #expect(warned.contains("quantum computer") && warned.contains("'vaultfile slot rm 2'") && warned.contains("slot list --accept-classical"), "\(warned)")
        #expect(warned.components(separatedBy: Self.lossWords).count == 2, "once per command: \(warned)")
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
        let write = try cli.run(["set", "other"] + cli.unlock(), stdin: bytes("v"), extra: Self.bob(cli))
        #expect(write.status == 0 && write.stderr.contains(Self.lossWords), "\(write.stderr)")
        // Accepted on bob's machine: the warning stops there, and a second accept has nothing to take.
        let accepted = try cli.run(["slot", "list", "--accept-classical"] + cli.unlock(), extra: Self.bob(cli))
        #expect(accepted.status == 0 && accepted.stderr.contains("now takes") && accepted.text.contains("carol"), "\(accepted.stderr)")
        #expect(!(try Self.bobGets(cli)).contains(Self.lossWords))
        let again = try cli.run(["slot", "list", "--accept-classical"] + cli.unlock(), extra: Self.bob(cli))
        #expect(again.status == 0 && again.stderr.contains("nothing to accept"), "\(again.stderr)")
    }

    @Test func test_open_removingTheClassicalSlotEndsTheWarningAndASecondLossWarnsAgain() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        try Self.addClassical(cli)
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
        let removed = try cli.run(["slot", "rm", "carol"] + cli.unlock())
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!(try Self.bobGets(cli)).contains(Self.lossWords))
        try Self.addClassical(cli)
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
    }

    @Test func test_open_aMemberWhoNeverSawItPostQuantumIsNotWarned() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        try Self.addClassical(cli)
        // Bob's first open is of the classical vault: there is no loss he could have seen.
        #expect(!(try Self.bobGets(cli)).contains(Self.lossWords))
        let info = try cli.run(["info", "--vault", cli.path("t.vault")]).text
        #expect(!info.contains("post-quantum"), "\(info)")
    }

    // MARK: - Copies

    @Test func test_open_anOlderClassicalCopyNeitherWarnsNorChangesTheRecord() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        try Self.addClassical(cli)
        // A backup of the classical vault, then the classical slot removed: post-quantum at a higher generation.
        try cli.write("old.vault", try cli.read("t.vault"))
        #expect(try cli.run(["slot", "rm", "carol"] + cli.unlock()).status == 0)
        #expect(!(try Self.bobGets(cli)).contains(Self.lossWords))
        // The backup is older: the rollback check says so, not a loss of post-quantum; the record stays.
        let old = try Self.bobGets(cli, "old.vault")
        #expect(old.contains("older copy") && !old.contains(Self.lossWords), "\(old)")
        let record = String(decoding: try #require(FileManager.default.contents(atPath: try Self.quantumRecord(cli))), as: UTF8.self)
        #expect(record.hasPrefix("vaultfile-quantum 1\nstatus against-outsiders\n"), "\(record)")
    }

    @Test func test_open_anotherVaultPlantedAtThePathOfAPostQuantumOneIsWarnedAbout() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // Another vault (a new vault id, classical: its one slot is a password) put where the post-quantum one was.
        try Self.plantClassicalVault(cli)
        let warned = try Self.bobGets(cli)
        #expect(warned.contains("held a post-quantum against outsiders vault") && warned.contains("another one") && warned.contains("planted"),
                "\(warned)")
        #expect(warned.contains("slot list --accept-classical"), "\(warned)")
        #expect(try Self.bobGets(cli).contains("another one"))
        #expect(try cli.run(["slot", "list", "--accept-classical"] + cli.unlock(), extra: Self.bob(cli)).status == 0)
        #expect(!(try Self.bobGets(cli)).contains("another one"))
        // Elsewhere, a classical vault never seen post-quantum says nothing.
        try cli.initVault("elsewhere.vault")
        try cli.setEntries(["db": "secret"], in: "elsewhere.vault")
        #expect(!(try Self.bobGets(cli, "elsewhere.vault")).contains("post-quantum"))
    }

    @Test func test_open_aCopyAtAnImplausibleGenerationCannotSilenceTheCheck() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // Someone who can open the vault crafts a post-quantum copy far past any real generation, for bob to open once…
        try cli.write("crafted.vault", try cli.read("t.vault"))
        try cli.craftGeneration("crafted.vault", to: UInt64(1) << 63 + 1)
        #expect(try Self.bobGets(cli, "crafted.vault").contains("plausible"))
        // …so that every genuine copy would be older than it: it was not recorded, and the loss is still found.
        try Self.addClassical(cli)
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
    }

    @Test func test_open_aKnownClassicalVaultPutAtThePathOfAPostQuantumOneIsWarnedAbout() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // A classical vault bob uses elsewhere (and whose loss he accepted there)…
        try Self.postQuantumVault(cli, "c.vault")
        _ = try Self.bobGets(cli, "c.vault")
        try Self.addClassical(cli, "c.vault")
        #expect(try cli.run(["slot", "list", "--accept-classical"] + cli.unlock("c.vault"), extra: Self.bob(cli)).status == 0)
        #expect(!(try Self.bobGets(cli, "c.vault")).contains(Self.lossWords))
        // …put where the post-quantum one was: another vault there, not post-quantum.
        try FileManager.default.removeItem(atPath: cli.path("t.vault"))
        try FileManager.default.copyItem(atPath: cli.path("c.vault"), toPath: cli.path("t.vault"))
        #expect(try Self.bobGets(cli).contains("another one"))
    }

    @Test func test_open_twoVaultsAreJudgedApart() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli, "a.vault")
        try Self.postQuantumVault(cli, "b.vault")
        _ = try Self.bobGets(cli, "a.vault")
        _ = try Self.bobGets(cli, "b.vault")
        try Self.addClassical(cli, "a.vault")
        let a = try Self.bobGets(cli, "a.vault"), b = try Self.bobGets(cli, "b.vault")
        #expect(a.contains(cli.path("a.vault") + " was post-quantum") && !b.contains(Self.lossWords), "\(a)\n\(b)")
        // Accepting one vault's loss accepts nothing of the other's.
        #expect(try cli.run(["slot", "list", "--accept-classical"] + cli.unlock("a.vault"), extra: Self.bob(cli)).status == 0)
        try Self.addClassical(cli, "b.vault")
        #expect(try Self.bobGets(cli, "b.vault").contains(Self.lossWords))
    }

    @Test(arguments: [false, true])
    func test_open_insideAGitWorkTreeOrWithTheRollbackCheckOffWarnsToo(git inGit: Bool) throws {
        let cli = inGit ? try CLI.gitRepository() : try CLI(); defer { cli.directory.remove() }
        let off = inGit ? [:] : ["VAULTFILE_ROLLBACK_CHECK": "off"]
        try Self.postQuantumVault(cli)
        if inGit { try git(cli, "add t.vault && git commit -qm pq") }
        _ = try cli.run(["get", "db"] + cli.unlock(), extra: Self.bob(cli).merging(off) { $1 })
        try Self.addClassical(cli)
        let got = try cli.run(["get", "db"] + cli.unlock(), extra: Self.bob(cli).merging(off) { $1 })
        #expect(got.status == 0 && got.stderr.contains(Self.lossWords), "\(got.stderr)")
    }

    // MARK: - The state folder

    @Test func test_open_withoutAUsableStateFolderGoesOnAndSaysWhy() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        try Self.addClassical(cli)
        // Bob's state folder is gone and cannot be made (a file is in its way): nothing can be compared.
        try FileManager.default.removeItem(atPath: cli.path("state-bob"))
        try cli.write("state-bob", bytes("not a folder"))
        let got = try cli.run(["get", "db"] + cli.unlock(), extra: Self.bob(cli))
        #expect(got.status == 0 && got.stdout == bytes("secret"), "\(got.stderr)")
        #expect(got.stderr.contains("state folder") && !got.stderr.contains(Self.lossWords), "\(got.stderr)")
    }

    /// The path of bob's one `.quantum` record.
    static func quantumRecord(_ cli: CLI) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.path("state-bob")).filter { $0.hasSuffix(".quantum") }
        #expect(names.count == 1, "\(names)")
        return cli.path("state-bob/" + (names.first ?? ""))
    }
}

// MARK: - What the attacker's review found (rev-att41)

extension PostQuantumLossCLITests {
    /// Another vault (a new vault id, classical: its one slot is a password) put in place of `t.vault`.
    static func plantClassicalVault(_ cli: CLI) throws {
        try cli.initVault("planted.vault")
        try cli.setEntries(["db": "secret"], in: "planted.vault")
        try FileManager.default.removeItem(atPath: cli.path("t.vault"))
        try FileManager.default.moveItem(atPath: cli.path("planted.vault"), toPath: cli.path("t.vault"))
    }

    /// Bob's `vaultfile ARGS` with the password and his state folder.
    static func bobRuns(_ cli: CLI, _ arguments: [String], _ name: String = "t.vault", stdin: [UInt8] = []) throws -> CLI.Result {
        try cli.run(arguments + cli.unlock(name), stdin: stdin, extra: bob(cli))
    }

    @Test func test_slotAdd_allowClassicalAcceptsOnlyTheLossItsOwnWriteMakes() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // Mallory adds a classical slot; bob is warned.
        let backdoor = AgeIdentity.generate().recipient.description
        let added = try cli.run(["slot", "add", "recipient", backdoor, "--label", "backdoor", "--allow-classical"] + cli.unlock())
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
        // Bob's own add that fails (the key has a slot already) accepts nothing.
        let failed = try Self.bobRuns(cli, ["slot", "add", "recipient", backdoor, "--allow-classical"])
        #expect(failed.status == 2, "\(failed.stderr)")
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
        // Bob's own add that succeeds, to the vault already classical: warned, naming mallory's slot, and still not accepted.
        let own = try Self.bobRuns(cli, ["slot", "add", "recipient", AgeIdentity.generate().recipient.description, "--label", "bob-laptop",
                                         "--allow-classical"])
        #expect(own.status == 0 && own.stderr.contains(Self.lossWords) && own.stderr.contains("2 (recipient, backdoor)"), "\(own.stderr)")
        #expect(try Self.bobGets(cli).contains(Self.lossWords))
        // The loss bob's own write makes, in another vault post-quantum when he opened it, is his to accept: said once, then silent.
        try Self.postQuantumVault(cli, "b.vault")
        _ = try Self.bobGets(cli, "b.vault")
        let made = try Self.bobRuns(cli, ["slot", "add", "recipient", AgeIdentity.generate().recipient.description, "--allow-classical"], "b.vault")
        #expect(made.status == 0 && made.stderr.contains("no longer is (--allow-classical)") && !made.stderr.contains(Self.lossWords), "\(made.stderr)")
        #expect(!(try Self.bobGets(cli, "b.vault")).contains(Self.lossWords))
    }

    @Test func test_open_insideGitAClassicalBranchForkedBeforeThePostQuantumOneSeenIsWarned() throws {
        let cli = try CLI.gitRepository(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        try git(cli, "add t.vault && git commit -qm pq && git branch fork")
        for index in 1...4 {
            #expect(try cli.run(["set", "x\(index)"] + cli.unlock(), stdin: bytes("v")).status == 0)
        }
        try git(cli, "commit -qam more")
        _ = try Self.bobGets(cli)
        // Mallory's branch, forked from the older commit, gets a classical slot: a lower generation than bob's record.
        try git(cli, "checkout -q fork")
        try Self.addClassical(cli)
        try git(cli, "commit -qam classical")
        let read = try Self.bobGets(cli)
        #expect(read.contains(Self.lossWords) && read.contains("is older than the post-quantum one") && read.contains("(recipient, carol)"), "\(read)")
        let write = try Self.bobRuns(cli, ["set", "new"], stdin: bytes("v"))
        #expect(write.status == 0 && write.stderr.contains(Self.lossWords), "\(write.stderr)")
        // Accepted there, it is silent on that branch until the post-quantum one is opened again.
        #expect(try Self.bobRuns(cli, ["slot", "list", "--accept-classical"]).stderr.contains("now takes"))
        #expect(!(try Self.bobGets(cli)).contains(Self.lossWords))
    }

    @Test func test_open_aPlantIsFoundWhateverTheSpellingOfItsPathAndAfterASecondClone() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // A second clone of the same vault, opened too: the first path keeps its check.
        try FileManager.default.createDirectory(atPath: cli.path("clone"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: cli.path("sub"), withIntermediateDirectories: true)
        try cli.write("clone/t.vault", try cli.read("t.vault"))
        _ = try Self.bobGets(cli, "clone/t.vault")
        try Self.plantClassicalVault(cli)
        // `../t.vault` from a sub-folder, a doubled slash and `./`: one file, one path.
        for spelling in ["sub/../t.vault", "sub//..//./t.vault"] {
            #expect(try Self.bobGets(cli, spelling).contains("another one"), "\(spelling)")
        }
        let relative = try cli.shell("cd sub && \"$VF\" get db --vault ../t.vault --password-file ../pw", extra: Self.bob(cli))
        #expect(relative.status == 0 && relative.stderr.contains("another one"), "\(relative.stderr)")
    }

    @Test func test_open_removingTheLastPostQuantumSlotSaysThatNoneIsLeft() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // No --allow-classical is needed, but whoever removes it is told on that command.
        let removed = try cli.run(["slot", "rm", "quantum"] + cli.unlock())
        #expect(removed.status == 0 && removed.stderr.contains("no post-quantum slot left"), "\(removed.stderr)")
        let warned = try Self.bobGets(cli)
        #expect(warned.contains("no post-quantum slot left") && warned.contains("slot add recipient age1pq1"), "\(warned)")
        #expect(!warned.contains("a keyslot is classical") && !warned.contains("slot rm '"), "\(warned)")
    }

    @Test func test_open_anUnreadableRecordIsSkipped() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.postQuantumVault(cli)
        _ = try Self.bobGets(cli)
        // A record that cannot be read (a symlink, never followed), sorted before every other.
        try FileManager.default.createSymbolicLink(atPath: cli.path("state-bob/0.quantum"), withDestinationPath: "/etc/passwd")
        try Self.plantClassicalVault(cli)
        let warned = try Self.bobGets(cli)
        #expect(warned.contains("another one") && !warned.contains("cannot be used"), "\(warned)")
    }
}
