import VaultModel

// MARK: - The one builder of entries from foreign items

/// Why a custom field is stored under another name than its label.
public enum ForeignFieldRenaming: Sendable, Equatable {
    /// The label is not a field name (a field name holds only `A–Z a–z 0–9 _ . -`, at most 64):
    /// each other character became '_'; the label is kept in the field `labels`.
    case cleaned
    /// Another field of the entry has the name (the login's `username`, a second `url`…): `_2`,
    /// `_3`… was added; the label is kept in the field `labels`.
    case taken
}

/// Turns a `ForeignImport` into checked entries, identically for every source (docs/INTERCHANGE.md,
/// "Other password managers"): names (`ForeignNaming`), fields, TOTP (`ForeignTOTP`), times,
/// history, and a warning for everything not kept as it was.
enum ForeignBuilder {
    /// The field that keeps the labels of custom fields stored under another name: one line
    /// `FIELD<TAB>LABEL` each.
    static let labelsField = "labels"

    /// The entries of `source`, named, filled and checked (`ImportedEntries`).
    static func build(_ source: ForeignImport, now: Int64, options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        let (named, renamings) = ForeignNaming.names(of: source.items, prefix: options.prefix)
        var fieldRenamings = FieldRenamingTally()
        var totpWarnings: [ImportWarning] = []
        var parsed: [(String, Entry)] = []
        parsed.reserveCapacity(source.items.count)
        var history: [(name: String, versions: [EntryVersion])] = []
        var versionsLost = 0, entriesLost = 0
        for (index, item) in source.items.enumerated() {
            let name = named[index].name
            var fields = FieldSet()
            fields.put("username", item.username)
            for (position, url) in item.urls.enumerated() { fields.put(position == 0 ? "url" : "url\(position + 1)", url) }
            fields.put("notes", item.notes)
            if let totp = item.totp {
                switch ForeignTOTP.normalized(totp, label: item.username.flatMap { $0.isEmpty ? nil : $0 } ?? name) {
                case .uri(let uri)?: fields.put("totp", uri)
                case .unusable(let text, let why)?:
                    fields.put("totp", text)
                    totpWarnings.append(.totpUnusable(name: name, why: why))
                case nil: break
                }
            }
            fields.put("title", named[index].title)
            for field in item.fields { fields.putCustom(label: field.label, field.value, entry: name, tally: &fieldRenamings) }
            for extra in item.extras { fields.putCustom(label: extra.label, Array(extra.value.utf8), entry: name, tally: &fieldRenamings) }
            for attachment in item.attachments {
                fields.putCustom(label: "attachment." + attachment.name, attachment.bytes, entry: name, tally: &fieldRenamings)
            }
            fields.putLabels(tally: &fieldRenamings, entry: name)
            let created = item.created ?? item.modified ?? now
            let modified = item.modified ?? created
            parsed.append((name, Entry(value: item.value, fields: fields.values, created: created, modified: modified)))
            guard !item.history.isEmpty else { continue }
            if options.keepsHistory {
                history.append((EntryName.normalized(name), versions(of: item, modified: modified)))
            } else {
                versionsLost += item.history.count
                entriesLost += 1
            }
        }
        var imported = try ImportedEntries(parsed, renamings: renamings)
        var warnings: [ImportWarning] = source.notKept.sorted { $0.key < $1.key }.map { .notKept(what: $0.key, count: $0.value) }
        warnings += fieldRenamings.warnings
        warnings += totpWarnings
        if versionsLost > 0 { warnings.append(.historyNotKept(versions: versionsLost, entries: entriesLost)) }
        imported.warnings = warnings + imported.warnings
        if !history.isEmpty { imported.history = history }
        imported.fromForeign = true
        return imported
    }

    /// An item's earlier versions as the vault keeps them: newest first, each replaced when the
    /// next one (or the item as it is now) was modified.
    private static func versions(of item: ForeignItem, modified: Int64) -> [EntryVersion] {
        var versions: [EntryVersion] = []
        for (index, version) in item.history.enumerated() {
            var fields: [String: [UInt8]] = [:]
            if let username = version.username, !username.isEmpty { fields["username"] = Array(username.utf8) }
            if let notes = version.notes, !notes.isEmpty { fields["notes"] = Array(notes.utf8) }
            let time = version.modified ?? 0
            let replaced = index + 1 < item.history.count ? (item.history[index + 1].modified ?? modified) : modified
            versions.append(EntryVersion(entry: Entry(value: version.value, fields: fields, created: time, modified: time), replaced: max(replaced, time)))
        }
        return versions.reversed()
    }
}

// MARK: - One entry's fields

/// The fields of one entry as the builder fills them: the builder's own names first, then custom
/// labels made field names, each name once.
private struct FieldSet {
    private(set) var values: [String: [UInt8]] = [:]
    /// `FIELD<TAB>LABEL` for each custom field stored under a name that is not its label.
    private var labels: [String] = []

    /// Puts a field of the builder's own (`username`, `url`…), unless empty.
    mutating func put(_ field: String, _ text: String?) {
        guard let text, !text.isEmpty else { return }
        values[field] = Array(text.utf8)
    }

    /// Puts a custom field under its label made a field name, numbered when taken; each change tallied.
    mutating func putCustom(label: String, _ value: [UInt8], entry: String, tally: inout FieldRenamingTally) {
        guard !value.isEmpty else { return }
        let cleaned = ImportedNameCleaner.fieldName(fromLabel: label)
        var field = cleaned
        if values[field] != nil || field == ForeignBuilder.labelsField {
            var number = 2
            repeat {
                let suffix = "_\(number)"
                field = String(cleaned.prefix(VaultLimits.maxFieldNameLength - suffix.count)) + suffix
                number += 1
            } while values[field] != nil
            tally.add(label: label, field: field, entry: entry, reason: .taken)
        } else if !sameUTF8(field, label) {
            tally.add(label: label, field: field, entry: entry, reason: .cleaned)
        }
        if !sameUTF8(field, label) { labels.append("\(field)\t\(label)") }
        values[field] = value
    }

    /// Puts the field `labels` when a label was not kept as its field's name.
    mutating func putLabels(tally: inout FieldRenamingTally, entry: String) {
        guard !labels.isEmpty else { return }
        values[ForeignBuilder.labelsField] = Array((labels.joined(separator: "\n") + "\n").utf8)
    }
}

// MARK: - Field renamings, counted

/// Field renamings of one import, counted by label, field and reason, in the order first seen:
/// one warning each, however many entries had it.
private struct FieldRenamingTally {
    private struct Key: Hashable {
        var label: [UInt8]
        var field: String
        var taken: Bool
    }

    private var order: [Key] = []
    private var counts: [Key: (label: String, count: Int, example: String)] = [:]

    mutating func add(label: String, field: String, entry: String, reason: ForeignFieldRenaming) {
        let key = Key(label: Array(label.utf8), field: field, taken: reason == .taken)
        if let found = counts[key] {
            counts[key] = (found.label, found.count + 1, found.example)
        } else {
            order.append(key)
            counts[key] = (label, 1, entry)
        }
    }

    var warnings: [ImportWarning] {
        order.map { key in
            let found = counts[key]!
            return .fieldRenamed(label: found.label, field: key.field, count: found.count, example: found.example, reason: key.taken ? .taken : .cleaned)
        }
    }
}
