import Foundation
import TestSupport
import Testing

/// vaultfile's command line before any verb runs: no verb, a misspelt verb or another tool's,
/// arguments that are not UTF-8, and the parser's messages quoting control characters.
@Suite struct MainCLITests {

    // MARK: - No verb, or a misspelt one

    @Test func test_main_noArgumentsPrintsAShortUsageAndExits64() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let bare = try cli.run([])
        #expect(bare.status == 64)
        #expect(bare.stdout.isEmpty)
        #expect(bare.stderr.split(separator: "\n").count <= 5, "a few lines: \(bare.stderr)")
        #expect(bare.stderr.contains("vaultfile --help") && bare.stderr.contains("get"))
    }

    @Test func test_main_unknownVerbOfAnotherToolNamesVaultfilesVerb() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for (word, verb) in [("insert", "set"), ("remove", "rm"), ("delete", "rm"), ("find", "search"), ("grep", "search"),
                             ("clip", "get --clip"), ("cat", "get"), ("otp", "totp")] {
            let result = try cli.run([word, "x"])
            #expect(result.status == 64 && result.stderr.contains("did you mean '\(verb)'?\n"), "\(word): \(result.stderr)")
        }
        // Only as the verb: a word of another tool after a verb is left to that verb's parser.
        #expect(try cli.run(["git", "insert"]).stderr.contains("did you mean 'set'") == false)
    }

    @Test func test_main_unknownVerbSuggestsTheClosestOnes() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let typo = try cli.run(["lsit"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("'lsit' is not a vaultfile verb") && typo.stderr.contains("did you mean 'list'?"), "\(typo.stderr)")
        #expect(try cli.run(["git", "mrege", "a", "b", "c"]).stderr.contains("did you mean 'merge'?"))
        #expect(try cli.run(["serach", "x"]).stderr.contains("did you mean 'search'?"))
        let unknown = try cli.run(["xyzzy"])
        #expect(unknown.status == 64 && unknown.stderr.contains("'vaultfile --help' lists the verbs"), "\(unknown.stderr)")
        #expect(try cli.run(["help", "get"]).status == 0, "help is a verb")
    }

    // MARK: - Arguments

    @Test func test_arguments_thatAreNotUTF8AreRefusedBeforeParsing() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        // Both used to become U+FFFD U+FFFD: one entry under two different byte strings.
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        let set = try cli.shell("printf v | \"$VF\" set \"$(printf '\\377\\376')\" \(unlock)")
        #expect(set.status == 64, "\(set.stderr)")
        #expect(set.stderr.contains("argument 2 is not valid UTF-8 (\\xFF\\xFE)"), "\(set.stderr)")
        #expect(!set.stderr.contains("\u{FFFD}"), "the raw bytes are never printed")
        let path = try cli.shell("\"$VF\" list --vault \"$(printf '/tmp/\\351t\\351')\"")
        #expect(path.status == 64 && path.stderr.contains("argument 3") && path.stderr.contains("/tmp/\\xE9t\\xE9"), "\(path.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test func test_parserErrors_escapeControlCharactersFromArgv() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for arguments in [["list", "--bad\u{1B}[2J\u{1B}]0;title\u{07}"], ["get", "a", "b\u{1B}[31m"], ["set", "--vault"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "raw control characters: \(result.stderr)")
            #expect(result.stderr.hasPrefix("vaultfile: error: ") && result.stderr.contains("vaultfile: hint: 'vaultfile \(arguments[0]) --help'"),
                    "vaultfile's own style (issue 47): \(result.stderr)")
        }
        #expect(try cli.run(["list", "--bad\u{1B}[2J"]).stderr.contains("Unknown option '--bad\\x1B[2J'"))
    }

    // MARK: - Issue 47: the parser's errors in vaultfile's style, --vault before the verb

    /// Every usage error of swift-argument-parser (a missing argument, an unknown option, a value
    /// that does not read, a verb's own check) is two lines: `vaultfile: error:` with the parser's
    /// message and `vaultfile: hint:` naming the verb's help; no `Error:`, `Usage:` or `Help:` lines.
    @Test func test_parserErrors_areShownInVaultfilesStyleWithAHint() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let cases: [([String], String, String)] = [
            (["get"] + cli.unlock(), "Missing expected argument '<name>'", "get"),
            (["list", "--nope"] + cli.unlock(), "Unknown option '--nope'", "list"),
            (["generate", "--length", "many"], "many", "generate"),
            (["export", "--format", "json", "--json"] + cli.unlock(), "--json prints a summary", "export"),
            (["slot", "rm"] + cli.unlock(), "Missing expected argument '<slot> ...'", "slot rm"),
        ]
        for (arguments, message, verb) in cases {
            let result = try cli.run(arguments)
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(lines.count == 2 && lines[0].hasPrefix("vaultfile: error: ") && lines[0].contains(message), "\(arguments): \(result.stderr)")
            #expect(lines.last == "vaultfile: hint: 'vaultfile \(verb) --help' shows its arguments and options", "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Error:") && !result.stderr.contains("Usage:") && !result.stderr.contains("Help:"), "\(result.stderr)")
        }
        // The same style as vaultfile's own errors.
        let missing = try cli.run(["get", "nope"] + cli.unlock())
        #expect(missing.stderr.hasPrefix("vaultfile: error: "), "\(missing.stderr)")
    }

    /// `--vault PATH` is taken before the verb too (`vaultfile --vault X get a`, `--vault=X`, a verb
    /// of two words, a quick verb and a parsed one), the forms after the verb keep working, and
    /// `--vault` both before and after the verb is refused.
    @Test func test_vaultOption_isTakenBeforeTheVerb() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let vault = cli.path("t.vault"), password = ["--password-file", cli.path("pw")]
        for arguments in [["--vault", vault, "get", "a"], ["--vault=\(vault)", "get", "a"], ["get", "a", "--vault", vault], ["get", "--vault", vault, "a"]] {
            let result = try cli.run(arguments + password)
            #expect(result.status == 0 && result.text == "x", "\(arguments): \(result.stderr)")
        }
        let export = try cli.run(["--vault", vault, "export", "--format", "dotenv"] + password)
        #expect(export.status == 0 && export.text == "A=\"x\"\n", "a verb ArgumentParser reads: \(export.stderr)")
        let slots = try cli.run(["--vault", vault, "slot", "list"] + password)
        #expect(slots.status == 0 && slots.text.contains("password"), "a verb of two words: \(slots.stderr)")
        let exec = try cli.run(["--vault", vault, "exec", "--only", "a"] + password + ["--", "/bin/sh", "-c", "printf %s \"$A\""])
        #expect(exec.status == 0 && exec.text == "x", "\(exec.stderr)")
        let twice = try cli.run(["--vault", vault, "get", "a", "--vault", vault] + password)
        #expect(twice.status == 64 && twice.stderr.contains("--vault is given both before the verb and after it"), "\(twice.stderr)")
        let typo = try cli.run(["--vault", vault, "gett", "a"] + password)
        #expect(typo.status == 64 && typo.stderr.contains("did you mean 'get'?"), "\(typo.stderr)")
    }

    /// `--vault` with no path and the global options with no verb say what is missing, never
    /// "Unknown option '--vault'"; `--no-agent` is taken before the verb as `--vault` is.
    @Test func test_globalOptions_beforeTheVerbSayWhatIsMissingAndTakeNoAgent() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let vault = cli.path("t.vault"), password = ["--password-file", cli.path("pw")]
        for (arguments, says) in [(["--vault"], "--vault needs the vault's path"), (["--vault", vault], "--vault is given but no verb"),
                                  (["--vault=\(vault)"], "--vault is given but no verb"), (["--no-agent"], "--no-agent is given but no verb"),
                                  (["--vault", vault, "--vault", vault, "get", "a"], "--vault is given twice before the verb")] {
            let result = try cli.run(arguments)
            #expect(result.status == 64 && result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Unknown option"), "\(arguments): \(result.stderr)")
        }
        for arguments in [["--no-agent", "get", "a", "--vault", vault], ["--no-agent", "--vault", vault, "get", "a"],
                          ["--vault", vault, "--no-agent", "get", "a", "--no-agent"], ["--no-agent", "list", "--vault", vault]] {
            let result = try cli.run(arguments + password)
            #expect(result.status == 0 && (result.text == "x" || result.text == "a\n"), "\(arguments): \(result.stderr)")
        }
    }
}
