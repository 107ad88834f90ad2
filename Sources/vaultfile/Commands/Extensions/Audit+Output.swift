import VaultFile
import VaultFormat
import VaultModel

// MARK: - What `audit` prints

/// The table, the JSON and the summary of an audit: names, estimates, group numbers, ages and
/// counts, never a secret (docs/JSON.md, "audit --json").
struct AuditOutput {
    let report: AuditReport
    let options: AuditOptions

    /// The checks that ran, in `AuditKind` order.
    var checked: [AuditKind] {
        var kinds: [AuditKind] = []
        if options.minimumBits != nil { kinds.append(.weak) }
        if options.reuse { kinds.append(.reused) }
        if options.maximumAge != nil { kinds.append(.old) }
        if options.breachList != nil { kinds.append(.breached) }
        return kinds
    }

    // MARK: Table

    /// One row per entry found, a column per check that ran; names escaped on a terminal.
    func table(escaping: Bool) -> String {
        let columns = checked
        let header = ["NAME"] + columns.map { $0 == .old ? "AGE" : $0.rawValue.uppercased() }
        let rows = report.findings.map { finding in
            [escaping ? EntryName.escapingFormatCharacters(finding.name) : finding.name] + columns.map { cell(finding, $0) }
        }
        return SlotList.table(header: header, rows: rows)
    }

    private func cell(_ finding: AuditFinding, _ kind: AuditKind) -> String {
        switch kind {
        case .weak:
            guard let weak = finding.weak else { return "-" }
            let patterns = weak.patterns.isEmpty ? "" : " (" + weak.patterns.map(\.rawValue).joined(separator: ", ") + ")"
            return "\(Self.bits(weak.bits)) bits" + patterns
        case .reused:
            var parts: [String] = []
            // "group 3 of 2" read as the 3rd of 2 groups: say how many others. Exact and near groups
            // are numbered in one series (VaultAudit+Reuse), so a group number names one group.
            if let group = finding.reuse { parts.append("reused with \(Self.others(group.size)) (group \(group.number))") }
            if let group = finding.nearReuse { parts.append("near \(Self.others(group.size)) (group \(group.number))") }
            return parts.isEmpty ? "-" : parts.joined(separator: ", ")
        case .old:
            guard let age = finding.age else { return "-" }
            return "\(age.milliseconds / 86_400_000) days" + (age.fromHistory ? "" : " (modified)")
        case .breached:
            guard let count = finding.breachCount else { return "-" }
            return count == 1 ? "1 time" : "\(count) times"
        }
    }

    /// "1 other", "2 others": the other entries of a group of `size`.
    static func others(_ size: Int) -> String { size == 2 ? "1 other" : "\(size - 1) others" }

    /// Bits to one decimal.
    static func bits(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    // MARK: JSON

    /// An array of one object per entry found, in name order, and a newline.
    func json() -> [UInt8] {
        let objects = report.findings.map { finding -> JSON in
            var pairs: [(String, JSON)] = [("name", .string(finding.name)), ("kinds", .array(finding.kinds.map { .string($0.rawValue) }))]
            if let field = options.field { pairs.append(("field", .string(field))) }
            if let weak = finding.weak {
                pairs.append(("weak", .object([
                    ("bits", .double((weak.bits * 10).rounded() / 10)),
                    ("guesses_log10", .double((weak.guessesLog10 * 100).rounded() / 100)),
                    ("patterns", .array(weak.patterns.map { .string($0.rawValue) })),
                ])))
            }
            if let group = finding.reuse { pairs.append(("reused", .object([("group", .int(Int64(group.number))), ("size", .int(Int64(group.size)))]))) }
            if let group = finding.nearReuse {
                pairs.append(("near_reused", .object([("group", .int(Int64(group.number))), ("size", .int(Int64(group.size)))])))
            }
            if let age = finding.age {
                pairs.append(("old", .object([
                    ("days", .int(age.milliseconds / 86_400_000)), ("since", .string(timestamp(milliseconds: age.since))),
                    ("from", .string(age.fromHistory ? "history" : "modified")),
                ])))
            }
            if let count = finding.breachCount { pairs.append(("breached", .object([("count", .int(Int64(count)))]))) }
            return .object(pairs)
        }
        return Array((JSON.array(objects).text + "\n").utf8)
    }

    // MARK: Summary

    /// The line on stderr: how many entries were checked, and how many of each kind were found.
    func summary(listPath: String?, hash: BreachHash?) -> String {
        let entries = report.checked == 1 ? "1 entry" : "\(report.checked) entries"
        var line = "audit: \(entries) checked"
        if report.skipped > 0 {
            line += " (\(report.skipped) skipped: " + (options.field.map { "no field '\($0)' or empty" } ?? "empty value") + ")"
        }
        guard !report.findings.isEmpty else { return line + ": nothing found" }
        var counts: [String] = []
        for kind in checked {
            let found = report.findings.filter { $0.kinds.contains(kind) }.count
            counts.append("\(found) \(kind.rawValue)")
        }
        line += ": " + counts.joined(separator: ", ")
        if let listPath, let hash {
            line += "; breach list \(listPath) (\(hash.rawValue))"
            if report.notLookedUp > 0 { line += ", \(report.notLookedUp) not looked up (not UTF-8, no NTLM form)" }
        }
        return line
    }
}
