import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Finds entries whose name (or, with --values, value or fields) matches a pattern.
    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Print the names of entries that match a substring or a regular expression.",
            discussion: "With --values the values and fields are searched too; only names are printed, never values.")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "A substring, or with --regex a regular expression.") var pattern: String
        @Flag(name: .customLong("regex"), help: "Treat the pattern as a regular expression.") var regex = false
        @Flag(name: .customLong("values"), help: "Also search values and fields.") var values = false
        @Flag(name: .customLong("ignore-case"), help: "Ignore the case of letters.") var ignoreCase = false
        @Flag(name: .customLong("json"), help: "Print the matches as list --json does: name, fields, times; never values (docs/JSON.md).")
        var json = false

        func run() throws {
            let matcher = try makeMatcher()
            let vault = try unlock.open().vault
            var out = [UInt8]()
            var matches: [JSON] = []
            for (name, entry) in vault.sortedEntries {
                var hit = matcher(name)
                if !hit && values {
                    hit = ([entry.value] + entry.fields.values).contains { bytes in
                        String(validating: bytes, as: UTF8.self).map(matcher) ?? false
                    } || entry.fields.keys.contains(where: matcher)
                }
                if hit { out += Array(name.utf8) + [0x0A] }
                if hit && json { matches.append(EntryJSON.summary(name, entry)) }
            }
            guard !out.isEmpty else { throw VaultError.entryNotFound("matching '\(pattern)'") }
            if json { return try StandardOutput.line(JSON.array(matches).text) }
            try StandardOutput.write(out)
        }

        private func makeMatcher() throws -> (String) -> Bool {
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
