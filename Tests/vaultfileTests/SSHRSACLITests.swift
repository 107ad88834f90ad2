import Foundation
import TestSupport
import Testing

/// ssh-rsa keys through the binary, made by the real ssh-keygen (2,048 and 4,096 bits, no
/// passphrase): `slot add recipient`, `init --recipient`, recipients files, `--identity`,
/// rotations, `info` and `slot list`, the refusal of a 1,024-bit key, and a removed ssh-rsa
/// member's old copy refused on a machine that saw the removal. Skipped without ssh-keygen.
@Suite(.enabled(if: SSHKeygen.path != nil, "ssh-keygen is not installed (apt-get install openssh-client): the ssh-rsa suite is skipped"))
struct SSHRSACLITests {
    /// A 1.3 vault `t.vault` (password in `pw`, one entry) and ssh-rsa keys `NAME` / `NAME.pub` of `bits`.
    static func setUp(keys: [(String, Int)]) throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        try cli.initVault()
        #expect(try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("s3cret".utf8)).status == 0)
        for (name, bits) in keys { try SSHKeygen.make("rsa", bits: bits, comment: "\(name)@host", at: cli.path(name)) }
        return cli
    }

    static func publicLine(_ cli: CLI, _ name: String) throws -> String {
        String(decoding: try cli.read(name + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func identity(_ cli: CLI, _ name: String) -> [String] { ["--vault", cli.path("t.vault"), "--identity", cli.path(name)] }

    // MARK: - slot add, open, info, slot list

    @Test func test_slotAdd_ofSSHKeygenKeysOpensWithTheirPrivateKeys() throws {
        let cli = try Self.setUp(keys: [("carol", 2048), ("dave", 4096)]); defer { cli.directory.remove() }
        for name in ["carol", "dave"] {
            let add = try cli.run(["slot", "add", "recipient", try Self.publicLine(cli, name)] + cli.unlock())
            #expect(add.status == 0, "\(add.stderr)")
        }
        for name in ["carol", "dave"] {
            let get = try cli.run(["get", "db/password"] + Self.identity(cli, name))
            #expect(get.status == 0 && get.text == "s3cret", "\(name): \(get.stderr)")
        }
        let info = try cli.run(["info", "--vault", cli.path("t.vault")])
        #expect(info.text.contains("keyslot 1:   ssh-rsa, 2048-bit key") && info.text.contains("keyslot 2:   ssh-rsa, 4096-bit key"), "\(info.text)")
        let json = try jsonObject(try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).stdout)
        let slots = json["keyslots"] as? [[String: Any]]
        #expect(slots?[2]["type"] as? String == "ssh-rsa" && slots?[2]["modulus_bytes"] as? Int == 512, "\(json)")
        #expect(info.text.contains("format:      vaultfile 1.4"), "\(info.text)")
        let list = try cli.run(["slot", "list", "--json"] + Self.identity(cli, "carol"))
        let fingerprint = try cli.shell("ssh-keygen -lf carol.pub | cut -d' ' -f2").text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(list.status == 0 && list.text.contains("ssh-rsa") && list.text.contains("carol@host") && list.text.contains(fingerprint), "\(list.text)")
    }

    @Test func test_setAndRekey_throughAnSSHRSAIdentityKeepTheSlotAndSign() throws {
        let cli = try Self.setUp(keys: [("carol", 2048)]); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", "--label", "carol", try Self.publicLine(cli, "carol")] + cli.unlock()).status == 0)
        let set = try cli.run(["set", "by/carol"] + Self.identity(cli, "carol"), stdin: Array("rsa".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let rekey = try cli.run(["rekey"] + cli.unlock())
        #expect(rekey.status == 0 && rekey.stderr.contains("ssh-rsa, carol"), "\(rekey.stderr)")
        let byCarol = try cli.run(["rekey"] + Self.identity(cli, "carol"))
        #expect(byCarol.status == 0, "\(byCarol.stderr)")
        #expect(try cli.run(["get", "by/carol"] + cli.unlock()).text == "rsa")
        #expect(try cli.run(["get", "by/carol"] + Self.identity(cli, "carol")).text == "rsa")
        let list = try cli.run(["slot", "list", "--json"] + cli.unlock())
        #expect(list.text.contains("\"ssh-rsa\""), "\(list.text)")
    }

    @Test func test_slotRm_ofTheLastSSHRSASlotWritesFormat13Again() throws {
        let cli = try Self.setUp(keys: [("carol", 2048)]); defer { cli.directory.remove() }
        #expect(try cli.run(["slot", "add", "recipient", "--label", "carol", try Self.publicLine(cli, "carol")] + cli.unlock()).status == 0)
        #expect(try cli.read("t.vault")[37] & 0x10 != 0)
        let rm = try cli.run(["slot", "rm", try Self.publicLine(cli, "carol")] + cli.unlock())
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(try cli.read("t.vault")[37] & 0x10 == 0)
        #expect(try cli.run(["get", "db/password"] + Self.identity(cli, "carol")).status == 3)
    }

    @Test func test_initAndRecipientsFile_takeSSHRSALines() throws {
        let cli = try Self.setUp(keys: [("carol", 2048), ("dave", 2048)]); defer { cli.directory.remove() }
        let made = try cli.run(["init", "--vault", cli.path("r.vault"), "--recipient", try Self.publicLine(cli, "carol")])
        #expect(made.status == 0 && made.stderr.contains("ssh-rsa"), "\(made.stderr)")
        #expect(try cli.run(["list", "--vault", cli.path("r.vault"), "--identity", cli.path("carol")]).status == 0)
        try cli.write("team.txt", Array("# Dave\n\(try Self.publicLine(cli, "dave"))\n".utf8))
        let add = try cli.run(["slot", "add", "recipients-file", cli.path("team.txt"), "--vault", cli.path("r.vault"), "--identity", cli.path("carol")])
        #expect(add.status == 0, "\(add.stderr)")
        let list = try cli.run(["slot", "list", "--vault", cli.path("r.vault"), "--identity", cli.path("dave")])
        #expect(list.status == 0 && list.text.contains("Dave"), "\(list.text)")
    }

    // MARK: - Refusals

    @Test func test_slotAdd_refusesA1024BitKeyNamingItsSize() throws {
        let cli = try Self.setUp(keys: [("weak", 1024)]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let add = try cli.run(["slot", "add", "recipient", try Self.publicLine(cli, "weak")] + cli.unlock())
        #expect(add.status == 2 && add.stderr.contains("a 1,024-bit modulus; vaultfile takes RSA keys of 2,048 to 8,192 bits"), "\(add.stderr)")
        #expect(try cli.read("t.vault") == before)
        let open = try cli.run(["get", "db/password"] + Self.identity(cli, "weak"))
        #expect(open.status == 2 && open.stderr.contains("1,024-bit"), "\(open.stderr)")
    }

    @Test func test_identity_withAPassphraseIsRefusedSayingSo() throws {
        let cli = try Self.setUp(keys: []); defer { cli.directory.remove() }
        try SSHKeygen.make("rsa", bits: 2048, passphrase: "secret words", at: cli.path("locked"))
        #expect(try cli.run(["slot", "add", "recipient", try Self.publicLine(cli, "locked")] + cli.unlock()).status == 0)
        let open = try cli.run(["get", "db/password"] + Self.identity(cli, "locked"))
        #expect(open.status == 2 && open.stderr.contains("encrypted") && !open.stderr.contains("secret words"), "\(open.stderr)")
    }

    // MARK: - A removed ssh-rsa member

    @Test func test_set_onARemovedSSHRSAMembersOldCopyExits7() throws {
        var cli = try Self.setUp(keys: [("mallory", 2048)]); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "on"
        let bobPub = try cli.run(["keygen", "-o", cli.path("bob.id")]).text.trimmingCharacters(in: .newlines)
        @discardableResult
        func run(_ arguments: [String], on machine: String, stdin: String = "", status: Int32 = 0) throws -> CLI.Result {
            let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: ["VAULTFILE_STATE_DIR": cli.path(machine + "-state")])
            #expect(result.status == status, "\(arguments.prefix(4)): \(result.stderr)")
            return result
        }
        let mallory = Self.identity(cli, "mallory"), bob = ["--vault", cli.path("t.vault"), "--identity", cli.path("bob.id")]
        try run(["slot", "add", "recipient", "--label", "mallory", try Self.publicLine(cli, "mallory")] + cli.unlock(), on: "alice")
        try run(["slot", "add", "recipient", "--label", "bob", bobPub] + cli.unlock(), on: "alice")
        try run(["set", "k"] + mallory, on: "mallory", stdin: "by mallory")
        try cli.write("old.vault", try cli.read("t.vault"))
        try run(["get", "k"] + bob, on: "bob")
        try run(["slot", "rm", "mallory"] + cli.unlock(), on: "alice")
        try run(["get", "k"] + bob, on: "bob")
        let genuine = try cli.read("t.vault")
        // mallory writes her old copy (signed with her ssh-rsa key) well past bob's generations.
        let old = ["--vault", cli.path("old.vault"), "--identity", cli.path("mallory")]
        for index in 0..<6 { try run(["set", "k"] + old, on: "mallory", stdin: "evil\(index)") }
        try cli.write("t.vault", try cli.read("old.vault"))
        let before = try cli.read("t.vault")
        let set = try run(["set", "token"] + bob, on: "bob", stdin: "bob-secret", status: 7)
        #expect(set.stderr.contains("nothing was written"), "\(set.stderr)")
        #expect(try cli.read("t.vault") == before)
        try cli.write("t.vault", genuine)
        try run(["set", "k2"] + bob, on: "bob", stdin: "2")
    }
}
