import Foundation
import TestSupport
import Testing
import VaultFormat

/// What the user sees around the plugin: its warnings reach age (which hides a plugin's standard
/// error) as `msg`, recipient-v1 is refused with an `error` age shows, and the verbs that change a
/// lent entry behind the lend (`set` of its value, `restore` of a revision still lent) say so.
@Suite struct AgePluginMessagesCLITests {
    // MARK: - Success

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_anOlderCopysWarningReachesAgeAsAMessage() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        try cli.write("old.vault", try cli.read("t.vault"))
        #expect(try cli.run(["set", "other"] + cli.unlock(), stdin: Array("y".utf8)).status == 0)
        let opened = try AgePluginCLITests.ageDecrypt(cli, extra: ["VAULTFILE_PATH": cli.path("old.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
        #expect(opened.stderr.contains("age-plugin-vaultfile: warning:") && opened.stderr.contains("is an older copy"), "\(opened.stderr)")
    }

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_restore_ofARevisionStillLentSaysItsLinesWorkAgain() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        #expect(try cli.run(["age-identity", "age/key", "--unlend"] + cli.unlock()).status == 0)
        let restored = try cli.run(["restore", "age/key", "--revision", "1"] + cli.unlock())
        #expect(restored.status == 0 && restored.stderr.contains("brings back its age-lent field"), "\(restored.stderr)")
        // The retired line opens again, as the man page says.
        let opened = try AgePluginCLITests.ageDecrypt(cli, extra: ["VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
        // Restoring a revision that was not lent says nothing of lending.
        let back = try cli.run(["restore", "age/key", "--revision", "1"] + cli.unlock())
        #expect(back.status == 0 && !back.stderr.contains("age-lent"), "\(back.stderr)")
    }

    // MARK: - Failure

    @Test func test_agePlugin_recipientV1AnswersWithAnErrorTheClientShows() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let input = "-> add-recipient age1vaultfile1qqqq\n\n-> wrap-file-key\nAAAAAAAAAAAAAAAAAAAAAA\n-> done\n\n-> ok\n\n"
        let result = try cli.run(["10", cli.path("bin/age-plugin-vaultfile"), "--age-plugin=recipient-v1"], stdin: Array(input.utf8),
                                 executable: "/usr/bin/timeout")
        #expect(result.status == 64 && result.text.hasPrefix("-> error internal\n") && result.text.hasSuffix("-> done\n\n"), "\(result.text)")
        // The body: 64-column lines up to the first shorter one.
        var body = ""
        for line in result.text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            body += line
            if line.count < 64 { break }
        }
        let padded = body + String(repeating: "=", count: (4 - body.count % 4) % 4)
        let message = Data(base64Encoded: padded).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(message.contains("only decrypts") && message.contains("age-identity NAME --recipient"), "\(message)")
    }

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_ageEncryptingToAVaultfileRecipientShowsTheHint() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let recipient = Bech32.encode(humanReadablePart: "age1vaultfile", data: [1, 2, 3, 4])
        let refused = try cli.run(["10", AgePluginCLITests.age, "-r", recipient], stdin: Array("x".utf8),
                                  extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"], executable: "/usr/bin/timeout")
        #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("age-identity NAME --recipient"), "\(refused.stderr)")
    }

    // MARK: - Edge

    @Test func test_set_ofTheValueOfALentEntryWarnsThatItStaysLent() throws {
        let cli = try AgePluginCLITests.lentVault(); defer { cli.directory.remove() }
        let replaced = try cli.run(["set", "age/key"] + cli.unlock(), stdin: Array((AgeIdentity.generate().encodedSecretKey() + "\n").utf8))
        #expect(replaced.status == 0 && replaced.stderr.contains("'age/key' stays lent to age"), "\(replaced.stderr)")
        // A field of it, or another entry, is no replacement of the key.
        let field = try cli.run(["set", "age/key", "--field", "note"] + cli.unlock(), stdin: Array("x".utf8))
        #expect(field.status == 0 && !field.stderr.contains("stays lent"), "\(field.stderr)")
        let other = try cli.run(["set", "other"] + cli.unlock(), stdin: Array("y".utf8))
        #expect(other.status == 0 && !other.stderr.contains("stays lent"), "\(other.stderr)")
    }
}
