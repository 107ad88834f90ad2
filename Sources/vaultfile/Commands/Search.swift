import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Finds entries whose name (or, with --values, value or fields) matches a pattern.
    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Print the names of entries that match a substring or a regular expression.",
            discussion: """
                Smart case, as ripgrep: a pattern without upper-case letters ignores case ('git' finds \
                Work/GitHub), one with an upper-case letter matches case exactly; -i and -s choose. With \
                --values the values and fields are searched too; only names are printed, never values. \
                Exits 1 when no entry matches.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "A substring, or with --regex a regular expression.") var pattern: String
        @Flag(name: .customLong("regex"), help: "Treat the pattern as a regular expression.") var regex = false
        @Flag(name: .customLong("values"), help: "Also search values and fields.") var values = false
        @Flag(exclusivity: .chooseLast) var caseMatching: CaseMatching?

        func run() throws {
            let matcher = try makeMatcher()
            let vault = try unlock.open().vault
            var out = [UInt8]()
            for (name, entry) in vault.sortedEntries {
                var hit = matcher(name)
                if !hit && values {
                    hit = ([entry.value] + entry.fields.values).contains { bytes in
                        String(validating: bytes, as: UTF8.self).map(matcher) ?? false
                    } || entry.fields.keys.contains(where: matcher)
                }
                if hit { out += Array(name.utf8) + [0x0A] }
            }
            guard !out.isEmpty else { throw CLIError.noMatch(pattern: pattern, searchedValues: values, caseSensitive: !ignoresCase) }
            try StandardOutput.write(out)
        }

        /// Whether letters match whatever their case: -i, -s, else smart case (ignored unless the
        /// pattern holds an upper-case letter).
        var ignoresCase: Bool {
            switch caseMatching {
            case .ignoreCase?: return true
            case .caseSensitive?: return false
            case nil: return !CaseMatching.hasUpperCase(pattern, regex: regex)
            }
        }

        private func makeMatcher() throws -> (String) -> Bool {
            let ignoreCase = ignoresCase
            if regex {
                do {
                    let expression = try Regex(pattern)
                    let compiled = ignoreCase ? expression.ignoresCase() : expression
                    return { (try? compiled.firstMatch(in: $0)) != nil }
                } catch {
                    throw CLIError.invalidArgument("invalid regular expression '\(pattern)': \(error)")
                }
            }
            let needle = ignoreCase ? pattern.lowercased() : pattern
            return { text in
                let haystack = ignoreCase ? text.lowercased() : text
                return needle.isEmpty || haystack.utf8.indices.contains { haystack.utf8[$0...].starts(with: needle.utf8) }
            }
        }
    }
}

// MARK: - Case

/// `search -i` and `-s`: ignore case, or match it exactly; neither means smart case.
enum CaseMatching: EnumerableFlag {
    case ignoreCase
    case caseSensitive

    static func name(for value: CaseMatching) -> NameSpecification {
        switch value {
        case .ignoreCase: return [.customShort("i"), .customLong("ignore-case")]
        case .caseSensitive: return [.customShort("s"), .customLong("case-sensitive")]
        }
    }

    static func help(for value: CaseMatching) -> ArgumentHelp? {
        switch value {
        case .ignoreCase: return "Ignore the case of letters."
        case .caseSensitive: return "Match the case of letters exactly."
        }
    }

    /// Whether `pattern` holds an upper-case letter, the smart-case rule. In a regular expression
    /// an escape (`\W`, `\S`, `\p{Lu}`) is not a letter of the text searched for, so it does not count.
    static func hasUpperCase(_ pattern: String, regex: Bool) -> Bool {
        let scalars = Array(pattern.unicodeScalars)
        var index = 0
        while index < scalars.count {
            guard regex && scalars[index] == "\\" else {
                if scalars[index].properties.isUppercase { return true }
                index += 1
                continue
            }
            // An escape and the character after it; \p{…} and \P{…} up to the closing brace.
            let escaped = index + 1 < scalars.count ? scalars[index + 1] : nil
            index += 2
            if escaped == "p" || escaped == "P", index < scalars.count, scalars[index] == "{" {
                while index < scalars.count && scalars[index] != "}" { index += 1 }
                index += 1
            }
        }
        return false
    }
}
