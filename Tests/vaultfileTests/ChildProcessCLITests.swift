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

    // MARK: - Limits and signal dispositions of children

    @Test(.disabled(if: HardeningCLITests.underThreadSanitizer, "ThreadSanitizer's runtime sets its own core-dump limit"))
    func test_exec_childGetsTheCallersCoreLimitAndSignalDispositions() throws {
        let cli = try vaultWith(["a": "1"]); defer { cli.directory.remove() }
        // A definite hard limit when the caller may set one, and a soft limit below it.
        let probe = #"echo "$(ulimit -H -c) $(ulimit -S -c)"; grep -E '^Sig(Ign|Blk)' /proc/self/status"#
        let script = """
            if [ "$(ulimit -H -c)" = unlimited ]; then ulimit -H -c 5000; fi
            if [ "$(ulimit -H -c)" -ge 100 ]; then ulimit -S -c 100; fi
            \(probe)
            echo ---
            "$VF" exec --vault t.vault --password-file pw -- sh -c '\(probe.replacingOccurrences(of: "'", with: "'\\''"))'
            """
        let result = try cli.shell(script)
        #expect(result.status == 0, "\(result.stderr)")
        let halves = result.text.components(separatedBy: "---\n")
        try #require(halves.count == 2, "\(result.text)")
        let caller = halves[0].split(separator: "\n"), child = halves[1].split(separator: "\n")
        #expect(child.first == caller.first, "core limits (hard soft): caller \(caller.first ?? "?"), child \(child.first ?? "?")")
        // Signals 1-31 (glibc's posix_spawn leaves its own real-time signals 32 and 33 ignored).
        func classic(_ line: Substring?) -> UInt64? {
            line.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }.map { $0 & 0x7FFF_FFFF }
        }
        for (index, name) in ["SigBlk", "SigIgn"].enumerated() {
            let mine = caller.dropFirst().first { $0.hasPrefix(name) }, theirs = child.dropFirst().first { $0.hasPrefix(name) }
            #expect(classic(mine) != nil && classic(mine) == classic(theirs), "\(name): caller \(mine ?? "?"), child \(theirs ?? "?")")
            if index == 1 { #expect((classic(theirs) ?? 1) & (1 << (SIGXFSZ - 1)) == 0, "SIGXFSZ is ignored in the child") }
        }
    }
}
