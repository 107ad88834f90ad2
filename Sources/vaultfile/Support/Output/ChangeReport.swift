import VaultModel

// MARK: - What rm, mv and cp report

/// The lines `rm`, `mv` and `cp` print about the entries they change: with `--dry-run`, what
/// would change, one line per entry on standard output (the data asked for); after a change to
/// a folder, one count on standard error.
enum ChangeReport {
    /// `would remove NAME`, one line per name.
    static func wouldRemove(_ names: [String]) throws {
        var out: [UInt8] = []
        for name in names { out.append(contentsOf: "would remove \(name)\n".utf8) }
        try StandardOutput.write(out)
    }

    /// `would move OLD to NEW` (`verb` "move") or `would copy …`, noting each entry replaced.
    static func would(_ verb: String, _ steps: [Relocation]) throws {
        var out: [UInt8] = []
        for step in steps {
            let replacing = step.replaces ? " (replacing the entry there)" : ""
            out.append(contentsOf: "would \(verb) \(step.source) to \(step.destination)\(replacing)\n".utf8)
        }
        try StandardOutput.write(out)
    }

    /// "1 entry", "3 entries": for the count on stderr after a folder changed.
    static func entries(_ count: Int) -> String { count == 1 ? "1 entry" : "\(count) entries" }
}
