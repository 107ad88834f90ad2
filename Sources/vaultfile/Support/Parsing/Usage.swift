import ArgumentParser

// MARK: - No verb, or an unknown one

/// What `vaultfile` says before swift-argument-parser runs: a short usage when no verb is given,
/// and "did you mean" for a verb it does not know.
enum Usage {
    /// The few lines `vaultfile` alone prints on stderr (exit 64): the full help is `--help`.
    static let short = """
        usage: vaultfile VERB [options] [arguments]
          common verbs: init, set, get, list, search, generate, edit, rm, mv, exec, inject
          'vaultfile --help' lists every verb; 'vaultfile VERB --help' shows one
        """

    /// The error for the first word of `arguments` that should name a verb (or a verb of `git`)
    /// and does not, with the verbs it is close to; nil when every such word is a verb.
    ///
    /// Stops at the first option: what follows belongs to the verb, whose parser checks it.
    static func unknownVerb(in arguments: [String], root: any ParsableCommand.Type) -> CLIError? {
        var command = root
        for (position, word) in arguments.enumerated() {
            let subcommands = command.configuration.subcommands
            guard !word.hasPrefix("-"), !subcommands.isEmpty else { return nil }
            var names: [String] = ["help"]  // swift-argument-parser's own verb
            var next: (any ParsableCommand.Type)?
            for subcommand in subcommands {
                let configuration = subcommand.configuration
                let spellings = [configuration.commandName].compactMap { $0 } + configuration.aliases
                names += spellings
                if spellings.contains(word) { next = subcommand }
            }
            if word == "help" { return nil }
            guard let next else {
                if position == 0, let verb = otherToolsVerbs[word] { return .unknownVerb(word, suggestions: [verb]) }
                return .unknownVerb(word, suggestions: suggestions(for: word, among: names))
            }
            command = next
        }
        return nil
    }

    /// `--NAME=` with nothing after the `=`, before any `--`: a usage error naming it. The quick
    /// reading declines such a line, and swift-argument-parser 1.8 then takes the NEXT argument as
    /// the value (its issue 958): `import --prefix= export.csv` placed stdin's entries under
    /// `export.csv/` (cold63 F1). An empty value is given as `--NAME ''`.
    static func emptyInlineValue(in arguments: [String]) -> CLIError? {
        for argument in arguments {
            if argument == "--" { return nil }
            guard argument.hasPrefix("--"), argument.hasSuffix("="), argument.utf8.count > 3,
                  argument.utf8.firstIndex(of: UInt8(ascii: "=")) == argument.utf8.index(before: argument.utf8.endIndex) else { continue }
            let name = String(argument.dropLast())
            return .invalidArgument("\(name)= has no value after the '=': an option takes its value there or as the next word "
                + "(\(name)=VALUE, \(name) VALUE; an empty one as \(name) ''), a flag none (\(name))")
        }
        return nil
    }

    /// `arguments` with the global options given before the verb (`--vault PATH`, `--vault=PATH`,
    /// `--no-agent`) moved to just after the verb's words (`--vault X slot add K` reads as
    /// `slot add --vault X K`), where the verb's parser takes them; unchanged when the first word is
    /// none of them. `--vault` without a path, or these options with no verb after them, are told
    /// as such (not as an unknown option); `--vault` given after the verb as well is refused (which
    /// of the two was meant?), a second `--no-agent` is dropped.
    static func movingVaultAfterVerb(_ arguments: [String], root: any ParsableCommand.Type) throws(CLIError) -> [String] {
        var option: [String] = [], index = 0, vaults = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--vault" {
                guard index + 1 < arguments.count else {
                    throw .invalidArgument("--vault needs the vault's path: vaultfile --vault PATH VERB …")
                }
                option += [word, arguments[index + 1]]
                index += 2
                vaults += 1
            } else if word.hasPrefix("--vault=") || word == "--no-agent" {
                option.append(word)
                index += 1
                if word != "--no-agent" { vaults += 1 }
            } else {
                break
            }
        }
        guard !option.isEmpty else { return arguments }
        if vaults > 1 { throw .invalidArgument("--vault is given twice before the verb; give it once") }
        let rest = Array(arguments.dropFirst(index))
        guard !rest.isEmpty else {
            let given = option.contains("--no-agent") && vaults == 0 ? "--no-agent" : "--vault"
            throw .invalidArgument("\(given) is given but no verb: put the verb after it (vaultfile \(option.joined(separator: " ")) list, "
                                   + "or another verb)")
        }
        var command = root, verbWords = 0
        for word in rest {
            guard !word.hasPrefix("-"), let next = command.configuration.subcommands.first(where: {
                $0.configuration.commandName == word || $0.configuration.aliases.contains(word)
            }) else { break }
            command = next
            verbWords += 1
        }
        // No verb named: the words first, so that an unknown verb is told as one.
        guard verbWords > 0 else { return rest + option }
        let afterVerb = rest.dropFirst(verbWords)
        let end = afterVerb.firstIndex(of: "--") ?? afterVerb.endIndex
        if vaults > 0, afterVerb[..<end].contains(where: { $0 == "--vault" || $0.hasPrefix("--vault=") }) {
            throw .invalidArgument("--vault is given both before the verb and after it; give it once")
        }
        if afterVerb[..<end].contains("--no-agent") { option.removeAll { $0 == "--no-agent" } }
        return Array(rest.prefix(verbWords)) + option + afterVerb
    }

    /// The hint under a usage error: the help of the verb `arguments` name (`'vaultfile slot add
    /// --help' shows its arguments and options`), or of vaultfile itself when they name none.
    /// Words are verbs from the first on, past `--vault PATH` given before the verb.
    static func helpHint(for arguments: some Collection<String>, root: any ParsableCommand.Type) -> String {
        var command = root, path: [String] = [], skipNext = false
        for word in arguments {
            if skipNext { skipNext = false; continue }
            if path.isEmpty && word == "--vault" { skipNext = true; continue }
            if path.isEmpty && (word.hasPrefix("--vault=") || word == "--no-agent") { continue }
            guard !word.hasPrefix("-"), let next = command.configuration.subcommands.first(where: {
                $0.configuration.commandName == word || $0.configuration.aliases.contains(word)
            }) else { break }
            path.append(next.configuration.commandName ?? word)
            command = next
        }
        if path.isEmpty { return "'vaultfile --help' lists every verb; 'vaultfile VERB --help' shows one" }
        return "'vaultfile \(path.joined(separator: " ")) --help' shows its arguments and options"
    }

    /// The verbs of pass, keepassxc-cli, Bitwarden's bw and ansible-vault that vaultfile spells
    /// otherwise, with vaultfile's: by spelling alone, `insert` was close to `inject` and `remove`
    /// to `resolve`.
    static let otherToolsVerbs: [String: String] = [
        "insert": "set", "add": "set", "create": "init", "db-create": "init", "new": "init",
        "remove": "rm", "delete": "rm", "del": "rm", "rmdir": "rm -r",
        "find": "search", "grep": "search", "copy": "cp", "move": "mv", "rename": "mv",
        "cat": "get", "view": "get", "clip": "get --clip", "db-info": "info",
        "dump": "export", "diceware": "generate --words 7", "otp": "totp",
    ]

    /// The names `word` may have meant: those it begins, for a shortened verb (`gen`), then those
    /// within a small edit distance (a swap of two neighbours counts one, as in `lsit`).
    static func suggestions(for word: String, among names: [String]) -> [String] {
        var found = word.count >= 2 ? names.filter { $0.hasPrefix(word) } : []
        let scored = names.map { (name: $0, distance: editDistance(word, $0)) }
        let close = scored.filter { $0.distance <= max(1, min(2, $0.name.count / 3)) }
        if let best = close.map(\.distance).min() {
            found += close.filter { $0.distance == best && !found.contains($0.name) }.map(\.name)
        }
        return found
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// two neighbouring characters each count one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}

// MARK: - Help with the vault options last

/// Moves the "Vault options" section of a verb's help after the verb's own options.
///
/// swift-argument-parser prints titled option groups before the untitled options, whatever the
/// order they are declared in; a verb's own options (`--field`, `--json`) are what its help is
/// read for, and the eight options every vault verb shares come after them. The usage line
/// names them as `[<vault options>]` at its end.
///
/// Why this is not done with the parser's own titles (swift-argument-parser 1.8.2,
/// `HelpGenerator.generateSections`): it renders ARGUMENTS, then every titled section in the
/// order first declared, then the untitled OPTIONS section, always last, and it always adds its
/// `--version` and `-h, --help` to that untitled section. Titling the verb's own options
/// "Options" (`@OptionGroup(title:)`) would put them first but print a second "OPTIONS:" with
/// only `--version` and `-h, --help` after the vault options; `CommandConfiguration(usage:)`
/// would shorten the usage line only as a hand-written string per verb. So the help keeps its
/// layout through this one step, which finds sections by the parser's own titles
/// (`vaultOptionsTitle`, "OPTIONS") and changes nothing else.
enum HelpLayout {
    /// `help` with the section moved, or nil when it has no such section (not a vault verb).
    static func reordered(_ help: String) -> String? {
        let title = vaultOptionsTitle.uppercased() + ":\n"
        // Sections are separated by a blank line; the last one ends with a newline, kept at the end.
        let body = help.reversed().drop { $0 == "\n" }.reversed()
        let ending = String(repeating: "\n", count: help.count - body.count)
        var sections = String(body).split(separator: "\n\n", omittingEmptySubsequences: false).map(String.init)
        guard let vaultIndex = sections.firstIndex(where: { $0.hasPrefix(title) }) else { return nil }
        let vault = sections.remove(at: vaultIndex)
        let optionsIndex = sections.firstIndex { $0.hasPrefix("OPTIONS:\n") }
        sections.insert(vault, at: optionsIndex.map { $0 + 1 } ?? sections.endIndex)
        if let usageIndex = sections.firstIndex(where: { $0.hasPrefix("USAGE: ") }) {
            sections[usageIndex] = shortenedUsage(sections[usageIndex], vaultSection: vault)
        }
        return sections.joined(separator: "\n\n") + ending
    }

    /// The usage line with the run of vault options it lists (`[--vault <path>] …`) replaced
    /// by `[<vault options>]` at its end; unchanged when it does not list them one by one.
    static func shortenedUsage(_ usage: String, vaultSection: String) -> String {
        // Each option of the section starts a line with two spaces and "--": its name, then its
        // value's name in angle brackets if it takes one.
        let labels = vaultSection.split(separator: "\n").dropFirst().compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            let words = line.split(separator: " ")
            guard words.count > 1, words[1].hasPrefix("<") else { return String(words[0]) }
            return "\(words[0]) \(words[1])"
        }
        let run = labels.map { "[\($0)]" }.joined(separator: " ")
        // The run comes before the verb's own arguments, or ends the line when it has none.
        guard !labels.isEmpty, let range = usage.firstRange(of: run + " ") ?? usage.firstRange(of: " " + run) else { return usage }
        var shortened = usage
        shortened.removeSubrange(range)
        shortened.insert(contentsOf: " [<vault options>]", at: shortened.firstIndex(of: "\n") ?? shortened.endIndex)
        return shortened
    }
}
