import Foundation
import TestSupport
import Testing
import VaultFormat

/// What the plugin refuses before any agent request: a traced or injected process (the vault's
/// file key would reach the tracer), forged lines whose names no vault entry may have, and names
/// no line can carry. Every run is under `timeout`; the agent a test starts is stopped on the way out.
@Suite struct AgePluginObserverCLITests {
    static let strace = "/usr/bin/strace"
    /// strace installed and allowed to trace here (some containers forbid ptrace).
    static let canTrace = FileManager.default.isExecutableFile(atPath: strace)
        && (try? ChildProcess(executable: strace, arguments: ["-o", "/dev/null", "/bin/true"], environment: [:], directory: "/").finish().ending) == .exit(0)

    /// The lent vault held by an agent whose confirm command records each question in `asked` and approves.
    static func heldVault() throws -> CLI {
        let cli = try AgePluginCLITests.lentVault()
        let record = "echo \"$VAULTFILE_CONFIRM_ACTION|$VAULTFILE_CONFIRM_ENTRY\" >> \(cli.path("asked"))"
        #expect(try cli.run(["unlock", "--confirm-command", record] + cli.unlock()).status == 0)
        return cli
    }

    /// What the confirm command was asked ("" when never).
    static func asked(_ cli: CLI) -> String {
        (try? cli.read("asked")).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// A line of the vault of `id.txt` for `name`, with a MAC of nobody's (built by hand: the
    /// library refuses to make one for a name vaultfile does not lend).
    static func forged(_ cli: CLI, name: String) throws -> String {
        let text = String(decoding: try cli.read("id.txt"), as: UTF8.self)
        let line = try VaultfilePluginIdentity(parsing: String(text.split(separator: "\n").last!))
        return Bech32.encode(humanReadablePart: VaultfilePluginIdentity.humanReadablePart,
                             data: [1] + line.vaultID + Array(name.utf8) + [UInt8](repeating: 5, count: 16), upperCase: true)
    }

    // MARK: - Success

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_emptyLoaderVariablesDoNotStopIt() throws {
        let cli = try Self.heldVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let opened = try AgePluginCLITests.ageDecrypt(cli, extra: ["LD_PRELOAD": "", "LD_AUDIT": ""])
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
        #expect(Self.asked(cli) == "age-unwrap|age/key\n")
    }

    // MARK: - Failure

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_refusesToAskTheAgentWithLoaderVariablesSet() throws {
        let cli = try Self.heldVault(); defer { cli.stopAgent(); cli.directory.remove() }
        for (variable, value) in [("LD_PRELOAD", "/nonexistent/libspy.so"), ("LD_AUDIT", "/nonexistent/libaudit.so"),
                                  ("LD_LIBRARY_PATH", cli.path("bin")), ("GCONV_PATH", cli.path("bin"))] {
            let refused = try AgePluginCLITests.ageDecrypt(cli, extra: [variable: value])
            #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("\(variable) is set")
                    && refused.stderr.contains("neither the agent nor the vault was asked"), "\(variable): \(refused.stderr)")
        }
        #expect(Self.asked(cli).isEmpty, "the confirm command was asked: \(Self.asked(cli))")
    }

    @Test(.enabled(if: AgePluginCLITests.hasAge && canTrace, "age or strace is missing, or ptrace is not allowed here: skipped"))
    func test_agePlugin_refusesToAskTheAgentUnderATracer() throws {
        let cli = try Self.heldVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let traced = try cli.run(["10", Self.strace, "-f", "-o", "/dev/null", AgePluginCLITests.age, "-d", "-i", cli.path("id.txt"), cli.path("f.age")],
                                 extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"], executable: "/usr/bin/timeout")
        #expect(traced.status != 0 && traced.stdout.isEmpty && traced.stderr.contains("traces it"), "\(traced.stderr)")
        #expect(Self.asked(cli).isEmpty, "the confirm command was asked: \(Self.asked(cli))")
    }

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_refusesForgedNamesBeforeTheConfirmCommand() throws {
        let cli = try Self.heldVault(); defer { cli.stopAgent(); cli.directory.remove() }
        for name in ["age/key\nage-unwrap|db/prod", "a\u{1B}[2Jb", "db/\u{202E}drowssap", "a//b", "../x"] {
            try cli.write("forged.txt", Array((try Self.forged(cli, name: name) + "\n").utf8))
            let refused = try AgePluginCLITests.ageDecrypt(cli, identity: "forged.txt")
            #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("not one vaultfile lends"), "\(refused.stderr)")
        }
        #expect(Self.asked(cli).isEmpty, "the confirm command was asked: \(Self.asked(cli))")
    }

    @Test(.enabled(if: AgePluginCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_twentyForgedLinesAskTheConfirmCommandOnce() throws {
        let cli = try Self.heldVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let lines = try (0..<20).map { try Self.forged(cli, name: "forged/\($0)") }
        try cli.write("forged.txt", Array((lines.joined(separator: "\n") + "\n").utf8))
        let refused = try AgePluginCLITests.ageDecrypt(cli, identity: "forged.txt")
        #expect(refused.status != 0 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(Self.asked(cli) == "age-unwrap|forged/0\n")
    }

    // MARK: - Edge

    @Test func test_ageIdentity_refusesANameTooLongForALineBeforeAnyNote() throws {
        let identity = AgeIdentity.generate()
        let name = "k/" + String(repeating: "n", count: 598)
        let cli = try CLI.withVault([name: identity.encodedSecretKey() + "\n"]); defer { cli.directory.remove() }
        let refused = try cli.run(["age-identity", name, "--lend"] + cli.unlock())
        #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("at most 512 bytes")
                && !refused.stderr.contains("conversation") && !refused.stderr.contains("any program of yours"), "\(refused.stderr)")
        // Nothing was changed: the entry has no age-lent field.
        let field = try cli.run(["get", name, "--field", VaultfilePluginIdentity.lentField] + cli.unlock())
        #expect(field.status != 0 && field.stdout.isEmpty)
    }
}
