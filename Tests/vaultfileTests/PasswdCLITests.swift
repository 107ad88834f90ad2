import Foundation
import TestSupport
import Testing

/// `vaultfile passwd` on a terminal: the old password is checked before the new one is asked for.
/// (Rotation and the vault id are in CLITests.)
@Suite struct PasswdCLITests {
    /// Runs `vaultfile arguments…` on a pseudo-terminal with nothing typed, killed after
    /// `seconds`: a command that waits at a prompt ends with status 124 instead of hanging the test.
    /// (`--foreground` keeps it in the terminal's foreground group, where a prompt is not stopped.)
    private func onTerminal(_ cli: CLI, _ arguments: [String], seconds: Int = 20) throws -> CLI.Result {
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = (["timeout", "--foreground", "-k", "5", String(seconds), CLI.binary] + arguments).map(quoted).joined(separator: " ")
        return try cli.shell("script -q -e -c \(quoted(command)) /dev/null </dev/null")
    }

    @Test func test_passwd_wrongOldPasswordFailsBeforeTheNewOneIsAsked() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        try cli.write("wrong", Array("wrong".utf8))
        let session = try onTerminal(cli, ["passwd", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")])
        #expect(session.status == 3, "\(session.text)")
        #expect(!session.text.contains("New password"), "\(session.text)")
    }

    @Test func test_passwd_asksForTheNewPasswordOnceTheOldOneOpens() throws {
        let cli = try CLI.withEntriesSet(["k": "v"]); defer { cli.directory.remove() }
        let session = try cli.interactive(["passwd"] + cli.unlock(),
                                          answers: [("New password for", "n3w-pw"), ("Repeat the new password: ", "n3w-pw")])
        #expect(session.status == 0, "\(session.screen)")
        try cli.write("new", Array("n3w-pw".utf8))
        #expect(try cli.run(["get", "k", "--vault", cli.path("t.vault"), "--password-file", cli.path("new")]).text == "v")
    }
}
