import Foundation
import TestSupport
import Testing
import VaultFormat

/// Post-quantum keys through the binary (issue 41): `keygen --pq`, `age1pq1…` slots, identities
/// from --identity and the default identity file, `info`'s wording, age's no-mixing rule
/// (`--allow-classical`, `share`), signed vaults written only through a delegation, and age
/// files to and from post-quantum keys (`share`, `receive`, the CCTV vectors).
@Suite struct PostQuantumCLITests {
    /// `keygen --pq -o NAME`: the recipient it prints.
    static func pqKey(_ cli: CLI, _ name: String) throws -> String {
        let made = try cli.run(["keygen", "--pq", "-o", cli.path(name)])
        #expect(made.status == 0, "\(made.stderr)")
        return String(decoding: made.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    static func info(_ cli: CLI, _ name: String = "t.vault") throws -> String {
        try cli.run(["info", "--vault", cli.path(name)]).text
    }

    // MARK: - keygen --pq

    @Test func test_keygen_pqWritesAnAgeKeygenDashPQFile() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.pqKey(cli, "keys/pq.txt")
        #expect(recipient.hasPrefix("age1pq1") && recipient.count == 1_959)
        let lines = String(decoding: try cli.read("keys/pq.txt"), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines[0].hasPrefix("# created: ") && lines[1] == "# public key: \(recipient)")
        let parsed = try AgePQIdentity(parsing: lines[2])
        #expect(lines[2].hasPrefix("AGE-SECRET-KEY-PQ-1") && parsed.recipient.description == recipient)
        #expect(try FileManager.default.attributesOfItem(atPath: cli.path("keys/pq.txt"))[.posixPermissions] as? Int == 0o600)
        let printed = try cli.run(["keygen", "--pq"])
        #expect(printed.status == 0 && String(decoding: printed.stdout, as: UTF8.self).contains("\nAGE-SECRET-KEY-PQ-1"))
        #expect(printed.stderr.contains("Public key: age1pq1"))
        #expect(try cli.run(["keygen", "--pq", "--keyfile", cli.path("kf")]).status == 64)
    }

    // MARK: - Slots and identities

    @Test func test_slotAdd_aPostQuantumRecipientOpensWithItsIdentityAndInfoSaysAgainstOutsiders() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let recipient = try Self.pqKey(cli, "pq.txt")
        let added = try cli.run(["slot", "add", "recipient", recipient, "--label", "quantum"] + cli.unlock())
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr.contains("format 1.4"))
        let got = try cli.run(["get", "db", "--vault", cli.path("t.vault"), "--identity", cli.path("pq.txt")])
        #expect(got.status == 0 && got.stdout == bytes("secret"), "\(got.stderr)")
        let info = try Self.info(cli)
        #expect(info.contains("mlkem768x25519") && info.contains("post-quantum against outsiders"), "\(info)")
        let listed = try cli.run(["slot", "list"] + cli.unlock()).text
        #expect(listed.contains("quantum") && listed.contains("mlkem768x25519"), "\(listed)")
    }

    @Test func test_slotAdd_ofAClassicalKeyToAPostQuantumVaultNeedsAllowClassical() throws {
        let cli = try CLI.withVault(["db": "secret"])
        let recipient = try Self.pqKey(cli, "pq.txt")
        #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock()).status == 0)
        let classical = AgeIdentity.generate().recipient.description
        let refused = try cli.run(["slot", "add", "recipient", classical] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("--allow-classical") && refused.stderr.contains("post-quantum"), "\(refused.stderr)")
        #expect(try cli.run(["slot", "list"] + cli.unlock()).text.split(separator: "\n").filter { $0.contains("recipient") }.count == 0)
        let allowed = try cli.run(["slot", "add", "recipient", classical, "--allow-classical"] + cli.unlock())
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let after = try Self.info(cli)
        #expect(!after.contains("post-quantum"), "\(after)")
    }

    @Test func test_init_ofPostQuantumRecipientsOnlyIsPostQuantumAndTheDefaultIdentityOpensIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.pqKey(cli, "pq.txt")
        let made = try cli.run(["init", "--vault", cli.path("q.vault"), "--recipient", recipient])
        #expect(made.status == 0, "\(made.stderr)")
        let info = try Self.info(cli, "q.vault")
        #expect(info.contains("post-quantum") && !info.contains("against outsiders"), "\(info)")
        let json = try jsonObject(try cli.run(["info", "--json", "--vault", cli.path("q.vault")]).stdout)
        #expect(json["post_quantum"] as? String == "post-quantum")
        #expect(try cli.run(["set", "a", "--vault", cli.path("q.vault"), "--identity", cli.path("pq.txt")], stdin: bytes("v")).status == 0)
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", try cli.read("pq.txt"))
        let got = try cli.run(["get", "a", "--vault", cli.path("q.vault")])
        #expect(got.status == 0 && got.stdout == bytes("v"), "\(got.stderr)")
    }

    @Test func test_set_inASignedVaultOpenedByAPostQuantumSlotIsRefusedAndTheSignerWrites() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.pqKey(cli, "pq.txt")
        #expect(try cli.run(["keygen", "--keyfile", cli.path("kf")]).status == 0)
        let made = try cli.run(["init", "--vault", cli.path("s.vault"), "--recipient", recipient, "--with-keyfile", cli.path("kf")])
        #expect(made.status == 0 && made.stderr.contains("signed"), "\(made.stderr)")
        let refused = try cli.run(["set", "a", "--vault", cli.path("s.vault"), "--identity", cli.path("pq.txt"), "--no-agent"], stdin: bytes("v"))
        #expect(refused.status == 2 && refused.stderr.contains("post-quantum") && refused.stderr.contains("vaultfile unlock"), "\(refused.stderr)")
        #expect(try cli.run(["set", "a", "--vault", cli.path("s.vault"), "--keyfile", cli.path("kf"), "--no-agent"], stdin: bytes("v")).status == 0)
        let read = try cli.run(["get", "a", "--vault", cli.path("s.vault"), "--identity", cli.path("pq.txt"), "--no-agent"])
        #expect(read.status == 0 && read.stdout == bytes("v"), "\(read.stderr)")
    }

    // MARK: - age files

    @Test func test_share_toAPostQuantumRecipientIsReadBackByReceiveAndRefusesMixing() throws {
        let cli = try CLI.withVault(["db": "handed over"])
        let recipient = try Self.pqKey(cli, "pq.txt")
        let shared = try cli.run(["share", "db", "--recipient", recipient, "--out", cli.path("out.age")] + cli.unlock())
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try cli.read("out.age").starts(with: bytes("age-encryption.org/v1\n-> mlkem768x25519 ")))
        let received = try cli.run(["receive", "copy", cli.path("out.age"), "--identity", cli.path("pq.txt")] + cli.unlock())
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try cli.run(["get", "copy"] + cli.unlock()).stdout == bytes("handed over"))
        let classical = AgeIdentity.generate().recipient.description
        let mixed = try cli.run(["share", "db", "--recipient", recipient, "--recipient", classical, "--out", cli.path("mixed.age")] + cli.unlock())
        #expect(mixed.status != 0 && mixed.stderr.contains("post-quantum") && !FileManager.default.fileExists(atPath: cli.path("mixed.age")))
    }

    @Test(arguments: [("hybrid", true), ("hybrid_grease", true), ("hybrid_bad_tag", false), ("hybrid_low_order", false), ("hybrid_long_file_key", false)])
    func test_receive_ofACCTVHybridVectorStoresOnlyWhatOpens(vector: String, opens: Bool) throws {
        let cli = try CLI.withVault([:])
        let identity = "AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG"
        try cli.write("pq.txt", bytes(identity + "\n"))
        try cli.write("in.age", try ReceiveCLITests.vectorFile(vector))
        let result = try cli.run(["receive", "v", cli.path("in.age"), "--identity", cli.path("pq.txt")] + cli.unlock())
        #expect((result.status == 0) == opens, "\(vector): \(result.stderr)")
        let got = try cli.run(["get", "v"] + cli.unlock())
        if opens {
            let header = String(decoding: try Data(contentsOf: ReceiveCLITests.vectors.appendingPathComponent(vector)), as: UTF8.self)
            let expected = header.split(separator: "\n").first { $0.hasPrefix("payload: ") }.map { String($0.dropFirst(9)) }
            let sum = try ChildProcess(executable: "/usr/bin/sha256sum", arguments: [], environment: ["PATH": "/usr/bin:/bin"], directory: "/",
                                       stdin: got.stdout).finish()
            #expect(String(decoding: sum.stdout.prefix(64), as: UTF8.self) == expected, "\(vector)")
        } else {
            #expect(got.status == 1, "\(vector): nothing stored")
        }
    }
}
