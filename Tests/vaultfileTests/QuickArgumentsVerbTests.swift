import ArgumentParser
import TestSupport
import Testing
@testable import vaultfile

/// The quick reading of plain `list`, `ls`, `init`, `rm` and `verify` lines against
/// swift-argument-parser's, as QuickArgumentsTests does for `get` and `set`.
@Suite struct QuickArgumentsVerbTests {
    // MARK: - list and ls

    @Test func test_parse_readsPlainListAndLsLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["list"], ["list", "prod"], ["list", "prod/"], ["list", "help"], ["list", ""], ["list", "é/ü", "--json"],
            ["list", "--vault", "t.vault", "--password-file", "pw"], ["list", "--json", "--vault=t.vault", "--no-agent", "prod"],
            ["list", "--identity", "a", "--identity", "b", "--password-file", "-"],
            ["ls"], ["ls", "prod"], ["ls", "--tree"], ["ls", "a b", "--tree", "--vault", "t.vault", "--password-fd", "3"],
            ["ls", "--lock-timeout=0", "--allow-rollback", "x/"],
        ]
        // By the verb itself: a debug ArgumentParser checks the whole command tree on every parse
        // from the root (0.7 s); the root's choice of verb is test_parse_namesAreEachVerbsCommandNameAndAliases.
        for line in lines {
            #expect(QuickReading.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesOtherListAndLsLinesToArgumentParser() {
        let declined: [[String]] = [
            ["list", "a", "b"], ["list", "-"], ["list", "-p"], ["list", "--"], ["list", "--", "a"], ["list", "-h"], ["list", "--help"],
            ["list", "prod", "--help"], ["list", "--json", "--json"], ["list", "--json=1"], ["list", "--tree"], ["list", "--nope"],
            ["list", "--vault"], ["list", "--vault="], ["list", "--vault", "a", "--vault", "b"], ["list", "--lock-timeout", "x"],
            ["list", "--password-file", "a", "--password-command", "c"], ["list", "--recovery", "--recovery-file", "f"],
            ["list", "--kdf-max-memory", "lots"], ["list", "--generate-completion-script", "bash"],
            ["ls", "a", "b"], ["ls", "-"], ["ls", "-t"], ["ls", "--help"], ["ls", "--json"], ["ls", "--tree", "--tree"],
            ["ls", "--tree=yes"], ["ls", "--lock-timeout", "-1"], ["ls", "--password-fd", "x"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    /// Random lines from the options `list` and `ls` know, good and bad values, repeats and stray words.
    @Test func test_parse_randomListAndLsLinesAgreeWithArgumentParser() {
        let pieces = QuickReading.pieces(["--json", "--tree"], [:], nameCounts: [0, 0, 1, 1, 2])
        let taken = QuickReading.expectSameReadingOfRandomLines(verbs: ["list", "ls"], pieces: pieces, count: 30, seed: 0x1157)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfListAndLs() {
        for (command, grammar) in [(VaultfileCommand.List.self as any ParsableCommand.Type, VaultfileCommand.List.quickGrammar),
                                   (VaultfileCommand.Ls.self, VaultfileCommand.Ls.quickGrammar)] {
            let helpOptions = QuickReading.helpOptions(of: command)
            #expect(helpOptions == Swift.Set(grammar.options.keys), "\(command) help: \(helpOptions.sorted())")
        }
    }

    // MARK: - init

    @Test func test_parse_readsPlainInitLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["init"], ["init", "--vault", "t.vault"], ["init", "--vault=t.vault", "--password-file", "pw", "--no-agent"],
            ["init", "--kdf", "argon2id", "--kdf-memory", "1M", "--kdf-iterations", "1", "--kdf-parallelism", "1", "--allow-weak-kdf"],
            ["init", "--kdf=pbkdf2", "--kdf-iterations", "1000", "--allow-weak-kdf", "--password-fd", "3"],
            ["init", "--kdf-time", "500ms", "--kdf-memory", "64M"], ["init", "--kdf-time=1.5s"],
            ["init", "--recipient", "age1x", "--recipient", "ssh-ed25519 AAAA c", "--recipients-file", "r1", "--recipients-file", "r2"],
            ["init", "--with-keyfile", "kf", "--any-keyfile", "--ask-password", "--lock-timeout", "0"],
            ["init", "--keep-history", "0"], ["init", "--keep-history", "5", "--history-bytes", "1M"], ["init", "--history-bytes=0"],
            ["init", "--password-command", "pass show x", "--kdf-max-memory", "8M", "--allow-rollback"], ["init", "--password-file", "-"],
        ]
        // By the verb itself: a debug ArgumentParser checks the whole command tree on every parse
        // from the root (0.7 s); the root's choice of verb is test_parse_namesAreEachVerbsCommandNameAndAliases.
        for line in lines {
            #expect(QuickReading.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesOtherInitLinesToArgumentParser() {
        let declined: [[String]] = [
            ["init", "name"], ["init", "-"], ["init", "--"], ["init", "-h"], ["init", "--help"], ["init", "--nope"], ["init", "-k"],
            // validate(): init's own check, the KDF options', the history options', the unlock options'
            ["init", "--identity", "id"], ["init", "--keyfile", "kf"], ["init", "--recovery"], ["init", "--recovery-file", "r"],
            ["init", "--kdf-time", "1s", "--kdf-iterations", "3"], ["init", "--kdf-time", "soon"], ["init", "--kdf", "pbkdf2", "--kdf-memory", "1M"],
            ["init", "--kdf", "pbkdf2", "--kdf-parallelism", "2"], ["init", "--kdf-memory", "lots"], ["init", "--keep-history", "1001"],
            ["init", "--keep-history", "x"], ["init", "--history-bytes", "5G"], ["init", "--history-bytes", "x"],
            ["init", "--password-file", "a", "--password-fd", "3"], ["init", "--lock-timeout", "-1"],
            // values a type does not read, repeats, missing values
            ["init", "--kdf", "scrypt"], ["init", "--kdf", "Argon2id"], ["init", "--kdf-iterations", "-1"], ["init", "--kdf-iterations", "4294967296"],
            ["init", "--kdf-parallelism", "x"], ["init", "--keep-history", "-1"], ["init", "--with-keyfile", "a", "--with-keyfile", "b"],
            ["init", "--allow-weak-kdf", "--allow-weak-kdf"], ["init", "--ask-password=1"], ["init", "--recipient"], ["init", "--recipient="],
            ["init", "--recipient", "-x"], ["init", "--kdf", "argon2id", "--kdf", "argon2id"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    /// Random lines from the options `init` knows, good and bad values, repeats and stray words.
    @Test func test_parse_randomInitLinesAgreeWithArgumentParser() {
        let pieces = QuickReading.pieces(
            ["--kdf", "--kdf-memory", "--kdf-iterations", "--kdf-parallelism", "--kdf-time", "--allow-weak-kdf", "--recipient",
             "--recipients-file", "--with-keyfile", "--any-keyfile", "--ask-password", "--keep-history", "--history-bytes"],
            ["--kdf": ["argon2id", "pbkdf2", "x"], "--kdf-memory": ["1M", "1"], "--kdf-iterations": ["1", "0", "x", "0x10", "+2"],
             "--kdf-parallelism": ["2", "0"], "--kdf-time": ["1s", "x"], "--recipient": ["age1x", "a b"], "--recipients-file": ["r"],
             "--with-keyfile": ["kf"], "--keep-history": ["0", "3", "1001", " 3"], "--history-bytes": ["1M", "0", "x"]],
            nameCounts: [0, 0, 0, 0, 1])
        let taken = QuickReading.expectSameReadingOfRandomLines(verbs: ["init"], pieces: pieces, count: 30, seed: 0x1217)
        #expect(taken > 3, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfInit() {
        let helpOptions = QuickReading.helpOptions(of: VaultfileCommand.Init.self)
        let grammar = VaultfileCommand.Init.quickGrammar
        #expect(helpOptions == Swift.Set(grammar.options.keys), "help: \(helpOptions.sorted())")
    }

    // MARK: - rm and verify

    @Test func test_parse_readsPlainRmAndVerifyLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["rm", "k"], ["rm", "help"], ["rm", "prod/", "--recursive"], ["rm", "prod", "--recursive", "--dry-run"], ["rm", "k", "--field", "user"],
            ["rm", "--vault", "t.vault", "é/ü", "--password-file", "pw", "--no-agent"], ["rm", "a b", "--dry-run", "--field=f"],
            ["rm", "k", "--identity", "a", "--identity", "b", "--lock-timeout", "2", "--allow-rollback"], ["rm", ""],
            ["verify"], ["verify", "--vault", "t.vault"], ["verify", "--vault=t.vault", "--password-fd", "3", "--no-agent"],
            ["verify", "--keyfile", "kf", "--kdf-max-work", "2G", "--kdf-max-iterations", "10"], ["verify", "--recovery"],
        ]
        // By the verb itself: a debug ArgumentParser checks the whole command tree on every parse
        // from the root (0.7 s); the root's choice of verb is test_parse_namesAreEachVerbsCommandNameAndAliases.
        for line in lines {
            #expect(QuickReading.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesOtherRmAndVerifyLinesToArgumentParser() {
        let declined: [[String]] = [
            ["rm"], ["rm", "a", "b"], ["rm", "-"], ["rm", "-r", "prod"], ["rm", "prod", "-r"], ["rm", "-rf", "k"], ["rm", "k", "--"],
            ["rm", "--", "-k"], ["rm", "-h"], ["rm", "k", "--help"], ["rm", "k", "--nope"], ["rm", "k", "--json"],
            // validate(): rm's own check, the unlock options'
            ["rm", "k", "--recursive", "--field", "f"], ["rm", "k", "--password-file", "a", "--password-command", "c"],
            ["rm", "k", "--lock-timeout", "nan"], ["rm", "k", "--recovery", "--recovery-file", "r"],
            // repeats, values, missing values
            ["rm", "k", "--recursive", "--recursive"], ["rm", "k", "--dry-run=true"], ["rm", "k", "--field", "a", "--field", "b"],
            ["rm", "k", "--field"], ["rm", "k", "--field="], ["rm", "k", "--field", "-f"],
            ["verify", "k"], ["verify", "-"], ["verify", "-h"], ["verify", "--help"], ["verify", "--"], ["verify", "--json"],
            ["verify", "--vault"], ["verify", "--vault", "a", "--vault", "b"], ["verify", "--password-fd", "x"],
            ["verify", "--kdf-max-memory", "lots"], ["verify", "--no-agent", "--no-agent"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    /// Random lines from the options `rm` and `verify` know, good and bad values, repeats and stray words.
    @Test func test_parse_randomRmAndVerifyLinesAgreeWithArgumentParser() {
        let rm = QuickReading.pieces(["--field", "--recursive", "--dry-run"], ["--field": ["f", "", "a b"]], nameCounts: [1, 1, 1, 1, 0, 2])
        var taken = QuickReading.expectSameReadingOfRandomLines(verbs: ["rm"], pieces: rm, count: 20, seed: 0x52E)
        let verify = QuickReading.pieces([], [:], nameCounts: [0, 0, 0, 1])
        taken += QuickReading.expectSameReadingOfRandomLines(verbs: ["verify"], pieces: verify, count: 15, seed: 0x7E21)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfRmAndVerify() {
        for (command, grammar) in [(VaultfileCommand.Rm.self as any ParsableCommand.Type, VaultfileCommand.Rm.quickGrammar),
                                   (VaultfileCommand.Verify.self, VaultfileCommand.Verify.quickGrammar)] {
            let helpOptions = QuickReading.helpOptions(of: command)
            #expect(helpOptions == Swift.Set(grammar.options.keys), "\(command) help: \(helpOptions.sorted())")
        }
    }
}
