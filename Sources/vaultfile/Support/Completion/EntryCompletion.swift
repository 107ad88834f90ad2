import ArgumentParser
import SecureMemory
import VaultFile
import VaultFormat
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Completing entry names from the agent

/// Shell completion of entry names (and of field names after `#`, or after `--field`), served
/// from the agent when it holds the key of the vault on the command line (`--vault`, else
/// `VAULTFILE_PATH`, else the default vault).
///
/// It never prompts and never prints anything but candidates: with no agent, no key, `--no-agent`,
/// `VAULTFILE_NO_AGENT`, or any error, it offers nothing. swift-argument-parser runs it inside
/// `vaultfile ---completion …` when the shell asks (bash, zsh, fish).
enum EntryCompletion {
    /// The completion of an entry-name argument.
    static let names = CompletionKind.custom { words, index, prefix in candidates(words: words, prefix: word(words, index, prefix)) }
    /// The completion of `--field`: the fields of the entry named on the command line.
    static let fields = CompletionKind.custom { words, index, prefix in fieldCandidates(words: words, prefix: word(words, index, prefix)) }

    /// The completion of a reference (`read`): `vf://` and `vf-totp://`, then entry names after the
    /// scheme, then field names after `#` (a `#` in a name written `##`, as the reference grammar says).
    static let references = CompletionKind.custom { words, index, prefix in referenceCandidates(words: words, index: index, prefix: prefix) }

    /// The word being completed. swift-argument-parser 1.8 cuts its prefix from the last word of the
    /// line, which is another word when the cursor is not at the end; the shells pass the index.
    private static func word(_ words: [String], _ index: Int, _ prefix: String) -> String {
        words.indices.contains(index) ? unquoted(words[index]) : prefix
    }

    /// Entry names starting with `prefix`; after a `#`, `NAME#FIELD` for the fields of NAME.
    static func candidates(words: [String], prefix: String) -> [String] {
        guard let vault = vault(named: words) else { return [] }
        if let hash = prefix.firstIndex(of: "#") {
            let name = String(prefix[..<hash]), fieldPrefix = String(prefix[prefix.index(after: hash)...])
            guard let entry = vault.entry(name) else { return [] }
            return entry.fields.keys.filter { $0.hasPrefix(fieldPrefix) }.sorted().map { name + "#" + $0 }
        }
        return folderByFolder(vault.names(withPrefix: prefix), prefix: prefix)
    }

    /// Reference candidates for the word at `index`. bash splits `vf://x` at the `:` (its
    /// COMP_WORDBREAKS): the scheme's words before it are joined back, and the candidates given
    /// from after the `:`, which is what bash puts in place of its word.
    static func referenceCandidates(words: [String], index: Int, prefix: String) -> [String] {
        var typed = word(words, index, prefix), cut = 0
        if index >= 2, words.indices.contains(index - 1), words[index - 1] == ":", ["vf", "vf-totp"].contains(words[index - 2]) {
            typed = words[index - 2] + ":" + typed
            cut = words[index - 2].count + 1
        }
        return referenceCandidates(words: words, typed: typed).map { String($0.dropFirst(cut)) }
    }

    /// `vf://NAME` and `vf://NAME#FIELD` (or `vf-totp://NAME`) completing `typed`.
    static func referenceCandidates(words: [String], typed: String) -> [String] {
        let schemes = [SecretReference.scheme, SecretReference.totpScheme]
        guard let scheme = schemes.first(where: { typed.hasPrefix($0) }) else { return schemes.filter { $0.hasPrefix(typed) } }
        guard let vault = vault(named: words) else { return [] }
        let body = Substring(typed.dropFirst(scheme.count))
        // The field separator: a '#' that is not half of a '##'.
        var index = body.startIndex, separator: String.Index?
        while index < body.endIndex {
            if body[index] == "#" {
                let next = body.index(after: index)
                if next < body.endIndex, body[next] == "#" { index = body.index(after: next); continue }
                separator = index
                break
            }
            index = body.index(after: index)
        }
        func escaped(_ name: String) -> String { name.split(separator: "#", omittingEmptySubsequences: false).joined(separator: "##") }
        func unescaped(_ text: Substring) -> String { text.split(separator: "##", omittingEmptySubsequences: false).joined(separator: "#") }
        if let separator, scheme == SecretReference.scheme {
            let name = unescaped(body[..<separator]), fieldPrefix = String(body[body.index(after: separator)...])
            guard let entry = vault.entry(name) else { return [] }
            return entry.fields.keys.filter { $0.hasPrefix(fieldPrefix) }.sorted().map { scheme + escaped(name) + "#" + $0 }
        }
        let namePrefix = unescaped(body)
        return folderByFolder(vault.names(withPrefix: namePrefix), prefix: namePrefix).map { scheme + escaped($0) }
    }

    /// `names` (each starting with `prefix`, sorted) as pass's completion offers them: a name whose
    /// rest after `prefix` holds a `/` becomes its next folder (`prod/db/`), once; the others stay.
    /// So `prod/<TAB>` offers `prod/db/` and `prod/api`, not every leaf under `prod/db/`; the shells
    /// add no space after a folder (the scripts' `/` rule), so the next TAB goes on into it.
    static func folderByFolder(_ names: [String], prefix: String) -> [String] {
        let skip = prefix.utf8.count
        var result: [String] = [], seen = Set<String>()
        for name in names {
            let rest = name.utf8.dropFirst(skip)
            let candidate = rest.firstIndex(of: UInt8(ascii: "/")).map { String(decoding: name.utf8[...$0], as: UTF8.self) } ?? name
            if seen.insert(candidate).inserted { result.append(candidate) }
        }
        return result
    }

    /// The fields, starting with `prefix`, of the first word on the line that names an entry.
    static func fieldCandidates(words: [String], prefix: String) -> [String] {
        guard let vault = vault(named: words), let entry = words.lazy.compactMap({ vault.entry(unquoted($0)) }).first else { return [] }
        return entry.fields.keys.filter { $0.hasPrefix(prefix) }.sorted()
    }

    // MARK: Private

    /// The vault of the command line, opened with the agent's key; nil whenever that is not possible.
    private static func vault(named words: [String]) -> Vault? {
        guard !words.contains("--no-agent"), !AgentAccess.disabledByEnvironment else { return nil }
        let path = vaultPath(words)
        guard AgentSocketPath.current.socketExists else { return nil }
        // The agent's key only (the header read once); a key that does not verify opens nothing.
        let unlocker = Unlocker(lookup: { header in try AgentAccess.key(for: header, vaultPath: path, warn: false) })
        return try? VaultStore(path: path).read(with: unlocker).vault
    }

    /// `--vault PATH` or `--vault=PATH` on the line, else `VAULTFILE_PATH`, else the default vault.
    private static func vaultPath(_ words: [String]) -> String {
        for (index, word) in words.enumerated() {
            if word == "--vault", index + 1 < words.count { return expanded(unquoted(words[index + 1])) }
            if word.hasPrefix("--vault=") { return expanded(unquoted(String(word.dropFirst("--vault=".count)))) }
        }
        return environment("VAULTFILE_PATH") ?? VaultOptions.defaultDirectory + "/default.vault"
    }

    /// A shell word as typed (the shells pass words verbatim) without its surrounding quotes.
    private static func unquoted(_ word: String) -> String {
        guard word.count >= 2, let first = word.first, first == "'" || first == "\"", word.last == first else {
            return word.replacingBackslashes()
        }
        return String(word.dropFirst().dropLast())
    }

    /// `~/…` against $HOME.
    private static func expanded(_ path: String) -> String {
        guard path.hasPrefix("~/"), let home = environment("HOME") else { return path }
        return home + path.dropFirst()
    }
}

private extension String {
    /// The word with bash's backslash escapes (`my\ vault`) undone.
    func replacingBackslashes() -> String {
        guard contains("\\") else { return self }
        var result = "", escaping = false
        for character in self {
            if escaping || character != "\\" { result.append(character); escaping = false } else { escaping = true }
        }
        return result
    }
}
