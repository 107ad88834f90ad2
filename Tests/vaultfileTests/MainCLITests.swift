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
            #expect(result.stderr.contains("Usage: vaultfile"), "the usage lines are kept: \(result.stderr)")
        }
        #expect(try cli.run(["list", "--bad\u{1B}[2J"]).stderr.contains("Unknown option '--bad\\x1B[2J'"))
    }
}
