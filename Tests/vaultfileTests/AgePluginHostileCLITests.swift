import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFormat

/// Hostile age-plugin conversations fed to `age-plugin-vaultfile` on its standard input: each is
/// refused with a message and a status, never a crash, never a file key. Standard input ends after
/// the bytes, and every run is under `timeout`, so no test waits on the plugin's own deadline.
@Suite struct AgePluginHostileCLITests {
    /// Runs the plugin (through its link) on `input`, without an agent, with the vault's password in reach.
    static func plugin(_ cli: CLI, _ input: [UInt8]) throws -> CLI.Result {
        try cli.run(["10", cli.path("bin/age-plugin-vaultfile"), "--age-plugin=identity-v1"], stdin: input,
                    extra: ["VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw"), "VAULTFILE_NO_AGENT": "1"],
                    executable: "/usr/bin/timeout")
    }

    /// The plugin identity line of the lent vault.
    static func line(_ cli: CLI) throws -> String {
        String(String(decoding: try cli.read("id.txt"), as: UTF8.self).split(separator: "\n").last!)
    }

    /// Unpadded base64, as age writes it.
    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "") }

    /// An X25519 stanza of the right shape (it opens for nobody).
    static let x25519 = AgeStanza(type: "X25519", arguments: [base64([UInt8](repeating: 9, count: 32))],
                                  body: [UInt8](repeating: 1, count: 32))

    @Test func test_agePlugin_refusesBrokenFramingWithAMessage() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let cases: [(input: String, status: Int32, says: String)] = [
            ("hello\n\n", 2, "at least one argument"),
            ("-> add-identity  x\n\n", 2, "argument is empty"),
            ("-> add-identity x\nnot base64!\n", 2, "canonical"),
            ("-> add-identity x\n" + String(repeating: "A", count: 65) + "\n", 2, "longer than 64"),
            ("-> recipient-stanza 1 X25519 a\n\n", 2, "indices are ordered"),
            ("-> recipient-stanza 01 X25519 a\n\n", 2, "decimal number"),
            ("-> add-identity a b\n\n", 2, "one identity"),
            ("-> done extra\n\n", 2, "no argument"),
            ("-> add-identity x\n\n", 2, "closed"),
            ("", 2, "closed"),
        ]
        for item in cases {
            let result = try Self.plugin(cli, Array(item.input.utf8))
            #expect(result.status == item.status && result.stderr.contains(item.says) && result.stdout.isEmpty, "\(item.input): \(result.stderr)")
        }
    }

    @Test func test_agePlugin_refusesWhatPassesItsLimits() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let many = String(repeating: "-> grease\n\n", count: 65) + "-> done\n\n"
        let tooMany = try Self.plugin(cli, Array(many.utf8))
        #expect(tooMany.status == 6 && tooMany.stderr.contains("more than 64 stanzas"), "\(tooMany.stderr)")
        let longLine = try Self.plugin(cli, Array(("-> " + String(repeating: "a", count: 5000) + "\n\n").utf8))
        #expect(longLine.status == 6 && longLine.stderr.contains("longer than 4096"), "\(longLine.stderr)")
        let body = String(repeating: String(repeating: "A", count: 64) + "\n", count: 1400) + "\n"
        let longBody = try Self.plugin(cli, Array(("-> grease\n" + body).utf8))
        #expect(longBody.status == 6 && longBody.stderr.contains("body is longer"), "\(longBody.stderr)")
        // 1 MiB in one phase, in lines each within the limits.
        let flood = String(repeating: "-> grease " + String(repeating: "b", count: 4000) + "\n\n", count: 300)
        let flooded = try Self.plugin(cli, Array(flood.utf8))
        #expect(flooded.status == 6, "\(flooded.stderr)")
    }

    @Test func test_agePlugin_aMalformedKnownStanzaRefusesItsFileWithoutUnwrapping() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let shortBody = AgeStanza(type: "X25519", arguments: Self.x25519.arguments, body: [1, 2, 3])
        let twoArguments = AgeStanza(type: "X25519", arguments: Self.x25519.arguments + ["x"], body: Self.x25519.body)
        let mlkemShort = AgeStanza(type: "mlkem768x25519", arguments: ["AAAA"], body: Self.x25519.body)
        for bad in [shortBody, twoArguments, mlkemShort] {
            let input = AgePluginIdentityRequest.clientMessages(identities: [try Self.line(cli)], files: [[Self.x25519, bad]])
            let result = try Self.plugin(cli, input)
            let text = result.text
            // The plugin says the file is refused, by its index alone, and asks for an answer (stdin has ended).
            #expect(text.hasPrefix("-> error internal\n") && !text.contains("file-key") && !text.contains("stanza 0 1"), "\(text) \(result.stderr)")
        }
    }

    @Test func test_agePlugin_skipsFilesWithNothingForItAndAnUnknownIdentityStopsAll() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        // A well-formed post-quantum stanza is someone else's: nothing is said, nothing opened.
        let mlkem = AgeStanza(type: "mlkem768x25519", arguments: [Self.base64([UInt8](repeating: 3, count: 1120))],
                              body: [UInt8](repeating: 1, count: 32))
        let other = try Self.plugin(cli, AgePluginIdentityRequest.clientMessages(identities: [try Self.line(cli)], files: [[mlkem], [AgeStanza(type: "scrypt", arguments: ["x", "10"], body: [])]]))
        #expect(other.status == 0 && other.text == "-> done\n\n", "\(other.text) \(other.stderr)")
        // An identity that is not one: `error identity 1`, and no file key for the good one either.
        let input = AgePluginIdentityRequest.clientMessages(identities: [try Self.line(cli), "AGE-PLUGIN-VAULTFILE-1QQQQQQ"], files: [[Self.x25519]])
        let bad = try Self.plugin(cli, input + Array("-> ok\n\n".utf8))
        #expect(bad.status == 0 && bad.text.hasPrefix("-> error identity 1\n") && bad.text.hasSuffix("-> done\n\n") && !bad.text.contains("file-key"),
                "\(bad.text) \(bad.stderr)")
    }
}
