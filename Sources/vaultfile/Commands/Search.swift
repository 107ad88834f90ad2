import ArgumentParser
import KDF
import LinearRegex
import SecureMemory
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

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
                Exits 1 when no entry matches. A pattern that is part of a secret belongs in --pattern-file \
                (- for stdin), not on the command line, where shell history and the process list keep it. \
                Regular expressions run in time proportional to the text (no backreferences or lookaround); \
                see man vaultfile.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "A substring, or with --regex a regular expression.") var pattern: String?
        @Option(name: .customLong("pattern-file"), help: ArgumentHelp(
            "Read the pattern from this file (- for stdin); one trailing newline is removed.", valueName: "file"))
        var patternFile: String?
        @Flag(name: .customLong("regex"), help: "Treat the pattern as a regular expression.") var regex = false
        @Flag(name: .customLong("values"), help: "Also search values and fields.") var values = false
        @Flag(exclusivity: .chooseLast) var caseMatching: CaseMatching?
        @Flag(name: .customLong("json"), help: "Print the matches as list --json does: name, fields, times; never values (docs/JSON.md).")
        var json = false

        func validate() throws {
            if pattern != nil && patternFile != nil { throw ValidationError("give the pattern as an argument or with --pattern-file, not both") }
            if pattern == nil && patternFile == nil { throw ValidationError("missing the pattern: give it as an argument, or with --pattern-file FILE (- for stdin)") }
        }

        func run() throws {
            let text = try readPattern()
            // A pattern from a file may be part of a secret: messages name the file, never the pattern.
            let shown = patternFile.map { $0 == "-" ? "the pattern from standard input" : "the pattern in \($0)" } ?? "'\(text)'"
            // Built before the vault is opened: a bad regular expression is reported without asking for a password.
            let matcher = try makeMatcher(text, shown: shown)
            let vault = try unlock.open(entriesOnly: true).vault
            let (out, matches) = try search(vault, matcher: matcher, pattern: text, escaping: StandardOutput.isTerminal)
            guard !out.isEmpty else {
                throw CLIError.noMatch(pattern: shown, searchedValues: values, caseSensitive: !ignoresCase(text))
            }
            if json { return try StandardOutput.line(JSON.array(matches).text) }
            try StandardOutput.write(out)
        }

        /// The lines to print (the names that match, escaped on a terminal) and, with --json, their summaries.
        ///
        /// With --values or --json, every entry is read from its bytes where they lie
        /// (`Vault.forEachEntryBytes`): a value is searched in place when it is UTF-8 text (the
        /// substring finder reads bytes; a regular expression gets a string), and no entry is decoded.
        /// Decoding every entry first (`searchThroughEntries`, the plain reference) made
        /// `search --values` 4–6× a `verify` at 100,000 entries.
        func search(_ vault: Vault, matcher textMatcher: @escaping (String) throws -> Bool, pattern: String,
                    escaping: Bool) throws -> (lines: [UInt8], matches: [JSON]) {
            guard values || json else { return try searchThroughEntries(vault, matcher: textMatcher, escaping: escaping) }
            let matcher = makeByteMatcher(textMatcher, pattern: pattern)
            var out = [UInt8]()
            var matches: [JSON] = []
            var failure: (any Error)?
            vault.forEachEntryBytes { entry in
                guard failure == nil else { return }
                do {
                    var hit = try matcher(entry.name)
                    if !hit && values {
                        hit = try UTF8Bytes.isValid(entry.value) && matcher(entry.value)
                        for field in entry.fields where !hit { hit = try UTF8Bytes.isValid(field.value) && matcher(field.value) }
                        for field in entry.fields where !hit { hit = try matcher(field.name) }
                    }
                    guard hit else { return }
                    let name = String(decoding: entry.name, as: UTF8.self)
                    // On a terminal, bidi controls and invisible characters in a name are shown escaped (\u{202E}).
                    out += (escaping ? EntryName.escapingFormatCharacters(name) : name).utf8
                    out.append(0x0A)
                    if json { matches.append(EntryJSON.summary(entry)) }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            return (out, matches)
        }

        /// `search` through `sortedEntries` (every entry decoded): the plain reference it is tested
        /// against, and the names-only search, which reads the names alone.
        func searchThroughEntries(_ vault: Vault, matcher: (String) throws -> Bool, escaping: Bool) throws -> (lines: [UInt8], matches: [JSON]) {
            var out = [UInt8]()
            var matches: [JSON] = []
            // Names only (no --values, no --json): the names, without decoding (copying) every entry.
            let decodes = values || json
            let names = decodes ? [] : vault.names
            let entries = decodes ? vault.sortedEntries : []
            for index in 0..<(decodes ? entries.count : names.count) {
                let name = decodes ? entries[index].name : names[index]
                var hit = try matcher(name)
                if !hit && values {
                    let entry = entries[index].entry
                    hit = try ([entry.value] + entry.fields.values).contains { bytes in
                        try String(validating: bytes, as: UTF8.self).map(matcher) ?? false
                    } || entry.fields.keys.contains(where: matcher)
                }
                // On a terminal, bidi controls and invisible characters in a name are shown escaped (\u{202E}).
                if hit {
                    out += (escaping ? EntryName.escapingFormatCharacters(name) : name).utf8
                    out.append(0x0A)
                }
                if hit && json { matches.append(EntryJSON.summary(name, entries[index].entry)) }
            }
            return (out, matches)
        }

        /// Whether letters match whatever their case: -i, -s, else smart case (ignored unless the
        /// pattern holds an upper-case letter).
        func ignoresCase(_ pattern: String) -> Bool {
            switch caseMatching {
            case .ignoreCase?: return true
            case .caseSensitive?: return false
            case nil: return !CaseMatching.hasUpperCase(pattern, regex: regex)
            }
        }

        /// The pattern from the argument, or from --pattern-file without one trailing newline.
        private func readPattern() throws -> String {
            guard let patternFile else { return pattern! }
            var bytes = try patternFile == "-" ? Input.readAll(STDIN_FILENO, what: "standard input") : Input.readFile(patternFile)
            defer { wipe(&bytes) }
            if bytes.last == 0x0A { bytes.removeLast() }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CLIError.invalidArgument("the pattern in \(patternFile == "-" ? "standard input" : patternFile) is not UTF-8")
            }
            return text
        }

        /// `matcher` (from `makeMatcher(pattern)`) over UTF-8 text where it lies: the substring finder reads the bytes (lowering
        /// ASCII as it goes; other text is lowered as a string first, as before), a regular expression
        /// gets the text as a string.
        private func makeByteMatcher(_ matcher: @escaping (String) throws -> Bool, pattern: String) -> (UnsafeRawBufferPointer) throws -> Bool {
            // A regular expression's matcher is the one given, so that its work budget stays one for the whole search.
            guard !regex else { return { try matcher(String(decoding: $0, as: UTF8.self)) } }
            let ignoreCase = ignoresCase(pattern)
            let finder = SubstringFinder(Array((ignoreCase ? pattern.lowercased() : pattern).utf8))
            return { text in
                if let found = finder.occurs(in: text.assumingMemoryBound(to: UInt8.self), loweringASCII: ignoreCase) { return found }
                var lowered = String(decoding: text, as: UTF8.self).lowercased()
                return lowered.withUTF8 { finder.occurs(in: $0, loweringASCII: false)! }
            }
        }

        /// A test of one text; a regular expression's shares one work budget over the whole search.
        func makeMatcher(_ pattern: String, shown: String) throws -> (String) throws -> Bool {
            let ignoreCase = ignoresCase(pattern)
            if regex {
                let expression: LinearRegex
                do {
                    expression = try LinearRegex(pattern, ignoringCase: ignoreCase)
                } catch {
                    throw CLIError.invalidArgument("invalid regular expression \(shown): \(error)")
                }
                var budget = LinearRegex.WorkBudget()
                return { text in
                    do throws(LinearRegex.OverLimit) {
                        return try expression.matches(text, budget: &budget)
                    } catch {
                        throw CLIError.regexWorkLimit(pattern: shown, initialSteps: error.initialSteps, stepsPerCharacter: error.stepsPerScalar)
                    }
                }
            }
            let needle = ignoreCase ? pattern.lowercased() : pattern
            let finder = SubstringFinder(Array(needle.utf8))
            return { text in
                var text = text
                // ASCII text is lowered byte by byte as it is read (what `lowercased()` does to it),
                // without a new string for every name and value searched; other text is lowered first.
                if let found = text.withUTF8({ finder.occurs(in: $0, loweringASCII: ignoreCase) }) { return found }
                var lowered = text.lowercased()
                return lowered.withUTF8 { finder.occurs(in: $0, loweringASCII: false)! }
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

// MARK: - Substring

/// Finds a byte string in a text in time proportional to both (Knuth–Morris–Pratt): a long
/// pattern from --pattern-file against a 256 MiB value must not cost their product.
struct SubstringFinder {
    private let needle: [UInt8]
    /// For each prefix of the needle, the length of its longest proper border.
    private let borders: [Int]

    init(_ needle: [UInt8]) {
        self.needle = needle
        var borders = [Int](repeating: 0, count: needle.count)
        var length = 0
        for index in needle.indices.dropFirst() {
            while length > 0 && needle[index] != needle[length] { length = borders[length - 1] }
            if needle[index] == needle[length] { length += 1 }
            borders[index] = length
        }
        self.borders = borders
    }

    /// Whether the needle occurs in `text` (an empty needle occurs everywhere).
    /// With `loweringASCII`, upper-case ASCII letters are read as lower-case ones, and nil means the
    /// text is not all ASCII (the caller then lowers it as a string).
    func occurs(in text: UnsafeBufferPointer<UInt8>, loweringASCII: Bool) -> Bool? {
        guard !needle.isEmpty else { return true }
        var matched = 0
        for var byte in text {
            if loweringASCII {
                guard byte < 0x80 else { return nil }
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
            }
            while matched > 0 && byte != needle[matched] { matched = borders[matched - 1] }
            if byte == needle[matched] { matched += 1 }
            if matched == needle.count { return true }
        }
        return false
    }
}
