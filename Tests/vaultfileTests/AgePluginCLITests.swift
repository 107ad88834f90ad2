import Foundation
import TestSupport
import Testing
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

/// `age-plugin-vaultfile` driven by real age clients: Debian's age 1.1.1 and PyPI's pyrage, each
/// run under `timeout` (every wait bounded); the agent a test starts is stopped on the way out.
@Suite struct AgePluginCLITests {
    static let age = "/usr/bin/age"
    static let hasAge = FileManager.default.isExecutableFile(atPath: age)
    /// pyrage in a venv under .build (`make test-deps` installs it; skipped when absent).
    static let pyrage = ProjectPaths.root.appendingPathComponent(".build/pyrage-venv/bin/python").path
    static let hasPyrage = FileManager.default.isExecutableFile(atPath: pyrage)
        && (try? ChildProcess(executable: pyrage, arguments: ["-c", "import pyrage.plugin"], environment: [:], directory: "/").finish().ending) == .exit(0)

    /// A vault holding an age identity in `age/key`, lent; the plugin's link in `bin/`; the identity
    /// file in `id.txt`; a file for the entry's recipient in `f.age`.
    static func lentVault() throws -> CLI {
        let identity = AgeIdentity.generate()
        let cli = try CLI.withVault(["age/key": "# created: today\n# public key: \(identity.recipient)\n\(identity.encodedSecretKey())\n", "other": "x"])
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cli.path("bin/age-plugin-vaultfile"), withDestinationPath: CLI.binary)
        let lent = try cli.run(["age-identity", "age/key", "--lend"] + cli.unlock())
        #expect(lent.status == 0, "\(lent.stderr)")
        #expect(lent.text.contains("# public key: \(identity.recipient)\nAGE-PLUGIN-VAULTFILE-1"))
        try cli.write("id.txt", lent.stdout)
        let file = try Array("the secret file\n".utf8).withUnsafeBytes { try AgeFile.encrypt($0, to: [identity.recipient]) }
        try cli.write("f.age", file)
        return cli
    }

    /// `timeout 10 age -d -i id.txt f.age` with the link first on PATH.
    static func ageDecrypt(_ cli: CLI, identity: String = "id.txt", extra: [String: String] = [:]) throws -> CLI.Result {
        try cli.run(["10", age, "-d", "-i", cli.path(identity), cli.path("f.age")],
                    extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"].merging(extra) { $1 }, executable: "/usr/bin/timeout")
    }

    // MARK: - Success

    @Test(.enabled(if: hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_ageDecryptsThroughTheAgentAndItsConfirmCommand() throws {
        let cli = try Self.lentVault(); defer { cli.stopAgent(); cli.directory.remove() }
        let record = "{ echo \"$VAULTFILE_CONFIRM_ACTION|$VAULTFILE_CONFIRM_ENTRY\"; cat /proc/$VAULTFILE_CONFIRM_PID/comm; } >> \(cli.path("asked"))"
        #expect(try cli.run(["unlock", "--confirm-command", record] + cli.unlock()).status == 0)
        // The vault is found through the agent: no VAULTFILE_PATH, no password source.
        let opened = try Self.ageDecrypt(cli)
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
        #expect(String(decoding: try cli.read("asked"), as: UTF8.self) == "age-unwrap|age/key\nage\n")
    }

    @Test(.enabled(if: hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_withoutAnAgentOpensTheUsualVault() throws {
        let cli = try Self.lentVault(); defer { cli.directory.remove() }
        let opened = try Self.ageDecrypt(cli, extra: ["VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
    }

    @Test(.enabled(if: hasPyrage, "pyrage is not installed in .build/pyrage-venv (make test-deps; offline: skipped)"))
    func test_agePlugin_pyrageDecryptsThroughThePlugin() throws {
        let cli = try Self.lentVault(); defer { cli.directory.remove() }
        let script = """
            import sys, pyrage
            from pyrage import plugin
            class Callbacks:
                def display_message(self, m): pass
                def confirm(self, m, y, n): return None
                def request_public_string(self, d): return None
                def request_passphrase(self, d): return None
            line = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith("AGE-PLUGIN-")][0]
            identity = plugin.Identity.from_str(line)
            client = plugin.IdentityPluginV1(identity.plugin(), [identity], Callbacks())
            sys.stdout.buffer.write(pyrage.decrypt(open(sys.argv[2], "rb").read(), [client]))
            """
        try cli.write("client.py", Array(script.utf8))
        let opened = try cli.run(["10", Self.pyrage, cli.path("client.py"), cli.path("id.txt"), cli.path("f.age")],
                                 extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "VAULTFILE_PATH": cli.path("t.vault"),
                                         "VAULTFILE_PASSWORD_FILE": cli.path("pw")], executable: "/usr/bin/timeout")
        #expect(opened.status == 0 && opened.text == "the secret file\n", "\(opened.stderr)")
    }

    @Test func test_ageIdentity_printsTheRecipientTheRawKeyOnlyWhenAskedAndTheLineAgain() throws {
        let cli = try Self.lentVault(); defer { cli.directory.remove() }
        let recipient = try cli.run(["age-identity", "age/key", "--recipient"] + cli.unlock())
        #expect(recipient.status == 0 && recipient.text.hasPrefix("age1") && !recipient.text.contains("SECRET"))
        let raw = try cli.run(["age-identity", "age/key", "--raw"] + cli.unlock())
        #expect(raw.status == 0 && raw.text.hasPrefix("AGE-SECRET-KEY-1") && raw.text.split(separator: "\n").count == 1)
        // Lending again keeps the lend key: the line given before stays the same.
        let given = try cli.read("id.txt")
        #expect(try cli.run(["age-identity", "age/key"] + cli.unlock()).stdout == given)
        #expect(try cli.run(["age-identity", "age/key", "--lend"] + cli.unlock()).stdout == given)
    }

    // MARK: - Failure

    @Test(.enabled(if: hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_aRefusedConfirmDecryptsNothingAndTriesNoOtherSource() throws {
        let cli = try Self.lentVault(); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock", "--confirm-command", "exit 1"] + cli.unlock()).status == 0)
        // A password source in reach must not replace the refused key.
        let refused = try Self.ageDecrypt(cli, extra: ["VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("confirm command refused"), "\(refused.stderr)")
    }

    @Test(.enabled(if: hasAge, "age is not installed (apt-get install age): skipped"))
    func test_agePlugin_craftedAndRetiredLinesNameNothing() throws {
        let cli = try Self.lentVault(); defer { cli.directory.remove() }
        let environment = ["VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let text = String(decoding: try cli.read("id.txt"), as: UTF8.self)
        let line = try VaultfilePluginIdentity(parsing: String(text.split(separator: "\n").last!))
        // The same vault, the other entry, a MAC under a key of the attacker's choosing.
        let crafted = try VaultfilePluginIdentity(vaultID: line.vaultID, entry: "other", lendKey: Array(repeating: 7, count: 32))
        try cli.write("crafted.txt", Array((crafted.line + "\n").utf8))
        let refused = try Self.ageDecrypt(cli, identity: "crafted.txt", extra: environment)
        #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("names no lent entry"), "\(refused.stderr)")
        // --unlend retires the line printed before; lending again makes a new one.
        #expect(try cli.run(["age-identity", "age/key", "--unlend"] + cli.unlock()).status == 0)
        let retired = try Self.ageDecrypt(cli, extra: environment)
        #expect(retired.status != 0 && retired.stdout.isEmpty && retired.stderr.contains("names no lent entry"), "\(retired.stderr)")
        let notLent = try cli.run(["age-identity", "age/key"] + cli.unlock())
        #expect(notLent.status != 0 && notLent.stderr.contains("not lent"))
        let again = try cli.run(["age-identity", "age/key", "--lend"] + cli.unlock())
        let before = try cli.read("id.txt")
        #expect(again.status == 0 && again.stdout != before)
    }

    @Test func test_ageIdentity_refusesAnEntryThatIsNoAgeIdentityAndTwoActions() throws {
        let cli = try CLI.withVault(["db": "password123"]); defer { cli.directory.remove() }
        let refused = try cli.run(["age-identity", "db", "--lend"] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("is an age identity") && !refused.stderr.contains("password123"), "\(refused.stderr)")
        #expect(try cli.run(["age-identity", "db", "--lend", "--raw"] + cli.unlock()).status == 64)
    }

    @Test func test_agePlugin_recipientV1AndUnknownMachinesAreRefusedClearly() throws {
        let cli = try Self.lentVault(); defer { cli.directory.remove() }
        let plugin = cli.path("bin/age-plugin-vaultfile")
        let recipient = try cli.run(["--age-plugin=recipient-v1"], executable: plugin)
        #expect(recipient.status == 64 && recipient.stderr.contains("only decrypts"), "\(recipient.stderr)")
        #expect(try cli.run(["--age-plugin=identity-v9"], executable: plugin).status == 64)
        #expect(try cli.run([], executable: plugin).status == 64)
    }
}
