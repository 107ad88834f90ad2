import ArgumentParser
import TestSupport
import Testing
@testable import vaultfile

/// What the quick-reading suites share (QuickArgumentsTests, QuickArgumentsVerbTests,
/// QuickArgumentsTableTests): the comparison of the quick reading of a line (QuickArguments.swift)
/// with swift-argument-parser's, property wrapper by property wrapper, and random lines to feed it.
enum QuickReading {
    // MARK: - Comparing the two readings

    /// Every value the command's property wrappers hold, as `path = value` lines; a wrapper left
    /// unset (in its definition state) shows as such. The titles and visibility that option groups
    /// carry for help are not values.
    static func values(of command: Any) -> [String] {
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
    static func parsed(_ arguments: [String]) -> (any ParsableCommand)? {
        try? VaultfileCommand.parseAsRoot(arguments)
    }

    /// What ArgumentParser makes of the verb's own arguments (`arguments` without the verb) when
    /// the verb's type parses them itself, or nil when it refuses them. The same reading as
    /// `parseAsRoot` once the verb is chosen, without the checks a debug build of ArgumentParser
    /// runs over the whole command tree on every parse (50–100 ms each, most of this suite's time).
    static func parsed<Verb: ParsableCommand>(_ arguments: [String], as verb: Verb.Type) -> (any ParsableCommand)? {
        try? Verb.parse(Array(arguments.dropFirst()))
    }

    /// Checks that the quick path reads `arguments` as ArgumentParser does; returns whether it took
    /// them. `throughRoot` parses from the root command, as `main()` does (the plain lines); else
    /// the verb chosen by the quick path parses its own arguments (the random lines; that the quick
    /// path chooses the verb ArgumentParser chooses is `test_parse_namesAreEachVerbsCommandNameAndAliases`).
    @discardableResult
    static func expectSameReading(_ arguments: [String], throughRoot: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
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
    struct Pieces {
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
    static func expectSameReadingOfRandomLines(verbs: [String], pieces: Pieces, count: Int, seed: UInt64,
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
    static func helpOptions(of command: any ParsableCommand.Type) -> Swift.Set<String> {
        let help = VaultfileCommand.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var options: Swift.Set<String> = []
        for word in help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," || $0 == "=" }) where word.hasPrefix("--") && word.count > 2 {
            options.insert(String(word.dropFirst(2).prefix { $0.isLetter || $0 == "-" }))
        }
        options.subtract(["help", "version"])
        return options
    }

    /// The options of the unlock group that every vault verb takes, for random lines.
    static let unlockWords = ["--vault", "--lock-timeout", "--identity", "--keyfile", "--recovery", "--recovery-file",
                                      "--password-file", "--password-fd", "--password-command", "--kdf-max-memory", "--kdf-max-work",
                                      "--kdf-max-iterations", "--allow-rollback", "--accept-rotation", "--no-agent"]
    /// Good and bad values of the unlock options, for random lines (sorted by the option's name, so
    /// that a seed gives the same lines in every run).
    static let unlockValues: KeyValuePairs<String, [String]> = [
        "--vault": ["t.vault", "-", ""], "--lock-timeout": ["3", "0", "99999999", "x", "nan", "inf", "1e3"], "--identity": ["id.txt"],
        "--keyfile": ["kf"], "--recovery-file": ["r"], "--password-file": ["pw", "-"], "--password-fd": ["4", "x", "0x10", " 4"],
        "--password-command": ["cmd"], "--kdf-max-memory": ["8M", "lots"], "--kdf-max-work": ["2G"], "--kdf-max-iterations": ["7", "-1", "1e3"],
    ]

    /// Stray words for random lines: help, dashes, unknown options, an empty word.
    static let strayWords = ["help", "-", "--", "-x", "-h", "--help", "--unknown", ""]

    /// Names, good and bad, for random lines.
    static let names = ["k", "db/password", "é/ü", "a b", "a//b", "x/", "help", " ", ""]

    /// Random-line pieces for a verb: the unlock options, stray words, names (as many as one of
    /// `nameCounts`), and the verb's own `words` (its flags and options) and option `values`.
    static func pieces(_ words: [String], _ values: KeyValuePairs<String, [String]>, nameCounts: [Int]) -> Pieces {
        var all: [String: [String]] = [:]
        for (option, optionValues) in unlockValues { all[option] = optionValues }
        for (option, optionValues) in values { all[option] = optionValues }
        let sorted = all.sorted { $0.key < $1.key }
        let flags = (unlockWords + words).filter { all[$0] == nil }
        return Pieces(pairs: sorted.flatMap { option, values in values.flatMap { [[option, $0], ["\(option)=\($0)"]] } } + flags.map { [$0] },
                      singles: unlockWords + strayWords + words, names: names, nameCounts: nameCounts)
    }
}
