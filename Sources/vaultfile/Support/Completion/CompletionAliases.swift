import ArgumentParser

// MARK: - Aliases in the completion scripts

/// `vaultfile --generate-completion-script SHELL`, with the aliases of the top-level verbs
/// (`show`, get's alias) that swift-argument-parser's scripts leave out.
///
/// Each alias is offered beside its verb and completes as that verb does: bash and zsh get a
/// function `_vaultfile_ALIAS` that calls the verb's, fish a copy of each of the verb's lines.
/// A script whose shape is not the one expected is left as swift-argument-parser wrote it
/// (InstallAndAliasesCLITests checks that the aliases are there).
enum CompletionAliases {
    /// The shell that `arguments` ask a completion script for (`--generate-completion-script
    /// SHELL` or `=SHELL`, and nothing else), or nil: then swift-argument-parser handles them.
    static func requestedShell(in arguments: [String]) -> CompletionShell? {
        let option = "--generate-completion-script"
        switch arguments.count {
        case 1 where arguments[0].hasPrefix(option + "="):
            return CompletionShell(rawValue: String(arguments[0].dropFirst(option.count + 1)))
        case 2 where arguments[0] == option:
            return CompletionShell(rawValue: arguments[1])
        default:
            return nil
        }
    }

    /// The completion script of `root` for `shell`, with every top-level alias added, entry
    /// names completing folder by folder and `--vault` leaving lock files out (`CompletionFolders`).
    static func script(for shell: CompletionShell, root: any ParsableCommand.Type) -> String {
        CompletionFolders.apply(to: withAliases(for: shell, root: root), shell: shell, command: root.configuration.commandName ?? "vaultfile")
    }

    /// The completion script of `root` for `shell`, with every top-level alias added.
    private static func withAliases(for shell: CompletionShell, root: any ParsableCommand.Type) -> String {
        let script = root.completionScript(for: shell)
        let verbs = root.configuration.subcommands.map { $0.configuration }.filter(\.shouldDisplay)
        let aliases = verbs.flatMap { verb in verb.aliases.map { (verb: verb.commandName ?? "", alias: $0) } }
        guard !aliases.isEmpty, let firstVerb = verbs.first?.commandName else { return script }
        let names = verbs.compactMap(\.commandName) + ["help"]
        let withAliases = names.flatMap { name in [name] + aliases.filter { $0.verb == name }.map(\.alias) }
        let command = root.configuration.commandName ?? "vaultfile"
        var lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        switch shell {
        case .bash, .zsh:
            // The verbs' case pattern, bash's word list and zsh's described verbs; then one function per alias.
            replace(names.joined(separator: "|") + ")", with: withAliases.joined(separator: "|") + ")", in: &lines, wholeLine: true)
            replace("compgen -W '" + names.joined(separator: " ") + "'", with: "compgen -W '" + withAliases.joined(separator: " ") + "'", in: &lines)
            for (verb, alias) in aliases {
                if let described = lines.firstIndex(where: { $0.trimmingPrefixSpaces.hasPrefix("'\(verb):") }) {
                    lines.insert(lines[described].replacingFirst("'\(verb):", with: "'\(alias):"), at: described + 1)
                }
                if let first = lines.firstIndex(of: "_\(command)_\(firstVerb)() {") {
                    let call = shell == .bash ? "_\(command)_\(verb)" : "_\(command)_\(verb) \"$@\""
                    lines.insert(contentsOf: ["_\(command)_\(alias)() {", "    \(call)", "}", ""], at: first)
                }
            }
        case .fish:
            for (verb, alias) in aliases {
                replace("case '\(verb)'", with: "case '\(verb)' '\(alias)'", in: &lines, wholeLine: true)
                lines = lines.flatMap { line -> [String] in
                    if line.contains("\"\(command) \(verb)\"") {
                        return [line, line.replacingFirst("\"\(command) \(verb)\"", with: "\"\(command) \(alias)\"")]
                    }
                    if line.contains("\"\(command)\" -eq 1' -fa '\(verb)' ") {
                        return [line, line.replacingFirst("-fa '\(verb)' ", with: "-fa '\(alias)' ")]
                    }
                    return [line]
                }
            }
        default:
            break
        }
        return lines.joined(separator: "\n")
    }

    /// Replaces the first occurrence of `text` in the first line that holds it (or, with
    /// `wholeLine`, that is `text` once leading spaces are dropped).
    private static func replace(_ text: String, with replacement: String, in lines: inout [String], wholeLine: Bool = false) {
        guard let index = lines.firstIndex(where: { wholeLine ? $0.trimmingPrefixSpaces == text : $0.contains(text) }) else { return }
        lines[index] = lines[index].replacingFirst(text, with: replacement)
    }
}

private extension String {
    var trimmingPrefixSpaces: Substring { drop { $0 == " " || $0 == "\t" } }

    func replacingFirst(_ text: String, with replacement: String) -> String {
        replacing(text, with: replacement, maxReplacements: 1)
    }
}
