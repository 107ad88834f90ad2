import Foundation
import TestSupport
import Testing
@testable import LinearRegex

/// `search --regex`'s engine: Swift's syntax and answers, in linear time.
@Suite struct LinearRegexTests {
    private func matches(_ pattern: String, _ text: String, ignoringCase: Bool = false) throws -> Bool {
        try LinearRegex(pattern, ignoringCase: ignoringCase).matches(text)
    }

    // MARK: - matches

    @Test func test_matches_theUsualSyntax() throws {
        #expect(try matches("^prod/(api|db)$", "prod/db"))
        #expect(try !matches("^prod/(api|db)$", "prod/dbx"))
        #expect(try matches("db", "dev/db/password"))
        #expect(try matches("a.c", "abc") && !matches("a.c", "a\nc") && matches("(?s)a.c", "a\nc"))
        #expect(try matches("^\\d{3}-\\d{4}$", "555-1234") && !matches("^\\d{3}-\\d{4}$", "55-1234"))
        #expect(try matches("^[a-z_]+[0-9]?$", "api_key7") && !matches("^[^a-z]+$", "ABc"))
        #expect(try matches("\\bkey\\b", "api key here") && !matches("\\bkey\\b", "apikeys"))
        #expect(try matches("^(?:ab){2,3}$", "ababab") && !matches("^(?:ab){2,3}$", "ab") && !matches("^(?:ab){2,3}$", "abababab"))
        #expect(try matches("^a{,2}$", "aa") && !matches("^a{,2}$", "aaa") && matches("x{2,}", "axxx"))
        #expect(try matches("(?<name>ab)+?c", "ababc") && matches("a{", "a{"))
        #expect(try matches("^[[:alpha:]]+$", "héllo") && matches("[\\]\\-]", "-") && matches("[]a]", "]"))
        #expect(try matches("^\\x41\\u{42}\\x{43}$", "ABC") && matches("\\.", "a.b") && !matches("\\.", "ab"))
        #expect(try matches("^$", "") && matches("", "x") && matches("^(|a)$", "a"))
        #expect(try matches("line$", "a\nline") && !matches("line$", "line\nx") && matches("(?m)^x$", "line\nx\ny"))
        #expect(try matches("end\\Z", "the end\n") && !matches("end\\z", "the end\n"))
    }

    @Test func test_matches_ignoringCase() throws {
        #expect(try matches("PROD", "prod/db", ignoringCase: true) && !matches("PROD", "prod/db"))
        #expect(try matches("(?i)[a-c]+x", "ABCX") && matches("(?i:k)", "\u{212A}") && matches("É", "é", ignoringCase: true))
        #expect(try !matches("(?i)[^a]", "A"))
    }

    @Test func test_matches_agreesWithSwiftRegexOnRandomPatterns() throws {
        // Patterns from a grammar both engines read alike, on ASCII texts (where a scalar is a character).
        // (\b is left out: Swift's follows Unicode word segmentation, ours is grep's and RE2's.)
        var random = SplitMix(seed: 25)
        let atoms = ["a", "b", "ab", ".", "[ab]", "[^a]", "\\d", "\\w", "x", "(a|b)", "(ab|a)", "(a*)", "(?:b+)", "^", "$", "\\d+\\.?", "[a-c1]", "(?i:A)", "\\s", "\\W", "[[:digit:]]", "(a|)", "(?:x|1b)", "[^ ]", "\\D"]
        let quantifiers = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?"]
        for _ in 0..<3_000 {
            let pattern = (0..<random.next(upTo: 4) + 1).map { _ in
                let atom = atoms[random.next(upTo: atoms.count)]
                return atom == "^" || atom == "$" ? atom : atom + quantifiers[random.next(upTo: quantifiers.count)]
            }.joined(separator: random.next(upTo: 6) == 0 ? "|" : "")
            let text = String((0..<random.next(upTo: 9)).map { _ in Array("ab1x ")[random.next(upTo: 5)] })
            guard let swift = try? Regex(pattern) else {
                #expect((try? LinearRegex(pattern)) == nil, "\(pattern) is refused by Swift")
                continue
            }
            let ours: LinearRegex
            do throws(LinearRegex.SyntaxError) { ours = try LinearRegex(pattern) } catch {
                #expect(error.description.contains("not supported"), "\(pattern): \(error)")  // a possessive a?+, say
                continue
            }
            #expect(ours.matches(text) == (try swift.firstMatch(in: text) != nil), "\(pattern) on '\(text)'")
        }
    }

    @Test func test_matches_catastrophicPatternsStayLinear() throws {
        // Swift's Regex took seconds per entry on these (exponential backtracking); here each is one pass.
        let text = String(repeating: "a", count: 20_000) + "b"
        for pattern in ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "(a*)*b$c", "^(a?){25}a{25}$"] {
            #expect(try !matches(pattern, text), "\(pattern)")
        }
        #expect(try matches("^(a?){25}a{25}$", String(repeating: "a", count: 25)))
    }

    /// The second re-test's finding: a 6 KB pattern against a 1 MiB value would have run for hours
    /// (10^10 steps). The work budget stops a pattern that keeps thousands of states alive within
    /// a few thousand characters, and lets ordinary ones read everything.
    @Test func test_matches_workBudgetStopsPathologicalPatternsFastAndNotOrdinaryOnes() throws {
        let text = String(repeating: "a", count: 1 << 20)
        let started = ContinuousClock.now
        // The first with the default budget (its figures are what the error reports); the others
        // with a tenth of its start, which they overrun the same way in a tenth of the steps.
        let budgets = [LinearRegex.WorkBudget(), LinearRegex.WorkBudget(initial: 100_000), LinearRegex.WorkBudget(initial: 100_000)]
        for (pattern, start) in zip(["(a?){1000}c", "(?:a?b?){900}c", String(repeating: "(a|b)?", count: 500) + "c"], budgets) {
            var budget = start
            let expression = try LinearRegex(pattern)
            do throws(LinearRegex.OverLimit) {
                _ = try expression.matches(text, budget: &budget)
                Issue.record("\(pattern.prefix(20)): finished within the budget")
            } catch {
                #expect(error == LinearRegex.OverLimit(initialSteps: start.initial, stepsPerScalar: 1_000))
            }
        }
        #expect(budgets[0].initial == 1_000_000 && budgets[0].perScalar == 1_000, "the defaults")
        #expect(ContinuousClock.now - started < .seconds(60), "stopped early, not after 10^10 steps")
        // Ordinary patterns, a hundred-word alternation too, read 7 KB with one budget shared by every text.
        let ordinary = String(repeating: "ab1 x2y", count: 1 << 10)
        var budget = LinearRegex.WorkBudget()
        let words = "(" + (0..<100).map { "word\($0)" }.joined(separator: "|") + ")"
        for pattern in ["x[0-9]+y", "^(a|b)+$", "\\bkey\\b", words] {
            _ = try LinearRegex(pattern).matches(ordinary, budget: &budget)
        }
    }

    // MARK: - init

    @Test func test_init_refusesWhatNeedsBacktracking() {
        for (pattern, says) in [("(a)\\1", "backreferences"), ("a(?=b)", "lookahead"), ("(?<!a)b", "lookbehind"),
                                ("(?>a)", "atomic"), ("a*+", "possessive"), ("\\p{L}", "property")] {
            #expect(throws: LinearRegex.SyntaxError.self, "\(pattern)") { try LinearRegex(pattern) }
            #expect((try? LinearRegex(pattern)) == nil)
            do throws(LinearRegex.SyntaxError) { _ = try LinearRegex(pattern) } catch { #expect(error.description.contains(says), "\(error)") }
        }
    }

    @Test func test_init_refusesMalformedAndOversizedPatterns() {
        for pattern in ["(", ")", "a)", "[a", "*a", "a{3,2}", "\\", "[z-a]", "(?<n", "\\q", "[[a]]", "[a&&b]", "^*"] {
            #expect((try? LinearRegex(pattern)) == nil, "\(pattern)")
        }
        #expect((try? LinearRegex("a{1001}")) == nil)
        #expect((try? LinearRegex("(a{1000}){1000}")) == nil, "over the program size: refused, not built")
        #expect((try? LinearRegex(String(repeating: "(", count: 101) + String(repeating: ")", count: 101))) == nil)
        #expect((try? LinearRegex(String(repeating: "(", count: 100) + String(repeating: ")", count: 100))) != nil)
    }
}
