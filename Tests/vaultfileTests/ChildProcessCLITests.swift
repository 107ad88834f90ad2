import Foundation
import TestSupport
import Testing

/// What child processes get, and what a killed `edit` leaves, through the real binary: the private
/// folder on signals and after SIGKILL, the environment and descriptors of `exec`'s command, the
/// editor, the password command and git, their limits and signal dispositions; and messages that
/// quote such input without letting its control characters reach the terminal.
@Suite struct ChildProcessCLITests {
    // MARK: - Helpers

    /// A vault holding `entries`, opened with the password file `pw`.
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: Array(value.utf8))
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    // MARK: - Messages

    @Test func test_messages_escapeControlCharactersFromInput() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        try cli.write("script", Array("get \"a\u{1B}[31mb\"\n".utf8))
        let batch = try cli.run(["batch", "--script", cli.path("script")] + cli.unlock())
        #expect(batch.status == 1)
        #expect(batch.stderr.contains("a\\x1B[31mb") && !batch.stderr.contains("\u{1B}"), "\(batch.stderr)")
        let dotenv = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: Array("A\u{07}B=1\n".utf8))
        #expect(dotenv.status == 2)
        #expect(dotenv.stderr.contains("'A\\x07B'") && !dotenv.stderr.contains("\u{07}"), "\(dotenv.stderr)")
        // A newline, a tab, DEL, a C1 control and a right-to-left override inside a name stay inside one line.
        try cli.write("script", Array("get \"x\\ny\\tz\u{7F}\u{9B}\u{202E}w\"\n".utf8))
        let hidden = try cli.run(["batch", "--script", cli.path("script")] + cli.unlock())
        #expect(hidden.stderr.contains("x\\x0Ay\\x09z\\x7F\\u{009B}\\u{202E}w"), "\(hidden.stderr)")
        #expect(hidden.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("vaultfile: ") }, "\(hidden.stderr)")
    }
}
