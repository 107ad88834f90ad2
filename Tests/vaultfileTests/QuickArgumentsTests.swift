import ArgumentParser
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
    private static func parsed(_ arguments: [String]) -> VaultfileCommand.Get? {
        (try? VaultfileCommand.parseAsRoot(arguments)) as? VaultfileCommand.Get
    }

    /// Checks that the quick path reads `arguments` as ArgumentParser does; returns whether it took them.
    @discardableResult
    private static func expectSameReading(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let quick = QuickCommand.parse(arguments) else { return false }
        guard let parsed = parsed(arguments) else {
            Issue.record("the quick path took \(arguments), which ArgumentParser refuses", sourceLocation: sourceLocation)
            return true
        }
        let quickValues = values(of: quick), parsedValues = values(of: parsed)
        #expect(quickValues == parsedValues, "\(arguments)", sourceLocation: sourceLocation)
        #expect(!quickValues.contains { $0.contains("definition") }, "a wrapper left unset: \(quickValues)", sourceLocation: sourceLocation)
        return true
    }

    /// A small deterministic generator, so that a failure names a line that can be replayed.
    private struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
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
        for line in lines {
            #expect(Self.expectSameReading(line), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_leavesEverythingElseToArgumentParser() {
        let declined: [[String]] = [
            [], ["get"], ["list"], ["set", "k"], ["get", "a", "b"],
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
        var generator = SplitMix64(state: 0x5EED)
        var taken = 0
        for _ in 0..<600 {
            let count = Int.random(in: 0...7, using: &generator)
            let line = [Bool.random(using: &generator) ? "get" : "show"] + (0..<count).map { _ in tokens.randomElement(using: &generator)! }
            if Self.expectSameReading(line) { taken += 1 }
        }
        #expect(taken > 30, "the random lines exercised the quick path (\(taken) taken)")
    }

    /// The quick grammar knows every option ArgumentParser gives `get` (help and version aside):
    /// an option added to `get` or one of its groups must be added to its quick reading too.
    @Test func test_quickGrammar_coversEveryOptionOfGet() {
        let help = VaultfileCommand.helpMessage(for: VaultfileCommand.Get.self, includeHidden: true, columns: 10_000)
        var helpOptions: Swift.Set<String> = []
        for word in help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," || $0 == "=" }) where word.hasPrefix("--") && word.count > 2 {
            helpOptions.insert(String(word.dropFirst(2).prefix { $0.isLetter || $0 == "-" }))
        }
        helpOptions.subtract(["help", "version"])
        let grammar = VaultfileCommand.Get.quickGrammar
        #expect(helpOptions == grammar.flags.union(grammar.options), "help: \(helpOptions.sorted())")
    }
}
