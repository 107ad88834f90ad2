import VaultModel

// MARK: - Warnings as lines of text

extension ImportWarning {
    /// How many field renamings of one entry are said one a line; more are said in one line.
    static let fieldRenamingsPerEntryShown = 3

    /// The most renamings one entry's line lists (then `and N more`), and the most bytes of it.
    static let renamingsListed = 8
    static let listedBytes = 600

    /// The lines `import` prints for `warnings` (its text output; `--json` keeps every warning):
    /// each warning's `description`, except that an entry with more than
    /// `fieldRenamingsPerEntryShown` field renamings of its own (`fieldRenamed` of one entry) says
    /// them in one line where the first stood, bounded (an item of 62 renamed fields printed 62
    /// lines). A renaming shared by several entries keeps its line.
    public static func lines(_ warnings: [ImportWarning]) -> [String] {
        var perEntry: [String: [(label: String, field: String, reason: ForeignFieldRenaming)]] = [:]
        for warning in warnings {
            if case .fieldRenamed(let label, let field, 1, let example, let reason) = warning {
                perEntry[example, default: []].append((label, field, reason))
            }
        }
        guard perEntry.values.contains(where: { $0.count > fieldRenamingsPerEntryShown }) else { return warnings.map(\.description) }
        var said: Set<String> = []
        var lines: [String] = []
        for warning in warnings {
            guard case .fieldRenamed(_, _, 1, let example, _) = warning, let renamings = perEntry[example],
                  renamings.count > fieldRenamingsPerEntryShown else {
                lines.append(warning.description)
                continue
            }
            if said.insert(example).inserted { lines.append(collapsed(entry: example, renamings)) }
        }
        return lines
    }

    /// `label`'s first characters, format characters escaped, within `limit` bytes (none when it
    /// is less than one character's).
    private static func cutLabel(_ label: String, toBytes limit: Int) -> String {
        var kept = ""
        for character in label {
            let shown = EntryName.escapingFormatCharacters(String(character))
            guard kept.utf8.count + shown.utf8.count <= limit else { break }
            kept += shown
        }
        return kept
    }

    /// One line for the field renamings of `entry`: how many, then the first ones, `'LABEL' as
    /// 'FIELD'` with why in a word, within `renamingsListed` and `listedBytes`.
    private static func collapsed(entry: String, _ renamings: [(label: String, field: String, reason: ForeignFieldRenaming)]) -> String {
        var listed: [String] = []
        var bytes = 0
        for renaming in renamings {
            let why: String
            switch renaming.reason {
            case .cleaned: why = "not a field name"
            case .taken: why = "name taken"
            case .reserved: why = "a name vaultfile reads"
            }
            let rest = "' as '\(renaming.field)' (\(why))"
            var text = "'\(EntryName.escapingFormatCharacters(renaming.label))" + rest
            guard listed.count < renamingsListed else { break }
            if bytes + text.utf8.count > listedBytes {
                // The first is always listed, its label cut to fit (att63 F7: a first label past
                // the bound listed none: `'labels'): , and 5 more`).
                guard listed.isEmpty else { break }
                text = "'" + cutLabel(renaming.label, toBytes: listedBytes - rest.utf8.count - 4) + "…" + rest
            }
            listed.append(text)
            bytes += text.utf8.count + 2
        }
        let more = renamings.count - listed.count
        return "entry '\(EntryName.escapingFormatCharacters(entry))': \(renamings.count) custom fields stored under other names "
            + "(the labels are kept in the field 'labels'): " + listed.joined(separator: ", ")
            + (more > 0 ? ", and \(more) more (each in --json)" : "")
    }
}
