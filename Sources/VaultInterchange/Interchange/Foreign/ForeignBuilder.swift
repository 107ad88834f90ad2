import VaultModel

// MARK: - The one builder of entries from foreign items

/// Turns a `ForeignImport` into checked entries, identically for every source.
enum ForeignBuilder {
    /// The entries of `source`, named, filled and checked (`ImportedEntries`).
    static func build(_ source: ForeignImport, now: Int64, options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        var names = ImportedNameCleaner.Names()
        var parsed: [(String, Entry)] = []
        parsed.reserveCapacity(source.items.count)
        for item in source.items {
            let title = item.title.isEmpty ? "untitled" : item.title
            let name = names.name(fromParts: options.prefix + item.folders + [title])
            var fields: [String: [UInt8]] = [:]
            func put(_ field: String, _ text: [UInt8]) {
                guard !text.isEmpty else { return }
                var label = field, number = 2
                while fields[label] != nil { label = "\(field)_\(number)"; number += 1 }
                fields[label] = text
            }
            put("username", Array((item.username ?? "").utf8))
            for (index, url) in item.urls.enumerated() { put(index == 0 ? "url" : "url\(index + 1)", Array(url.utf8)) }
            put("notes", Array((item.notes ?? "").utf8))
            put("totp", Array((item.totp ?? "").utf8))
            for field in item.fields { put(ImportedNameCleaner.fieldName(fromLabel: field.label), field.value) }
            for extra in item.extras { put(ImportedNameCleaner.fieldName(fromLabel: extra.label), Array(extra.value.utf8)) }
            let created = item.created ?? item.modified ?? now
            parsed.append((name, Entry(value: item.value, fields: fields, created: created, modified: item.modified ?? created)))
        }
        return try ImportedEntries(parsed, renamings: names.renamings)
    }
}
