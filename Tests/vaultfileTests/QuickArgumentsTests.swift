import ArgumentParser
import TestSupport
import Testing
@testable import vaultfile

/// The quick reading of plain `get` and `set` lines (QuickArguments.swift) against
/// swift-argument-parser's: every line the quick path accepts must give the command ArgumentParser
/// gives, property wrapper by property wrapper; every other line must be left to ArgumentParser.
/// The other verbs: QuickArgumentsVerbTests; the option tables: QuickArgumentsTableTests.
@Suite struct QuickArgumentsTests {
    // MARK: - QuickCommand.parse

    @Test func test_parse_readsPlainGetLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["get", "db/password"],
            ["show", "db/password"],
            ["get", "db/password", "--vault", "t.vault", "--password-file", "pw"],
            ["get", "--vault", "t.vault", "db/password", "--password-file", "pw", "--no-agent"],
            ["get", "--vault=t.vault", "--password-fd=3", "é/ü"],
            ["get", "k", "--field", "user", "--force", "--lock-timeout", "2.5", "--allow-rollback"],
            ["get", "k", "--json", "--identity", "a.txt", "--identity", "b.txt", "--keyfile", "kf"],
            ["get", "k", "--revision", "2", "--recovery", "--kdf-max-memory", "64M", "--kdf-max-work", "1G", "--kdf-max-iterations", "1000"],
            ["get", "k", "--clip", "--clear-after", "10s", "--password-command", "pass show x"],
            ["get", "k", "--recovery-file", "r.txt", "--password-file", ""],
            ["get", "a b", "--vault", "with space/v.vault"],
        ]
        // The first line from the root command, as main() parses; the rest by the verb itself: a
        // debug ArgumentParser checks the whole command tree on every parse from the root (0.7 s).
        for (index, line) in lines.enumerated() {
            #expect(QuickReading.expectSameReading(line, throughRoot: index == 0), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesEverythingElseToArgumentParser() {
        let declined: [[String]] = [
            [], ["get"], ["mv", "a", "b"], ["get", "a", "b"], ["get", "k", "--vault="], ["get", "k", "--field="],
            ["get", "-h"], ["get", "--help"], ["get", "k", "--help"], ["get", "--version"], ["get", "k", "--"], ["get", "--", "-k"],
            ["get", "-"], ["get", "k", "--nope"], ["get", "k", "-f", "x"], ["get", "k", "--vault"],
            ["get", "k", "--vault", "a", "--vault", "b"], ["get", "k", "--json", "--json"], ["get", "k", "--no-agent=1"],
            ["get", "k", "--revision", "0"], ["get", "k", "--revision", "x"], ["get", "k", "--json", "--clip"],
            ["get", "k", "--json", "--revision", "1"], ["get", "k", "--password-file", "a", "--password-fd", "3"],
            ["get", "k", "--recovery", "--recovery-file", "f"], ["get", "k", "--lock-timeout", "-1"],
            ["get", "k", "--lock-timeout", "1e9"], ["get", "k", "--password-fd", "x"], ["get", "k", "--kdf-max-memory", "lots"],
            ["get", "k", "--generate-completion-script", "bash"], ["get", "k", "--experimental-dump-help"],
            ["get", "k", "--vault", "-v.vault"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    /// Random lines from the options `get` knows, good and bad values, repeats and stray words:
    /// whatever the quick path takes, ArgumentParser reads the same way.
    @Test func test_parse_randomLinesAgreeWithArgumentParser() {
        let tokens = ["k", "db/password", "é", "help", "-", "--", "-x", "--vault", "t.vault", "--vault=v", "--lock-timeout", "3",
                      "--lock-timeout=0", "99999999", "--identity", "id.txt", "--keyfile", "kf", "--recovery", "--recovery-file", "r",
                      "--password-file", "pw", "--password-fd", "4", "--password-command", "cmd", "--kdf-max-memory", "8M",
                      "--kdf-max-work", "2G", "--kdf-max-iterations", "7", "--allow-rollback", "--no-agent", "--field", "f",
                      "--json", "--force", "--revision", "1", "0", "--clip", "--clear-after", "5s", "--help", "--unknown",
                      // Edges: empty values and names, `=` forms of flags and options, numbers ArgumentParser reads oddly.
                      "", " ", "--vault=", "--password-file=", "--json=", "--no-agent=", "--revision=1", "--revision=",
                      "--lock-timeout=nan", "inf", "0x10", "1e3", "-1", "--password-fd=-1", "--identity=a", "--field="]
        var generator = SplitMix(seed: 0x5EED)
        var taken = 0
        for _ in 0..<120 {
            let count = Int.random(in: 0...7, using: &generator)
            let line = [Bool.random(using: &generator) ? "get" : "show"] + (0..<count).map { _ in tokens.randomElement(using: &generator)! }
            if QuickReading.expectSameReading(line, throughRoot: false) { taken += 1 }
        }
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    /// The quick grammar knows every option ArgumentParser gives `get` (help and version aside):
    /// an option added to `get` or one of its groups must be added to its quick reading too.
    @Test func test_quickGrammar_coversEveryOptionOfGet() {
        let helpOptions = QuickReading.helpOptions(of: VaultfileCommand.Get.self)
        let grammar = VaultfileCommand.Get.quickGrammar
        #expect(helpOptions == Swift.Set(grammar.options.keys), "help: \(helpOptions.sorted())")
    }

    // MARK: - The verbs' names

    /// Each verb with a quick path, with a line (after the verb's name) that its quick path takes.
    private static let quickVerbs: [(command: any ParsableCommand.Type, line: [String])] = [
        (VaultfileCommand.Get.self, ["k", "--vault", "v"]),
        (VaultfileCommand.Set.self, ["k", "--vault", "v"]),
        (VaultfileCommand.List.self, ["--vault", "v"]),
        (VaultfileCommand.Ls.self, ["--vault", "v"]),
        (VaultfileCommand.Init.self, ["--vault", "v"]),
        (VaultfileCommand.Rm.self, ["k", "--vault", "v"]),
        (VaultfileCommand.Verify.self, ["--vault", "v"]),
    ]

    /// `QuickCommand.parse` answers to exactly the names of each verb: its configuration's
    /// commandName and aliases, no other verb's, and no name that is no verb's.
    @Test func test_parse_namesAreEachVerbsCommandNameAndAliases() {
        let subcommands = VaultfileCommand.configuration.subcommands
        for (command, line) in Self.quickVerbs {
            #expect(QuickReading.expectSameReading([command.configuration.commandName!] + line), "\(command) declined \(line)")
            for subcommand in subcommands {
                for name in [subcommand.configuration.commandName!] + subcommand.configuration.aliases {
                    let owner = ObjectIdentifier(subcommand)
                    guard let quick = QuickCommand.parse([name] + line) else {
                        #expect(owner != ObjectIdentifier(command), "\(name) \(line) declined")
                        continue
                    }
                    #expect(ObjectIdentifier(type(of: quick)) == owner, "\(name) \(line) read as \(type(of: quick))")
                }
            }
            for name in ["", "gett", "Get", "SET", "help", "--vault", "-h"] {
                #expect(QuickCommand.parse([name] + line) == nil, "\(name) \(line)")
            }
        }
    }

    // MARK: - set

    @Test func test_parse_readsPlainSetLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["set", "k"],
            ["set", "help"],
            ["set", "db/password", "--vault", "t.vault", "--password-file", "pw"],
            ["set", "--vault=t.vault", "k", "--field", "user", "--value-file", "f", "--no-agent"],
            ["set", "k", "--value-file", "-"],
            ["set", "k", "--password-file", "-", "--value-file", "v"],
            ["set", "k", "--generate", "--print", "--length", "32", "--charset", "alnum"],
            ["set", "k", "--generate", "--words", "6", "--separator", "."],
            ["set", "k", "--generate", "--charset=chars:-_a", "--separator", "", "--length=+5"],
            ["set", "é/ü", "--totp", "--allow-empty", "--allow-format-characters"],
            ["set", "k", "--identity", "a", "--identity", "b", "--lock-timeout", "0.5", "--allow-rollback"],
            ["set", "a b", "--field", "f.g-h_1", "--value-file", "with space"],
        ]
        // By the verb itself: a debug ArgumentParser checks the whole command tree on every parse
        // from the root (0.7 s); the root's choice of verb is test_parse_namesAreEachVerbsCommandNameAndAliases.
        for line in lines {
            #expect(QuickReading.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesOtherSetLinesToArgumentParser() {
        let declined: [[String]] = [
            ["set"], ["set", "a", "b"], ["set", "-"], ["set", "--vault", "v"], ["set", "-k"], ["set", "k", "--"], ["set", "--", "k"],
            ["set", "-h"], ["set", "k", "--help"], ["set", "help"] + ["k"], ["set", "k", "-x"], ["set", "k", "--nope"],
            // validate(): each of set's own checks, the entry name's and the field's, the generator's
            ["set", "k", "--generate", "--value-file", "f"], ["set", "k", "--print"], ["set", "k", "--totp", "--generate"],
            ["set", "k", "--totp", "--field", "f"], ["set", ""], ["set", "a//b"], ["set", "x/"], ["set", "k", "--field", ""],
            ["set", "k", "--length", "0"], ["set", "k", "--length", "4097"], ["set", "k", "--words", "0"], ["set", "k", "--words", "65"],
            ["set", "k", "--charset", "bogus"], ["set", "k", "--lock-timeout", "-1"], ["set", "k", "--password-file", "a", "--password-fd", "3"],
            // values a type does not read, repeats, a missing value
            ["set", "k", "--length", "x"], ["set", "k", "--words", "1.5"], ["set", "k", "--length", "-3"], ["set", "k", "--value-file"],
            ["set", "k", "--generate", "--generate"], ["set", "k", "--value-file", "a", "--value-file", "b"],
            ["set", "k", "--generate=1"], ["set", "k", "--separator", "--"], ["set", "k", "--value-file", "-v"],
            ["set", "k", "--value-file="], ["set", "k", "--field", "f g"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    /// Random lines from the options `set` knows, good and bad values, repeats and stray words.
    @Test func test_parse_randomSetLinesAgreeWithArgumentParser() {
        let pieces = QuickReading.pieces(
            ["--field", "--value-file", "--allow-empty", "--generate", "--print", "--totp", "--length", "--charset", "--words", "--separator",
             "--allow-format-characters"],
            ["--field": ["f", "", "a b"], "--value-file": ["v", "-"], "--length": ["12", "0", "+3", "0x10", "1e3"], "--charset": ["hex", "chars:xyz", "nope"],
             "--words": ["5", "65"], "--separator": [".", ""]],
            nameCounts: [1, 1, 1, 1, 1, 0, 2])
        let taken = QuickReading.expectSameReadingOfRandomLines(verbs: ["set"], pieces: pieces, count: 80, seed: 0x5E7)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfSet() {
        let helpOptions = QuickReading.helpOptions(of: VaultfileCommand.Set.self)
        let grammar = VaultfileCommand.Set.quickGrammar
        #expect(helpOptions == Swift.Set(grammar.options.keys), "help: \(helpOptions.sorted())")
    }
}
