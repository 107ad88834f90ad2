import Foundation
import TestSupport
import Testing

/// The renaming lines of an import that renames many entries (issue 44: every renamed entry is
/// listed), written together (`Messages.InfoLines`, a `write(2)` for each 64 KiB) through the built
/// binary: one line per renaming, in the file's order, escaped as each line always was, across
/// the points where a batch is written.
@Suite struct ImportRenamingLinesCLITests {
    @Test func test_import_listsEveryRenamingOnItsOwnLineInFileOrder() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // 1,500 accounts on 5 sites, usernames out of order (7,919 is prime to 1,500: each once);
        // one username holds a control character and one title a newline (each shown escaped).
        var rows: [(title: String, site: String, user: String)] = []
        for index in 0..<1_500 {
            let site = "site-\(index % 5)"
            rows.append((index == 4 ? "site-4\nline" : site, site, index == 700 ? "v\u{1}700" : "u\((index * 7_919) % 1_500)"))
        }
        let csv = rows.enumerated().map { "\"\($1.title)\",https://\($1.site).example/login,\"\($1.user)\",pw\($0)," }
        try cli.write("c.csv", bytes("name,url,username,password,note\n" + csv.joined(separator: "\n") + "\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr.prefix(400))")
        #expect(result.stderr.utf8.count > 3 << 16, "more than three batches of lines")
        let renamed = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("vaultfile: renamed '") }
        // Every account of a title but the first by username is numbered; the title with a newline is cleaned.
        let titled = rows.filter { $0.title == $0.site }
        let first = Dictionary(grouping: titled, by: \.site).mapValues { $0.map(\.user).min { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }! }
        let numbered = titled.filter { first[$0.site] != $0.user }.map { "user \($0.user.replacingOccurrences(of: "\u{1}", with: "\\x01")), \($0.site).example" }
        #expect(renamed.count == numbered.count + 1, "\(renamed.count)")
        let accounts = renamed.compactMap { line -> String? in
            guard let start = line.range(of: "' (user ")?.upperBound, let end = line[start...].firstIndex(of: ";") else { return nil }
            return "user " + line[start..<end]
        }
        #expect(accounts == numbered, "one line each, in the file's order")
        #expect(accounts.contains("user v\\x01700, site-0.example"))
        #expect(renamed.contains { $0.hasPrefix("vaultfile: renamed 'site-4\\x0Aline' to 'site-4 line' (") }, "the newline escaped")
    }
}
