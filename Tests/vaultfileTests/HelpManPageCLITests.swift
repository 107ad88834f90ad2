import Foundation
import TestSupport
import Testing

/// Every verb's `--help` against itself and against man/vaultfile.1: each option's default said
/// once, the vault options after the verb's own under their heading, and every long option of a
/// verb in that verb's section of the manual page.
@Suite struct HelpManPageCLITests {
    /// One verb's help: the long options of its own OPTIONS section and of its VAULT OPTIONS
    /// section, and the text of each option's entry (label and description lines).
    private struct VerbHelp {
        let verb: [String]
        let text: String
        var own: [String] = []
        var vault: [String] = []
        var entries: [String] = []

        init(verb: [String], text: String) {
            self.verb = verb
            self.text = text
            var section = ""
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if !line.hasPrefix(" ") && line.hasSuffix(":") { section = String(line); continue }
                guard section == "OPTIONS:" || section == "VAULT OPTIONS:" else { continue }
                if line.hasPrefix("  -") {
                    entries.append(String(line))
                    let names = Self.longOptions(inLabel: line).filter { $0 != "--help" && $0 != "--version" }
                    if section == "OPTIONS:" { own += names } else { vault += names }
                } else if line.hasPrefix("   "), !entries.isEmpty {
                    entries[entries.count - 1] += "\n" + line
                }
            }
        }

        /// The long options an entry's label names (`-i, --ignore-case`, `--vault <path>`), not
        /// those its description mentions.
        static func longOptions(inLabel line: Substring) -> [String] {
            var names: [String] = []
            for word in line.split(separator: " ") {
                let word = word.hasSuffix(",") ? word.dropLast() : word
                if word.hasPrefix("<") { continue }
                guard word.hasPrefix("-") else { break }
                names += word.split(separator: "/").filter { $0.hasPrefix("--") }.map(String.init)
            }
            return names
        }
    }

    /// The verbs (with `git`'s as `git setup` …) from the root help, each with its help.
    private func everyVerbHelp() throws -> [VerbHelp] {
        let verbs = try Self.verbHelpTexts.get()
        #expect(verbs.count >= 20)
        return verbs.map { VerbHelp(verb: $0.verb, text: $0.text) }
    }

    /// Each verb with its `--help` text, read from the binary once for the whole suite: a reading
    /// runs it about seventy times, and the four callers of `everyVerbHelp` read the same texts.
    private static let verbHelpTexts: Result<[(verb: [String], text: String)], any Error> = Result {
        let cli = try CLI(); defer { cli.directory.remove() }
        var verbs: [[String]] = []
        for verb in try subcommands(of: [], in: cli) {
            let nested = try subcommands(of: [verb], in: cli)
            verbs += nested.isEmpty ? [[verb]] : nested.map { [verb, $0] }
        }
        return try verbs.map { (verb: $0, text: try cli.run($0 + ["--help"]).text) }
    }

    /// The subcommands `--help` of `arguments` lists, each by its name.
    private static func subcommands(of arguments: [String], in cli: CLI) throws -> [String] {
        let help = try cli.run(arguments + ["--help"]).text
        return help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first.map { part in
            part.split(separator: "\n")
                .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") && !$0.contains("See '") }
                // "get, show": a verb and its aliases; the verb is the name before the comma.
                .compactMap { $0.split(separator: " ").first.map { String($0.split(separator: ",")[0]) } }
        } ?? []
    }

    /// The section `.SS title` of the manual page, up to the next `.SS` or `.SH`.
    private func manSection(_ man: String, _ title: String) -> String? {
        guard let start = man.range(of: "\n.SS \(title)\n") else { return nil }
        let rest = man[start.upperBound...]
        let end = [rest.range(of: "\n.SS "), rest.range(of: "\n.SH ")].compactMap { $0?.lowerBound }.min() ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The long options a man page text names (`\-\-value\-file` is `--value-file`).
    private func longOptions(inMan text: String) -> Set<String> {
        let unescaped = text.replacingOccurrences(of: "\\-", with: "-")
        let pattern = try! NSRegularExpression(pattern: "--[a-z0-9][a-z0-9-]*")
        let range = NSRange(unescaped.startIndex..., in: unescaped)
        return Set(pattern.matches(in: unescaped, range: range).map { String(unescaped[Range($0.range, in: unescaped)!]) })
    }

    private var manPage: String {
        get throws { try String(contentsOf: ProjectPaths.root.appendingPathComponent("man/vaultfile.1"), encoding: .utf8) }
    }

    // MARK: - --help

    @Test func test_help_noOptionSaysItsDefaultTwice() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for help in try everyVerbHelp() {
            // swift-argument-parser adds "(default: …)" to an option with a default value; the
            // description then says no other default (a KDF option may name one per KDF).
            for entry in help.entries where entry.contains("(default: ") {
                let count = entry.lowercased().components(separatedBy: "default").count - 1
                #expect(count == 1, "\(help.verb.joined(separator: " ")): \(entry)")
            }
        }
        let generate = try cli.run(["generate", "--help"]).text
        #expect(generate.contains("(default: 24)") && !generate.contains("(default 24)"))
    }

    @Test func test_help_noLineEndsInABackslash() throws {
        // A `\\` at a line end of a discussion is printed as it is (slot label did, issue fixatk 7).
        let cli = try CLI(); defer { cli.directory.remove() }
        for help in try everyVerbHelp() {
            let lines = help.text.split(separator: "\n").filter { $0.hasSuffix("\\") }
            #expect(lines.isEmpty, "\(help.verb.joined(separator: " ")): \(lines)")
        }
    }

    @Test func test_help_vaultOptionsComeAfterTheVerbsOwnUnderAHeading() throws {
        let unlocking = ["--vault", "--lock-timeout", "--identity", "--identity-passphrase-file", "--identity-passphrase-fd", "--keyfile", "--recovery", "--recovery-file",
                         "--password-file", "--password-fd", "--password-command",
                         "--kdf-max-memory", "--kdf-max-work", "--kdf-max-iterations", "--allow-rollback", "--accept-rotation", "--allow-untrusted", "--no-agent"]
        var vaultVerbs = 0
        for help in try everyVerbHelp() where !help.vault.isEmpty {
            vaultVerbs += 1
            let name = help.verb.joined(separator: " ")
            #expect(help.own.allSatisfy { !unlocking.contains($0) }, "\(name): vault options among its own")
            let own = try #require(help.text.range(of: "\nOPTIONS:\n"), "\(name)")
            let vault = try #require(help.text.range(of: "\nVAULT OPTIONS:\n"), "\(name)")
            #expect(own.lowerBound < vault.lowerBound, "\(name): the vault options come after the verb's own")
            #expect(!help.text.contains("\n\n\n"), "\(name): one blank line between sections")
            let usage = try #require(help.text.split(separator: "\n").first { $0.hasPrefix("USAGE: ") })
            #expect(!usage.hasPrefix("USAGE: vaultfile \(name) [--vault"), "\(name): the usage line starts with the verb's own: \(usage)")
        }
        #expect(vaultVerbs >= 15)
        let set = try #require(try everyVerbHelp().first { $0.verb == ["set"] })
        #expect(set.vault == unlocking, "the vault options, in their order")
    }

    // MARK: - The manual page

    @Test func test_manPage_namesEveryLongOptionOfEveryVerbInItsSection() throws {
        let man = try manPage
        let shared = try #require(manSection(man, "Options of every verb that opens a vault"))
        for help in try everyVerbHelp() {
            let name = help.verb.joined(separator: " ")
            let section = try #require(manSection(man, name), "man page lacks '.SS \(name)'")
            let documented = longOptions(inMan: section)
            for option in help.own {
                #expect(documented.contains(option), "man page, \(name): \(option) is missing")
            }
            for option in help.vault {
                #expect(longOptions(inMan: shared).contains(option), "man page, vault options: \(option) is missing")
            }
        }
    }

    /// A help text's "See man vaultfile: …" names sections the page has (audit said "AUDIT", which it has not).
    @Test func test_help_seeManNamesSectionsThatExist() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let man = try manPage
        let help = try cli.run(["audit", "--help"]).text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let reference = try #require(help.range(of: "See man vaultfile").map { String(help[$0.upperBound...]) }, "\(help)")
        #expect(reference.hasPrefix(": audit under VERBS, and STRENGTH ESTIMATE."), "\(reference)")
        for section in ["VERBS", "STRENGTH ESTIMATE"] { #expect(man.contains("\n.SH \(section)\n"), "\(section)") }
        #expect(manSection(man, "audit") != nil)
    }

    /// No troff special character for a stray "|" (the import paragraph had "export\(or)").
    @Test func test_manPage_hasNoStrayOrCharacter() throws {
        #expect(!(try manPage).contains("\\(or"))
    }

    @Test func test_manPage_setSynopsisNamesGenerate() throws {
        let set = try #require(manSection(try manPage, "set"))
        let synopsis = set.components(separatedBy: "\n.PP\n").first ?? ""
        #expect(longOptions(inMan: synopsis).isSuperset(of: ["--generate", "--print", "--allow-empty", "--value-file", "--field"]), "\(synopsis)")
    }
}
