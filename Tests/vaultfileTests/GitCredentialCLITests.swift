import Foundation
import TestSupport
import Testing
@testable import vaultfile

/// The git credential helper through the real binary: run as the link `git-credential-vaultfile`
/// and as `vaultfile git credential`, its grammar, bad input, store and erase only with
/// --allow-write and never with a prompt. git itself drives it in GitCredentialGitCLITests.swift.
@Suite struct GitCredentialCLITests {
    /// A test folder with a vault of `entries` (name → value, fields) and `bin/` holding the links
    /// `git-credential-vaultfile` and `vaultfile` to the binary; `VAULTFILE_PATH` names the vault.
    static func helperFolder(_ entries: [String: (String, [String: String])]) throws -> CLI {
        var cli = try CLI()
        try cli.initVault()
        try cli.setEntries(entries.mapValues { $0.0 })
        for (name, (_, fields)) in entries {
            for (field, value) in fields {
                let set = try cli.run(["set", name, "--field", field] + cli.unlock(), stdin: Array(value.utf8))
                precondition(set.status == 0, set.stderr)
            }
        }
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        for link in ["git-credential-vaultfile", "vaultfile"] {
            try FileManager.default.createSymbolicLink(atPath: cli.path("bin/" + link), withDestinationPath: CLI.binary)
        }
        cli.environment = ["VAULTFILE_QUIET_WEAK_KDF": "1", "VAULTFILE_PATH": cli.path("t.vault"), "PATH": cli.path("bin") + ":/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"]
        return cli
    }

    /// The helper run through its link name with `input` on stdin.
    static func helper(_ cli: CLI, _ arguments: [String], _ input: String, extra: [String: String] = [:]) throws -> CLI.Result {
        try cli.run(arguments, stdin: Array(input.utf8), extra: extra, executable: cli.path("bin/git-credential-vaultfile"))
    }

    // MARK: - get

    @Test func test_get_answersThroughTheLinkName() throws {
        let cli = try Self.helperFolder(["git/example.com": ("s3cret", ["username": "alice"])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let result = try Self.helper(cli, ["get"], "protocol=https\nhost=example.com\n\n", extra: source)
        #expect(result.status == 0 && result.text == "username=alice\npassword=s3cret\n", "\(result.stderr)")
        // `vaultfile git credential get` is the same helper; --vault names the vault.
        let verb = try cli.run(["git", "credential", "--vault", cli.path("t.vault"), "get"], stdin: Array("protocol=https\nhost=example.com\n".utf8),
                               extra: source.merging(["VAULTFILE_PATH": "/nonexistent"]) { $1 })
        #expect(verb.status == 0 && verb.text == "username=alice\npassword=s3cret\n", "\(verb.stderr)")
    }

    @Test func test_get_withTheAgentNeedsNoSource() throws {
        let cli = try Self.helperFolder(["git/h/org": ("tok", [:])]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let result = try Self.helper(cli, ["get"], "protocol=https\nhost=h\npath=org/repo.git\nusername=bob\n")
        #expect(result.status == 0 && result.text == "password=tok\n", "\(result.stderr)")
    }

    @Test func test_get_nothingMatchedPrintsNothing() throws {
        let cli = try Self.helperFolder(["git/example.com": ("s", [:])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        for input in ["protocol=https\nhost=other.org\n", "protocol=http\nhost=example.com\n", "host=example.com\n", ""] {
            let result = try Self.helper(cli, ["get"], input, extra: source)
            #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(input): \(result.stderr)")
        }
    }

    @Test func test_get_refusesAValueThatCannotBeALine() throws {
        let cli = try Self.helperFolder(["git/h": ("two\nlines", [:])]); defer { cli.directory.remove() }
        let result = try Self.helper(cli, ["get"], "protocol=https\nhost=h\n", extra: ["VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.contains("line break"), "\(result.stderr)")
        #expect(!result.stderr.contains("two"))
    }

    // MARK: - Grammar

    /// The helper's option table (its quick reading's grammar) is what ArgumentParser declares:
    /// `[--vault PATH] [--allow-write] OPERATION`, nothing more.
    @Test func test_helper_grammarIsExactlyTheIssues() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["git", "credential", "--experimental-dump-help"])
        let root = try jsonObject(result.stdout)
        let arguments = try #require((root["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        var options: [String: String] = [:], positionals = 0
        for argument in arguments {
            let long = (argument["names"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "long" }?["name"] as? String
            if argument["kind"] as? String == "positional" { positionals += 1 } else if let long, long != "help", long != "version" { options[long] = argument["kind"] as? String }
        }
        #expect(options == ["vault": "option", "allow-write": "flag"] && positionals == 1, "\(options) \(positionals)")
        #expect(VaultfileCommand.Git.Credential.quickGrammar.options == ["vault": .option, "allow-write": .flag])
        #expect(VaultfileCommand.Git.Credential.quickGrammar.positionals == 1)
    }

    @Test func test_helper_ignoresOtherOperationsSilently() throws {
        let cli = try Self.helperFolder([:]); defer { cli.directory.remove() }
        for operation in ["capability", "frobnicate", "list"] {
            let result = try Self.helper(cli, ["--vault", "/nonexistent", operation], "protocol=https\nhost=h\n")
            #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(operation): \(result.stderr)")
        }
        // No operation, or an unknown option: a usage error.
        #expect(try Self.helper(cli, [], "").status == 64)
        #expect(try Self.helper(cli, ["--frob", "get"], "").status == 64)
    }

    @Test func test_helper_refusesBadInputWithAMessageAndNoAnswer() throws {
        let cli = try Self.helperFolder(["git/h": ("s3cret", [:])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        for input in ["protocol=https\nhost h\n", "protocol=https\nhost=h\0x\n", "protocol=https\nhost=h\n=x\n"] {
            let result = try Self.helper(cli, ["get"], input, extra: source)
            #expect(result.status == 2 && result.stdout.isEmpty && result.stderr.contains("git credential input"), "\(result.stderr)")
        }
        // A 100 MB line: the helper stops reading it after 64 KiB.
        let long = try cli.shell("head -c 100000000 /dev/zero | tr '\\0' a | \"$VF\" git credential get; echo \"status=$?\"",
                                 extra: source.merging(["VAULTFILE_PATH": cli.path("t.vault")]) { $1 })
        #expect(long.text == "status=2\n" && long.stderr.contains("longer than 65536 bytes"), "\(long.text) \(long.stderr)")
    }

    // MARK: - store and erase

    @Test func test_storeAndErase_changeNothingWithoutAllowWrite() throws {
        let cli = try Self.helperFolder(["git/h": ("old", ["username": "u"])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let before = try cli.read("t.vault")
        let store = try Self.helper(cli, ["store"], "protocol=https\nhost=h\nusername=u\npassword=new\n", extra: source)
        let erase = try Self.helper(cli, ["erase"], "protocol=https\nhost=h\nusername=u\npassword=old\n", extra: source)
        #expect(store.status == 0 && store.stderr.isEmpty && erase.status == 0 && erase.stderr.isEmpty, "\(store.stderr) \(erase.stderr)")
        #expect(try cli.read("t.vault") == before, "read-only by default")
    }

    @Test func test_storeAndErase_writeWithAllowWrite() throws {
        let cli = try Self.helperFolder(["git/h": ("old", ["username": "u"])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=h\nusername=u\npassword=new\n", extra: source).status == 0)
        #expect(try cli.run(["get", "git/h"] + cli.unlock()).text == "new")
        // The same credential again writes nothing.
        let stored = try cli.read("t.vault")
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=h\nusername=u\npassword=new\n", extra: source).status == 0)
        #expect(try cli.read("t.vault") == stored)
        // A second user gets an entry of their own; http is recorded as the entry's protocol.
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=http\nhost=h:8080\nusername=v\npassword=w\n", extra: source).status == 0)
        #expect(try cli.run(["get", "git/h:8080", "--field", "protocol"] + cli.unlock()).text == "http")
        // erase: only with the password that failed being the entry's.
        #expect(try Self.helper(cli, ["--allow-write", "erase"], "protocol=https\nhost=h\nusername=u\npassword=other\n", extra: source).status == 0)
        #expect(try cli.run(["get", "git/h"] + cli.unlock()).text == "new")
        #expect(try Self.helper(cli, ["--allow-write", "erase"], "protocol=https\nhost=h\nusername=u\npassword=new\n", extra: source).status == 0)
        #expect(try cli.run(["get", "git/h"] + cli.unlock()).status == 1)
    }

    /// Without the agent or a source, store never prompts (no terminal here; --allow-write given):
    /// it says why and the vault is unchanged.
    @Test func test_store_neverPromptsAndWritesNothingWithoutASource() throws {
        let cli = try Self.helperFolder(["git/h": ("old", ["username": "u"])]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let result = try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=h\nusername=u\npassword=new\n")
        #expect(result.status != 0 && result.stdout.isEmpty && result.stderr.contains("the vault is locked"), "\(result.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    /// Even on a terminal, store and erase never ask for the vault's password: run under a
    /// pseudo-terminal (util-linux `script`), the request from a file; a `get` of the vault there
    /// does prompt (the terminal is real). Each run is killed after a few seconds if it waits.
    @Test(.enabled(if: CLI.hasScript && FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout"),
                   "util-linux 'script' or timeout is absent: terminal prompt tests skipped"))
    func test_store_neverPromptsOnATerminal() throws {
        let cli = try Self.helperFolder(["git/h": ("old", ["username": "u"])]); defer { cli.directory.remove() }
        try cli.write("req", Array("protocol=https\nhost=h\nusername=u\npassword=new\n\n".utf8))
        func onTerminal(_ command: String, seconds: Int) throws -> CLI.Result {
            let line = "timeout --foreground -s KILL \(seconds) '\(CLI.binary)' \(command) --vault '\(cli.path("t.vault"))'"
            return try cli.run(["-q", "-e", "-c", line, "/dev/null"], executable: "/usr/bin/script")
        }
        let prompted = try onTerminal("get git/h", seconds: 3)
        #expect(prompted.text.contains("Password for"), "the control: a get on this terminal prompts (\(prompted.text))")
        for operation in ["store", "erase"] {
            let run = try onTerminal("git credential --allow-write \(operation) < '\(cli.path("req"))'", seconds: 10)
            // On a terminal too: "the vault is locked", never "no terminal" (GitCredentialStoreCLITests).
            #expect(!run.text.contains("Password for") && run.text.contains("the vault is locked") && !run.text.contains("no terminal"),
                    "\(operation): \(run.text)")
        }
        #expect(try cli.run(["get", "git/h"] + cli.unlock()).text == "old")
    }
}
