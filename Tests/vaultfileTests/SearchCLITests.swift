import Foundation
import TestSupport
import Testing

/// `vaultfile search`: case, no match, `--json`, the pattern from a file or stdin, and regular
/// expressions that would run for hours in a backtracking engine.
@Suite struct SearchCLITests {

    // MARK: - Matching

    @Test func test_search_smartCaseAndTheCaseFlags() throws {
        let cli = try CLI.withEntriesSet(["Work/GitHub": "x", "home/gitea": "y"]); defer { cli.directory.remove() }
        func search(_ arguments: [String]) throws -> CLI.Result { try cli.run(["search"] + arguments + cli.unlock()) }
        #expect(try search(["git"]).text == "Work/GitHub\nhome/gitea\n", "lower case ignores case")
        #expect(try search(["Git"]).text == "Work/GitHub\n", "an upper-case letter matches case")
        #expect(try search(["GIT"]).status == 1)
        #expect(try search(["GIT", "-i"]).text == "Work/GitHub\nhome/gitea\n")
        #expect(try search(["GIT", "--ignore-case"]).text == "Work/GitHub\nhome/gitea\n")
        #expect(try search(["git", "-s"]).text == "home/gitea\n")
        #expect(try search(["git", "--case-sensitive"]).text == "home/gitea\n")
        #expect(try search(["git", "-i", "-s"]).text == "home/gitea\n", "the last of -i and -s wins")
        #expect(try search(["--regex", "\\Sithub$"]).text == "Work/GitHub\n", "an escape such as \\S is not an upper-case letter")
    }

    @Test func test_search_noMatchSaysSoAndExits1() throws {
        let cli = try CLI.withEntriesSet(["a": "x"]); defer { cli.directory.remove() }
        let none = try cli.run(["search", "zzz"] + cli.unlock())
        #expect(none.status == 1)
        #expect(none.stderr.contains("vaultfile: error: no entry matches 'zzz'"), "\(none.stderr)")
        #expect(!none.stderr.contains("no entry named"))
        #expect(none.stderr.contains("--values"), "the hint says how to search further: \(none.stderr)")
    }

    // MARK: - --json

    @Test func test_searchJson_listsMatchesWithoutValues() throws {
        let cli = try CLI.withEntriesSet([("Work/GitHub", bytes("tok")), ("home/wifi", bytes("w"))]); defer { cli.directory.remove() }
        let result = try cli.run(["search", "Git", "--json"] + cli.unlock())
        let matches = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]])
        #expect(matches.map { $0["name"] as? String } == ["Work/GitHub"])
        #expect(matches.first?["modified"] is String && !result.text.contains("tok"))
    }

    // MARK: - --pattern-file

    @Test func test_search_readsThePatternFromAFileOrStdin() throws {
        let cli = try CLI.withEntriesSet(["prod/db": "the-needle-value", "dev/db": "hay"]); defer { cli.directory.remove() }
        try cli.write("pattern", Array("needle\n".utf8))
        let fromFile = try cli.run(["search", "--values", "--pattern-file", cli.path("pattern")] + cli.unlock())
        #expect(fromFile.status == 0 && fromFile.text == "prod/db\n", "\(fromFile.stderr)")
        let fromStdin = try cli.run(["search", "--values", "--regex", "--pattern-file", "-"] + cli.unlock(), stdin: Array("n[e]+dle\n".utf8))
        #expect(fromStdin.status == 0 && fromStdin.text == "prod/db\n", "\(fromStdin.stderr)")
        try cli.write("secret", Array("hunter2-part\n".utf8))
        let missing = try cli.run(["search", "--values", "--pattern-file", cli.path("secret")] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("the pattern in") && !missing.stderr.contains("hunter2"), "\(missing.stderr)")
        try cli.write("bad", Array("(hunter2\n".utf8))
        let bad = try cli.run(["search", "--regex", "--pattern-file", cli.path("bad")] + cli.unlock())
        #expect(bad.status == 64 && !bad.stderr.contains("hunter2"), "\(bad.stderr)")
        #expect(try cli.run(["search", "x", "--pattern-file", cli.path("pattern")] + cli.unlock()).status == 64)
        #expect(try cli.run(["search"] + cli.unlock()).status == 64)
    }

    // MARK: - --regex in linear time

    @Test func test_search_catastrophicRegexFinishesInLinearTime() throws {
        // Swift's backtracking Regex ran past 10 s on this (2^40 ways to split the run of a's).
        let cli = try CLI.withEntriesSet(["entry": String(repeating: "a", count: 40) + "!"]); defer { cli.directory.remove() }
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        let result = try cli.shell("timeout 60 \"$VF\" search --values --regex '^(a+)+$' \(unlock)")
        #expect(result.status == 1, "no match, found quickly (124 = killed after 60 s): \(result.stderr)")
        let refused = try cli.run(["search", "--regex", "(a)\\1"] + cli.unlock())
        #expect(refused.status == 64 && refused.stderr.contains("backreferences are not supported"), "\(refused.stderr)")
    }

    @Test func test_search_aPathologicalRegexStopsAtItsWorkLimit() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "big"] + cli.unlock(), stdin: [UInt8](repeating: 0x61, count: 1 << 20)).status == 0)
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        // About 3,000 states alive at every character of 1 MiB: 10^10 steps, hours, before the budget.
        let stopped = try cli.shell("timeout 120 \"$VF\" search --values --regex '(a?){1000}c' \(unlock)")
        #expect(stopped.status == 6, "over the limit, at once (124 = killed after 120 s): \(stopped.stderr)")
        #expect(stopped.stderr.contains("1000 steps per character") && stopped.stderr.contains("(a?){1000}c"), "\(stopped.stderr)")
        let ordinary = try cli.shell("timeout 120 \"$VF\" search --values --regex 'x[0-9]+y|^a+$' \(unlock)")
        #expect(ordinary.status == 0 && ordinary.text == "big\n", "\(ordinary.status) \(ordinary.stderr)")
    }
}
