import Foundation
import TestSupport
import Testing

extension ExternalTools {
    /// The password prompt on a real (pseudo-)terminal, through util-linux `script`: three tries,
    /// as sudo, gpg and ssh give, and a hint after typed passwords that lists no file or descriptor sources.
    @Suite struct PasswordPromptTests {
        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_get_asksAgainAfterAWrongTypedPassword() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault(password: "tty pw")
            #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("value-on-tty".utf8)).status == 0)
            let session = try cli.interactive(["get", "k", "--vault", cli.path("t.vault")], answers: [
                ("Password for", "first wrong"), ("Password for", "second wrong"), ("Password for", "tty pw"),
            ])
            #expect(session.status == 0, "\(session.screen)")
            #expect(session.screen.contains("value-on-tty"), "\(session.screen)")
            #expect(session.screen.components(separatedBy: "try again (").count == 3, "two retries announced: \(session.screen)")
            let path = cli.path("t.vault")
            let second = "Sorry, that password does not open \(path); try again (2 of 3)."
            let third = "Sorry, that password does not open \(path); try again (3 of 3)."
            let secondAt = try #require(session.screen.range(of: second), "\(session.screen)")
            let thirdAt = try #require(session.screen.range(of: third), "\(session.screen)")
            #expect(secondAt.upperBound <= thirdAt.lowerBound, "(2 of 3) comes before (3 of 3): \(session.screen)")
            #expect(!session.screen.contains("(4 of 3)") && !session.screen.contains("(1 of 3)"), "\(session.screen)")
            #expect(!session.screen.contains("wrong password"), "\(session.screen)")
        }

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_get_givesUpAfterThreeWrongTypedPasswordsWithATypingHint() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault(password: "tty pw")
            let session = try cli.interactive(["get", "k", "--vault", cli.path("t.vault")], answers: [
                ("Password for", "one"), ("Password for", "two"), ("Password for", "three"),
            ])
            #expect(session.status == 3, "\(session.screen)")
            let path = cli.path("t.vault")
            for n in 2...3 {
                #expect(session.screen.contains("Sorry, that password does not open \(path); try again (\(n) of 3)."), "\(session.screen)")
            }
            #expect(!session.screen.contains("(4 of 3)"), "no fourth try announced: \(session.screen)")
            #expect(session.screen.contains("wrong password 3 times") && session.screen.contains("Caps Lock"), "\(session.screen)")
            for source in ["--password-file", "--password-fd", "VAULTFILE_PASSWORD"] {
                #expect(!session.screen.contains(source), "the hint after typed passwords names \(source): \(session.screen)")
            }
        }

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_get_triesAPasswordFileOnceEvenOnATerminal() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault(password: "tty pw")
            try cli.write("wrong", Array("nope".utf8))
            let session = try cli.interactive(["get", "k", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")], answers: [])
            #expect(session.status == 3, "\(session.screen)")
            #expect(!session.screen.contains("Password for") && session.screen.contains("--password-file"), "\(session.screen)")
        }
    }
}
