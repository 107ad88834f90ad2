import Foundation
import TestSupport
import Testing
import VaultFormat

/// The cap on identities read by one command, across every source (the review found two
/// 13,000-line identity files crashing the process: each identity holds guarded locked memory).
@Suite struct IdentityLimitCLITests {
    /// An identity file of `count` copies of one X25519 identity (each line is an identity to read).
    static func file(_ identity: AgeIdentity, count: Int) -> Data {
        Data(String(repeating: identity.encodedSecretKey() + "\n", count: count).utf8)
    }

    @Test func test_identities_underTheCapOpenAndPastItAcrossFilesExit6BeforeReading() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let identity = AgeIdentity.generate()
        try DefaultIdentityCLITests.recipientVault(cli, "r.vault", recipient: identity.recipient.description)
        try cli.write("a.txt", Array(Self.file(identity, count: 600)))
        try cli.write("b.txt", Array(Self.file(identity, count: 600)))
        let one = try cli.run(["ls", "--vault", cli.path("r.vault"), "--identity", cli.path("a.txt")])
        #expect(one.status == 0, "\(one.stderr)")
        let two = try cli.run(["ls", "--vault", cli.path("r.vault"), "--identity", cli.path("a.txt"), "--identity", cli.path("b.txt")])
        #expect(two.status == 6, "\(two.stderr)")
        #expect(two.stderr.contains("b.txt holds 600 identities") && two.stderr.contains("424 left of the 1024"), "\(two.stderr)")
        #expect(!two.stderr.contains("AGE-SECRET-KEY"))
    }

    @Test func test_defaultIdentity_pastTheCapIsSkippedWithAWarning() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let identity = AgeIdentity.generate()
        try DefaultIdentityCLITests.recipientVault(cli, "r.vault", recipient: identity.recipient.description)
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", Array(Self.file(identity, count: 1_025)))
        let listed = try cli.run(["ls", "--vault", cli.path("r.vault")])
        #expect(listed.status == 3 && listed.stderr.contains("holds 1025 identities") && listed.stderr.contains("skipped"), "\(listed.stderr)")
    }

    @Test func test_keyFile_over1MiBNamesTheKeyFileLimitNotAValuesOne() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("big.txt", [UInt8](repeating: 0x23, count: (1 << 20) + 1))
        let refused = try cli.run(["ls", "--vault", cli.path("x.vault"), "--identity", cli.path("big.txt")])
        #expect(refused.status == 6 && refused.stderr.contains("identity, recipients or recovery-code file"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("largest value a vault holds"))
    }
}
