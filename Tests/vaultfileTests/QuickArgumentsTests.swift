import ArgumentParser
import TestSupport
import Testing
@testable import vaultfile

/// The quick reading of a plain `get` line (QuickArguments.swift) against swift-argument-parser's:
/// every line the quick path accepts must give the command ArgumentParser gives, property wrapper
/// by property wrapper; every other line must be left to ArgumentParser.
@Suite struct QuickArgumentsTests {
    // MARK: - Helpers

    /// Every value the command's property wrappers hold, as `path = value` lines; a wrapper left
    /// unset (in its definition state) shows as such. The titles and visibility that option groups
    /// carry for help are not values.
    private static func values(of command: Any) -> [String] {
        var lines: [String] = []
        func walk(_ value: Any, path: String) {
            let mirror = Mirror(reflecting: value)
            if mirror.children.isEmpty || mirror.displayStyle == .collection && path.hasSuffix("value") {
                lines.append("\(path) = \(String(reflecting: value))")
                return
            }
            for (index, child) in mirror.children.enumerated() {
                let label = child.label ?? "[\(index)]"
                if ["title", "_visibility", "_dummy"].contains(label) { continue }
                walk(child.value, path: path + "." + label)
            }
        }
        walk(command, path: "")
        return lines
    }

    /// What ArgumentParser makes of `arguments`, or nil when it refuses them (or asks for help).
    private static func parsed(_ arguments: [String]) -> (any ParsableCommand)? {
        try? VaultfileCommand.parseAsRoot(arguments)
    }

    /// What ArgumentParser makes of the verb's own arguments (`arguments` without the verb) when
    /// the verb's type parses them itself, or nil when it refuses them. The same reading as
    /// `parseAsRoot` once the verb is chosen, without the checks a debug build of ArgumentParser
    /// runs over the whole command tree on every parse (50–100 ms each, most of this suite's time).
    private static func parsed<Verb: ParsableCommand>(_ arguments: [String], as verb: Verb.Type) -> (any ParsableCommand)? {
        try? Verb.parse(Array(arguments.dropFirst()))
    }

    /// Checks that the quick path reads `arguments` as ArgumentParser does; returns whether it took
    /// them. `throughRoot` parses from the root command, as `main()` does (the plain lines); else
    /// the verb chosen by the quick path parses its own arguments (the random lines; that the quick
    /// path chooses the verb ArgumentParser chooses is `test_parse_namesAreEachVerbsCommandNameAndAliases`).
    @discardableResult
    private static func expectSameReading(_ arguments: [String], throughRoot: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let quick = QuickCommand.parse(arguments) else { return false }
        let verb: any ParsableCommand.Type = type(of: quick)
        let reading: (any ParsableCommand)?
        if throughRoot { reading = parsed(arguments) } else { reading = parsed(arguments, as: verb) }
        guard let parsed = reading else {
            Issue.record("the quick path took \(arguments), which ArgumentParser refuses", sourceLocation: sourceLocation)
            return true
        }
        #expect(ObjectIdentifier(type(of: quick)) == ObjectIdentifier(type(of: parsed)), "\(arguments): \(type(of: quick)) against \(type(of: parsed))", sourceLocation: sourceLocation)
        let quickValues = values(of: quick), parsedValues = values(of: parsed)
        #expect(quickValues == parsedValues, "\(arguments)", sourceLocation: sourceLocation)
        #expect(!quickValues.contains { $0.contains("definition") }, "a wrapper left unset: \(quickValues)", sourceLocation: sourceLocation)
        return true
    }


    /// Random-line pieces: options with a value, and single words (options without their value,
    /// flags, stray words); and the names to put among them.
    private struct Pieces {
        var pairs: [[String]]
        var singles: [String]
        var names: [String]
        /// How many names a line holds, picked from this list (repeat a count to make it likelier).
        var nameCounts: [Int]

        /// A random line of `verb`: 0 to 5 pieces (a single word a sixth of the time), names among them.
        func line(_ verb: String, using generator: inout SplitMix) -> [String] {
            var pieces: [[String]] = (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                Int.random(in: 0..<6, using: &generator) == 0
                    ? [singles.randomElement(using: &generator)!] : pairs.randomElement(using: &generator)!
            }
            for _ in 0..<nameCounts.randomElement(using: &generator)! {
                pieces.insert([names.randomElement(using: &generator)!], at: Int.random(in: 0...pieces.count, using: &generator))
            }
            return [verb] + pieces.joined()
        }
    }

    /// `count` random lines of `verbs` made of `pieces`: whatever the quick path takes,
    /// ArgumentParser reads the same way. Returns how many lines the quick path took. (The pieces
    /// pair options with values so that many lines count.)
    private static func expectSameReadingOfRandomLines(verbs: [String], pieces: Pieces, count: Int, seed: UInt64,
                                                       sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var generator = SplitMix(seed: seed)
        var taken = 0
        for _ in 0..<count {
            let line = pieces.line(verbs.randomElement(using: &generator)!, using: &generator)
            if expectSameReading(line, throughRoot: false, sourceLocation: sourceLocation) { taken += 1 }
        }
        return taken
    }

    /// The options of `command`'s help (hidden ones included; help and version aside), without dashes.
    private static func helpOptions(of command: any ParsableCommand.Type) -> Swift.Set<String> {
        let help = VaultfileCommand.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var options: Swift.Set<String> = []
        for word in help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," || $0 == "=" }) where word.hasPrefix("--") && word.count > 2 {
            options.insert(String(word.dropFirst(2).prefix { $0.isLetter || $0 == "-" }))
        }
        options.subtract(["help", "version"])
        return options
    }

    /// The options of the unlock group that every vault verb takes, for random lines.
    private static let unlockWords = ["--vault", "--lock-timeout", "--identity", "--keyfile", "--recovery", "--recovery-file",
                                      "--password-file", "--password-fd", "--password-command", "--kdf-max-memory", "--kdf-max-work",
                                      "--kdf-max-iterations", "--allow-rollback", "--no-agent"]
    /// Good and bad values of the unlock options, for random lines (sorted by the option's name, so
    /// that a seed gives the same lines in every run).
    private static let unlockValues: KeyValuePairs<String, [String]> = [
        "--vault": ["t.vault", "-", ""], "--lock-timeout": ["3", "0", "99999999", "x", "nan", "inf", "1e3"], "--identity": ["id.txt"],
        "--keyfile": ["kf"], "--recovery-file": ["r"], "--password-file": ["pw", "-"], "--password-fd": ["4", "x", "0x10", " 4"],
        "--password-command": ["cmd"], "--kdf-max-memory": ["8M", "lots"], "--kdf-max-work": ["2G"], "--kdf-max-iterations": ["7", "-1", "1e3"],
    ]

    /// Stray words for random lines: help, dashes, unknown options, an empty word.
    private static let strayWords = ["help", "-", "--", "-x", "-h", "--help", "--unknown", ""]

    /// Names, good and bad, for random lines.
    private static let names = ["k", "db/password", "é/ü", "a b", "a//b", "x/", "help", " ", ""]

    /// Random-line pieces for a verb: the unlock options, stray words, names (as many as one of
    /// `nameCounts`), and the verb's own `words` (its flags and options) and option `values`.
    private static func pieces(_ words: [String], _ values: KeyValuePairs<String, [String]>, nameCounts: [Int]) -> Pieces {
        var all: [String: [String]] = [:]
        for (option, optionValues) in unlockValues { all[option] = optionValues }
        for (option, optionValues) in values { all[option] = optionValues }
        let sorted = all.sorted { $0.key < $1.key }
        let flags = (unlockWords + words).filter { all[$0] == nil }
        return Pieces(pairs: sorted.flatMap { option, values in values.flatMap { [[option, $0], ["\(option)=\($0)"]] } } + flags.map { [$0] },
                      singles: unlockWords + strayWords + words, names: names, nameCounts: nameCounts)
    }

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
            #expect(Self.expectSameReading(line, throughRoot: index == 0), "the quick path declined \(line)")
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
            if Self.expectSameReading(line, throughRoot: false) { taken += 1 }
        }
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    /// The quick grammar knows every option ArgumentParser gives `get` (help and version aside):
    /// an option added to `get` or one of its groups must be added to its quick reading too.
    @Test func test_quickGrammar_coversEveryOptionOfGet() {
        let helpOptions = Self.helpOptions(of: VaultfileCommand.Get.self)
        let grammar = VaultfileCommand.Get.quickGrammar
        #expect(helpOptions == grammar.flags.union(grammar.options), "help: \(helpOptions.sorted())")
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
            #expect(Self.expectSameReading([command.configuration.commandName!] + line), "\(command) declined \(line)")
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
            #expect(Self.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
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
        let pieces = Self.pieces(
            ["--field", "--value-file", "--allow-empty", "--generate", "--print", "--totp", "--length", "--charset", "--words", "--separator",
             "--allow-format-characters"],
            ["--field": ["f", "", "a b"], "--value-file": ["v", "-"], "--length": ["12", "0", "+3", "0x10", "1e3"], "--charset": ["hex", "chars:xyz", "nope"],
             "--words": ["5", "65"], "--separator": [".", ""]],
            nameCounts: [1, 1, 1, 1, 1, 0, 2])
        let taken = Self.expectSameReadingOfRandomLines(verbs: ["set"], pieces: pieces, count: 80, seed: 0x5E7)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfSet() {
        let helpOptions = Self.helpOptions(of: VaultfileCommand.Set.self)
        let grammar = VaultfileCommand.Set.quickGrammar
        #expect(helpOptions == grammar.flags.union(grammar.options), "help: \(helpOptions.sorted())")
    }

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
            #expect(Self.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
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
        let pieces = Self.pieces(["--json", "--tree"], [:], nameCounts: [0, 0, 1, 1, 2])
        let taken = Self.expectSameReadingOfRandomLines(verbs: ["list", "ls"], pieces: pieces, count: 30, seed: 0x1157)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfListAndLs() {
        for (command, grammar) in [(VaultfileCommand.List.self as any ParsableCommand.Type, VaultfileCommand.List.quickGrammar),
                                   (VaultfileCommand.Ls.self, VaultfileCommand.Ls.quickGrammar)] {
            let helpOptions = Self.helpOptions(of: command)
            #expect(helpOptions == grammar.flags.union(grammar.options), "\(command) help: \(helpOptions.sorted())")
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
            #expect(Self.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
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
        let pieces = Self.pieces(
            ["--kdf", "--kdf-memory", "--kdf-iterations", "--kdf-parallelism", "--kdf-time", "--allow-weak-kdf", "--recipient",
             "--recipients-file", "--with-keyfile", "--any-keyfile", "--ask-password", "--keep-history", "--history-bytes"],
            ["--kdf": ["argon2id", "pbkdf2", "x"], "--kdf-memory": ["1M", "1"], "--kdf-iterations": ["1", "0", "x", "0x10", "+2"],
             "--kdf-parallelism": ["2", "0"], "--kdf-time": ["1s", "x"], "--recipient": ["age1x", "a b"], "--recipients-file": ["r"],
             "--with-keyfile": ["kf"], "--keep-history": ["0", "3", "1001", " 3"], "--history-bytes": ["1M", "0", "x"]],
            nameCounts: [0, 0, 0, 0, 1])
        let taken = Self.expectSameReadingOfRandomLines(verbs: ["init"], pieces: pieces, count: 30, seed: 0x1217)
        #expect(taken > 3, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfInit() {
        let helpOptions = Self.helpOptions(of: VaultfileCommand.Init.self)
        let grammar = VaultfileCommand.Init.quickGrammar
        #expect(helpOptions == grammar.flags.union(grammar.options), "help: \(helpOptions.sorted())")
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
            #expect(Self.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
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
        let rm = Self.pieces(["--field", "--recursive", "--dry-run"], ["--field": ["f", "", "a b"]], nameCounts: [1, 1, 1, 1, 0, 2])
        var taken = Self.expectSameReadingOfRandomLines(verbs: ["rm"], pieces: rm, count: 20, seed: 0x52E)
        let verify = Self.pieces([], [:], nameCounts: [0, 0, 0, 1])
        taken += Self.expectSameReadingOfRandomLines(verbs: ["verify"], pieces: verify, count: 15, seed: 0x7E21)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfRmAndVerify() {
        for (command, grammar) in [(VaultfileCommand.Rm.self as any ParsableCommand.Type, VaultfileCommand.Rm.quickGrammar),
                                   (VaultfileCommand.Verify.self, VaultfileCommand.Verify.quickGrammar)] {
            let helpOptions = Self.helpOptions(of: command)
            #expect(helpOptions == grammar.flags.union(grammar.options), "\(command) help: \(helpOptions.sorted())")
        }
    }
}
