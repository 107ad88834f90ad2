import Foundation
import TestSupport
import Testing

/// The tests that drive real outside tools: git (GitCLITests.swift), a terminal through
/// util-linux `script`, groff. `make test` runs them after the main suite and times them
/// apart (`swift test --skip ExternalTools`, then `--filter ExternalTools`): a test that needs
/// an outside tool goes in an `extension ExternalTools`, so that its name carries the group.
@Suite enum ExternalTools {}

extension ExternalTools {
    /// Prompts on a real (pseudo-)terminal: the password is asked twice, never echoed.
    @Suite struct TerminalPromptTests {
        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_init_asksTwiceWithoutEcho() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            let session = try cli.interactive(["init", "--vault", cli.path("t.vault")] + CLI.fastKDF, answers: [
                ("New password for", "typed-secret-123"),
                ("Repeat the password", "typed-secret-123"),
            ])
            #expect(session.status == 0, "\(session.screen)")
            #expect(!session.screen.contains("typed-secret-123"), "the password was echoed: \(session.screen)")
            try cli.write("pw", Array("typed-secret-123".utf8))
            #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
        }

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_init_refusesTwoDifferentPasswords() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            let session = try cli.interactive(["init", "--vault", cli.path("t.vault")] + CLI.fastKDF, answers: [
                ("New password for", "first"),
                ("Repeat the password", "second"),
            ])
            #expect(session.status == 2)
            #expect(session.screen.contains("the two passwords differ"))
            #expect(!FileManager.default.fileExists(atPath: cli.path("t.vault")))
        }

        @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
        func test_get_promptsForThePasswordOnTheTerminal() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault(password: "tty pw")
            #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("value-on-tty".utf8)).status == 0)
            let session = try cli.interactive(["get", "k", "--vault", cli.path("t.vault")], answers: [("Password for", "tty pw")])
            #expect(session.status == 0, "\(session.screen)")
            #expect(session.screen.contains("value-on-tty"))
            #expect(!session.screen.contains("tty pw"))
        }
    }

    /// The man page through groff.
    @Suite struct ManPageTests {
        @Test func test_manPage_rendersWithoutWarnings() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            let page = ProjectPaths.root.appendingPathComponent("man/vaultfile.1").path
            let result = try cli.shell("groff -ww -man -z '\(page)' 2>&1")
            #expect(result.status == 0)
            #expect(result.text.isEmpty, "groff warnings: \(result.text)")
        }
    }
}
