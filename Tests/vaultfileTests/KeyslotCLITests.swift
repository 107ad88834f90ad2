import Foundation
import TestSupport
import Testing

/// Keyslots through the binary: keygen, init with recipients, slot list/add/rm, rekey, passwd in
/// format 1.1, and the unlock sources (--identity, VAULTFILE_IDENTITY, keyfiles, recovery codes).
@Suite struct KeyslotCLITests {
    static let ageInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/age")
    static let v11 = ProjectPaths.fixtures.appendingPathComponent("v1.1")

    /// A 1.0 vault `t.vault` (password in `pw`) with one entry, and an identity in `alice.txt` whose recipient is returned.
    static func vaultAndIdentity() throws -> (CLI, String) {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("s3cret".utf8)).status == 0)
        let keygen = try cli.run(["keygen", "-o", cli.path("alice.txt")])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        return (cli, keygen.text.trimmingCharacters(in: .newlines))
    }

    // MARK: - keygen

    @Test func test_keygen_writesAPrivateIdentityAndPrintsOnlyItsRecipient() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["keygen", "-o", cli.path("id.txt")])
        #expect(result.status == 0)
        #expect(result.text.hasPrefix("age1") && result.text.hasSuffix("\n") && result.text.split(separator: "\n").count == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("id.txt"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let file = String(decoding: try cli.read("id.txt"), as: UTF8.self)
        #expect(file.contains("# public key: \(result.text.trimmingCharacters(in: .newlines))") && file.contains("\nAGE-SECRET-KEY-1"))
        let again = try cli.run(["keygen", "-o", cli.path("id.txt")])
        #expect(again.status == 2 && again.stderr.contains("exists"))
        #expect(try cli.read("id.txt") == Array(file.utf8))
        let toStdout = try cli.run(["keygen"])
        #expect(toStdout.text.contains("AGE-SECRET-KEY-1") && toStdout.stderr.contains("Public key: age1"))
        #expect(!toStdout.stderr.contains("AGE-SECRET-KEY"))
    }

    @Test(.enabled(if: ageInstalled, "age is not installed (apt-get install age): the round trip through age is skipped"))
    func test_keygen_identityWorksWithAge() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try cli.run(["keygen", "-o", cli.path("id.txt")]).text.trimmingCharacters(in: .newlines)
        let round = try cli.shell("printf 'through age' | age -r '\(recipient)' | age -d -i id.txt")
        #expect(round.status == 0 && round.text == "through age", "\(round.stderr)")
        // And an identity from age-keygen opens a vault shared with its recipient.
        let keygen = try cli.shell("age-keygen -o theirs.txt 2>&1 | sed 's/^Public key: //'")
        try cli.initVault()
        let add = try cli.run(["slot", "add", "recipient", keygen.text.trimmingCharacters(in: .newlines)] + cli.unlock())
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try cli.run(["list", "--vault", cli.path("t.vault"), "--identity", cli.path("theirs.txt")]).status == 0)
    }

    @Test func test_keygenKeyfile_writesSixtyFourPrivateBytesAndNeverReplaces() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        #expect(try cli.run(["keygen", "--keyfile", cli.path("k.bin")]).status == 0)
        #expect(try cli.read("k.bin").count == 64)
        #expect((try FileManager.default.attributesOfItem(atPath: cli.path("k.bin"))[.posixPermissions] as? Int) == 0o600)
        #expect(try cli.run(["keygen", "--keyfile", cli.path("k.bin")]).status == 2)
    }

    // MARK: - init

    @Test func test_init_recipientsOnlyHasNoPasswordAndInfoHidesWhoCanOpenIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try cli.run(["keygen", "-o", cli.path("alice.txt")]).text.trimmingCharacters(in: .newlines)
        let created = try cli.run(["init", "--vault", cli.path("r.vault"), "--recipient", recipient])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try cli.run(["set", "k", "--vault", cli.path("r.vault"), "--identity", cli.path("alice.txt")], stdin: [1]).status == 0)
        let info = try cli.run(["info", "--vault", cli.path("r.vault")])
        // init gives a new vault history (format 1.2, issue 30) as well as its recipient slot.
        #expect(info.text.contains("vaultfile 1.2") && info.text.contains("keyslot 0:   recipient"))
        #expect(!info.text.contains(recipient))
        let slots = try cli.run(["slot", "list", "--json", "--vault", cli.path("r.vault"), "--identity", cli.path("alice.txt")])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(slots.stdout)) as? [[String: Any]])
        #expect(json.count == 1 && json[0]["recipient"] as? String == recipient && json[0]["kind"] as? String == "recipient")
        // No password slot: a password opens nothing, and says so.
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["list", "--vault", cli.path("r.vault"), "--password-file", cli.path("pw")]).status == 3)
        // A recovery slot's cheap KDF is by design: info does not call the vault weak for it, and
        // without a password slot it judges no KDF at all (issue 47: it said "meets").
        #expect(try cli.run(["slot", "add", "recovery", "--vault", cli.path("r.vault"), "--identity", cli.path("alice.txt")]).status == 0)
        #expect(try cli.run(["info", "--vault", cli.path("r.vault")]).text.contains("kdf:         not judged: no password slot"))
        // The unlock options are refused by init.
        #expect(try cli.run(["init", "--vault", cli.path("x.vault"), "--identity", cli.path("alice.txt"), "--recipient", recipient]).status == 64)
    }

    @Test func test_init_withKeyfileAndPasswordNeedsKeygensKeyfile() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        try cli.write("photo.jpg", Array(repeating: 7, count: 100))
        let refused = try cli.run(["init", "--vault", cli.path("a.vault"), "--password-file", cli.path("pw"), "--with-keyfile", cli.path("photo.jpg")] + CLI.fastKDF)
        #expect(refused.status == 2 && refused.stderr.contains("--any-keyfile"))
        #expect(try cli.run(["keygen", "--keyfile", cli.path("k.bin")]).status == 0)
        let created = try cli.run(["init", "--vault", cli.path("a.vault"), "--password-file", cli.path("pw"), "--with-keyfile", cli.path("k.bin")] + CLI.fastKDF)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try cli.run(["list", "--vault", cli.path("a.vault"), "--keyfile", cli.path("k.bin")]).status == 0)
        #expect(try cli.run(["list", "--vault", cli.path("a.vault"), "--password-file", cli.path("pw")]).status == 0)
        #expect(try cli.run(["list", "--vault", cli.path("a.vault")], extra: ["VAULTFILE_KEYFILE": cli.path("k.bin")]).status == 0)
    }

    // MARK: - slot add

    @Test func test_slotAdd_eachKindOpensTheVaultAndAnOrdinaryWriteKeepsTheVersion() throws {
        let (cli, recipient) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        // An ordinary write of a 1.0 vault keeps it 1.0.
        #expect(try cli.run(["info", "--vault", cli.path("t.vault")]).text.contains("vaultfile 1.0"))
        let add = try cli.run(["slot", "add", "recipient", recipient, "--label", "alice"] + cli.unlock())
        #expect(add.status == 0 && add.stderr.contains("format 1.1"), "\(add.stderr)")
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path("alice.txt")]).text == "s3cret")
        // Recovery: only the code and a newline on stdout.
        let recovery = try cli.run(["slot", "add", "recovery", "--label", "safe"] + cli.unlock())
        #expect(recovery.status == 0)
        let code = recovery.text
        #expect(code.range(of: #"^([0-9A-Z]{5}-){6}[0-9A-Z]{5}\n$"#, options: .regularExpression) != nil, "\(code)")
        try cli.write("code.txt", Array(code.lowercased().replacingOccurrences(of: "-", with: "").utf8))
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--recovery-file", cli.path("code.txt")]).text == "s3cret")
        // A second password, from a file.
        try cli.write("pw2", Array("second".utf8))
        let password = try cli.run(["slot", "add", "password", "--new-password-file", cli.path("pw2")] + cli.unlock() + CLI.fastKDF)
        #expect(password.status == 0, "\(password.stderr)")
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]).text == "s3cret")
        // Recipients file: age and ssh lines, comments.
        let bob = try cli.run(["keygen", "-o", cli.path("bob.txt")]).text
        let ssh = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea carol@laptop"
        try cli.write("team.txt", Array("# the team\n\(bob)\n\n\(ssh)\n".utf8))
        #expect(try cli.run(["slot", "add", "recipients-file", cli.path("team.txt")] + cli.unlock()).status == 0)
        let list = try cli.run(["slot", "list"] + cli.unlock())
        #expect(list.status == 0)
        for expected in ["alice", "safe", "recovery", "recipient", "ssh-ed25519", "carol@laptop", recipient] {
            #expect(list.text.contains(expected), "slot list lacks \(expected): \(list.text)")
        }
        #expect(list.text.split(separator: "\n").count == 7)
    }

    @Test func test_slotAdd_keyfileNeedsAnyKeyfileUnlessKeygenMadeIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("random.bin", Array(repeating: 3, count: 64))
        let refused = try cli.run(["slot", "add", "keyfile", cli.path("random.bin")] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("--any-keyfile"))
        #expect(try cli.run(["info", "--vault", cli.path("t.vault")]).text.contains("vaultfile 1.0"), "a refused add must not upgrade")
        #expect(try cli.run(["slot", "add", "keyfile", cli.path("random.bin"), "--any-keyfile"] + cli.unlock()).status == 0)
        #expect(try cli.run(["list", "--vault", cli.path("t.vault"), "--keyfile", cli.path("random.bin")]).status == 0)
    }

    // MARK: - Unlock sources

    @Test func test_identity_environmentSourcesOpenAndNoMatchNamesTheSourcesTried() throws {
        let (cli, recipient) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock()).status == 0)
        let key = String(decoding: try cli.read("alice.txt"), as: UTF8.self)
        let vault = ["--vault", cli.path("t.vault")]
        #expect(try cli.run(["get", "db/password"] + vault, extra: ["VAULTFILE_IDENTITY": key]).text == "s3cret")
        #expect(try cli.run(["get", "db/password"] + vault, extra: ["VAULTFILE_IDENTITY_FILE": cli.path("alice.txt")]).text == "s3cret")
        _ = try cli.run(["keygen", "-o", cli.path("mallory.txt")])
        let other = String(decoding: try cli.read("mallory.txt"), as: UTF8.self)
        let miss = try cli.run(["get", "db/password", "--identity", cli.path("mallory.txt")] + vault, extra: ["VAULTFILE_IDENTITY": other])
        #expect(miss.status == 3)
        #expect(miss.stderr.contains("--identity \(cli.path("mallory.txt"))") && miss.stderr.contains("VAULTFILE_IDENTITY"), "\(miss.stderr)")
        #expect(!miss.stderr.contains("AGE-SECRET-KEY"), "a message quoted a key")
        // VAULTFILE_IDENTITY never reaches a child.
        let exec = try cli.run(["exec"] + vault + ["--", "sh", "-c", "echo \"${VAULTFILE_IDENTITY:-absent}\""], extra: ["VAULTFILE_IDENTITY": key])
        #expect(exec.text == "absent\n", "\(exec.stderr)")
        // With --allow-nested it is put back from guarded memory for a nested vaultfile.
        let nested = try cli.run(["exec", "--allow-nested"] + vault + ["--", "sh", "-c", "\"$VF\" get db/password --vault t.vault"],
                                 extra: ["VAULTFILE_IDENTITY": key])
        #expect(nested.text == "s3cret", "\(nested.stderr)")
    }

    @Test func test_recovery_promptOnTheTerminalAndAMistypedGroupIsCaughtFirst() throws {
        let (cli, _) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        let code = try cli.run(["slot", "add", "recovery"] + cli.unlock()).text.trimmingCharacters(in: .newlines)
        let session = try cli.interactive(["get", "db/password", "--vault", cli.path("t.vault"), "--recovery"],
                                          answers: [("Recovery code for", code.lowercased())])
        #expect(session.status == 0 && session.screen.contains("s3cret"), "\(session.screen)")
        var typo = Array(code.utf8)
        typo[7] = typo[7] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try cli.write("typo", typo)
        let refused = try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--recovery-file", cli.path("typo")])
        #expect(refused.status == 2 && refused.stderr.contains("group 2 of the recovery code is mistyped"), "\(refused.stderr)")
    }

    /// Protected keys are read since issue 41 (ProtectedIdentityCLITests): one is asked for only
    /// when the vault has an ssh-ed25519 slot, so a password-only vault just does not open with it.
    @Test func test_identity_encryptedOpenSSHKeyIsNotAskedForAVaultWithoutAnSshSlot() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen") else { return }
        _ = try cli.shell("ssh-keygen -q -t ed25519 -N secret-passphrase -f locked")
        let result = try cli.run(["list", "--vault", cli.path("t.vault"), "--identity", cli.path("locked")])
        #expect(result.status == 3 && result.stderr.contains("no keyslot of the vault opens with --identity"), "\(result.stderr)")
        #expect(!result.stderr.contains("Passphrase for"), "\(result.stderr)")
    }

    @Test func test_fixtures_everySecretOpensThroughTheBinary() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let team = Self.v11.appendingPathComponent("team.vault").path
        try cli.write("team.vault", Array(try Data(contentsOf: URL(fileURLWithPath: team))))
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.v11.appendingPathComponent("manifest.json"))) as! [String: Any]
        let fixture = (manifest["fixtures"] as! [[String: Any]]).first { $0["file"] as? String == "team.vault" }!
        let code = (fixture["secrets"] as! [[String: Any]]).compactMap { $0["code"] as? String }.first!
        try cli.write("code", Array(code.utf8))
        try cli.write("pw", Array("fixture 1.1 pässword".utf8))
        let sources: [[String]] = [["--identity", Self.v11.appendingPathComponent("recipient.key").path],
                                   ["--identity", Self.v11.appendingPathComponent("ssh-ed25519.key").path],
                                   ["--keyfile", Self.v11.appendingPathComponent("keyfile.bin").path],
                                   ["--recovery-file", cli.path("code")], ["--password-file", cli.path("pw")]]
        for source in sources {
            let result = try cli.run(["get", "db/password", "--vault", cli.path("team.vault")] + source)
            #expect(result.status == 0 && result.text == "hunter2", "\(source): \(result.stderr)")
        }
    }

    // MARK: - slot rm, rekey, passwd

    @Test func test_slotRm_removedIdentityCannotOpenTheNewFileButTheOldCopyStillOpens() throws {
        let (cli, recipient) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", recipient, "--label", "alice"] + cli.unlock()).status == 0)
        let old = try cli.read("t.vault")
        let rm = try cli.run(["slot", "rm", "alice"] + cli.unlock())
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(rm.stderr.contains("removed keyslot 1 (recipient, alice, \(recipient)) from") && rm.stderr.contains("x25519:"), "\(rm.stderr)")
        #expect(rm.stderr.contains("copies of the old file"), "\(rm.stderr)")
        let denied = try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path("alice.txt")])
        #expect(denied.status == 3)
        try cli.write("old.vault", old)
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("old.vault"), "--identity", cli.path("alice.txt")]).text == "s3cret")
        #expect(try cli.run(["get", "db/password"] + cli.unlock()).text == "s3cret")
        #expect(try cli.run(["slot", "rm", "nobody"] + cli.unlock()).status == 1)
        #expect(try cli.run(["slot", "rm", "0"] + cli.unlock()).status == 2, "the last slot cannot go")
    }

    @Test func test_rekey_v1SlotThatDidNotOpenBlocksUntilDropped() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("v.vault", Array(try Data(contentsOf: Self.v11.appendingPathComponent("v1-slot-kept.vault"))))
        let byAlice = ["--vault", cli.path("v.vault"), "--identity", Self.v11.appendingPathComponent("recipient.key").path]
        let before = try cli.read("v.vault")
        let blocked = try cli.run(["rekey"] + byAlice)
        #expect(blocked.status == 2 && blocked.stderr.contains("keyslot 0") && blocked.stderr.contains("--drop-slot"), "\(blocked.stderr)")
        #expect(try cli.read("v.vault") == before, "a blocked rotation wrote the vault")
        // Opened with its own password, the v1 slot is made again in the 1.1 shape.
        try cli.write("pw", Array("fixture 1.0 password".utf8))
        let byPassword = try cli.run(["rekey", "--vault", cli.path("v.vault"), "--password-file", cli.path("pw")])
        #expect(byPassword.status == 0, "\(byPassword.stderr)")
        #expect(try cli.run(["slot", "list"] + byAlice).text.contains("password (v1)") == false)
        let dropped = try cli.run(["rekey", "--drop-slot", "0"] + byAlice)
        #expect(dropped.status == 0)
        #expect(try cli.run(["list", "--vault", cli.path("v.vault"), "--password-file", cli.path("pw")]).status == 3)
    }

    @Test func test_passwd_inA11VaultChangesOnlyItsSlotAndKeepsTheOthers() throws {
        let (cli, recipient) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock()).status == 0)
        try cli.write("new", Array("new password".utf8))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("new")] + cli.unlock())
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try cli.run(["get", "db/password"] + cli.unlock()).status == 3)
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--password-file", cli.path("new")]).text == "s3cret")
        #expect(try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path("alice.txt")]).text == "s3cret")
        #expect(try cli.run(["info", "--vault", cli.path("t.vault")]).text.contains("vaultfile 1.1"))
    }

    @Test func test_textconv_showsSlotChangesWithoutSecrets() throws {
        let (cli, recipient) = try Self.vaultAndIdentity(); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", recipient, "--label", "alice"] + cli.unlock()).status == 0)
        let text = try cli.run(["git", "textconv", cli.path("t.vault"), "--identity", cli.path("alice.txt")])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.text.contains("# keyslot 1: recipient, alice \(recipient)"))
        #expect(!text.text.contains("s3cret") && !text.text.contains("AGE-SECRET-KEY"))
    }
}
