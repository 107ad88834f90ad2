import Foundation
import TestSupport
import Testing

/// What `slot add recipient`, `slot add recipients-file` and `init --recipient` say about a key
/// they refuse: which key and why, in vaultfile's words, with the bad-input status (2); never a
/// raw error name such as `Error: lowOrderPoint` with exit 1 ("not found"), issue 39 item 9.
@Suite struct RecipientErrorsCLITests {
    /// The all-zero X25519 point, written as an age recipient: a low-order point.
    static let lowOrder = "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq5cu47z"
    /// A valid recipient (the age specification's).
    static let valid = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
    /// An ssh-ed25519 key whose point has small order (the identity point).
    static let smallOrderSSH = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA small@x"

    /// Checks the refusal's status and words, and that nothing raw leaked.
    private func expectRefused(_ result: CLI.Result, saying words: [String], _ context: String) {
        #expect(result.status == 2, "\(context): \(result.stderr)")
        #expect(result.stderr.hasPrefix("vaultfile: error: "), "\(context): \(result.stderr)")
        for word in words { #expect(result.stderr.contains(word), "\(context): '\(result.stderr)' lacks '\(word)'") }
        #expect(!result.stderr.contains("Error:") && !result.stderr.contains("lowOrderPoint"), "\(context): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    // MARK: - A low-order age recipient

    @Test func test_slotAddAndInit_refuseALowOrderRecipientNamingItWithStatus2() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let before = try cli.read("t.vault")
        let why = ["the age recipient \(Self.lowOrder) is a low-order X25519 point", "would open for anyone"]
        expectRefused(try cli.run(["slot", "add", "recipient", Self.lowOrder] + cli.unlock()), saying: why, "slot add recipient")
        try cli.write("recipients.txt", Array("# the team\n\(Self.valid)\n\(Self.lowOrder)\n".utf8))
        expectRefused(try cli.run(["slot", "add", "recipients-file", cli.path("recipients.txt")] + cli.unlock()),
                      saying: [cli.path("recipients.txt") + ", line 3: "] + why, "slot add recipients-file")
        #expect(try cli.read("t.vault") == before, "a refused recipient changed the vault")
        expectRefused(try cli.run(["init", "--vault", cli.path("new.vault"), "--recipient", Self.lowOrder]), saying: why, "init --recipient")
        expectRefused(try cli.run(["init", "--vault", cli.path("new.vault"), "--recipient", Self.valid, "--recipient", Self.lowOrder]),
                      saying: ["--recipient number 2: "] + why, "init with two recipients")
        #expect(!FileManager.default.fileExists(atPath: cli.path("new.vault")), "init made a vault anyway")
    }

    // MARK: - The rest of the family

    @Test func test_recipientErrors_sayWhichKeyAndWhyWithStatus2() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let cases: [(recipient: String, says: String)] = [
            ("age1qqqq", "not an age recipient"),
            (String(Self.valid.dropLast()) + "q", "fails its checksum"),
            (Self.valid.uppercased(), "(lower case)"),
            // An ssh-rsa key cut after its exponent (ssh-rsa keys are taken since format 1.4).
            ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== me@host", "the ssh-rsa key's numbers are truncated"),
            ("ssh-dss AAAAB3NzaC1kc3M= me@host", "'ssh-dss' keys are not supported"),
            (Self.smallOrderSSH, "not a valid Ed25519 public key (not on the curve, or of small order)"),
            ("ssh-ed25519 !!!", "not valid base64"),
        ]
        for item in cases {
            expectRefused(try cli.run(["slot", "add", "recipient", item.recipient] + cli.unlock()), saying: [item.says], item.recipient)
            expectRefused(try cli.run(["init", "--vault", cli.path("n.vault"), "--recipient", Self.valid, "--recipient", item.recipient]),
                          saying: ["--recipient number 2: ", item.says], "init: \(item.recipient)")
        }
    }
}
