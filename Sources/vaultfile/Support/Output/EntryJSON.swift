import SecureMemory
import VaultModel

// MARK: - --json of the verbs that print entries (docs/JSON.md)

/// The JSON documents of `get --json`, `search --json` and `export --json`, one schema each, as
/// docs/JSON.md describes them. Times are RFC 3339 UTC with milliseconds, as in `list --json`.
enum EntryJSON {
    /// `get NAME --json`: `{"name", "value", "encoding", "fields": {F: {"value", "encoding"}}, "created", "modified"}`;
    /// with a field, `{"name", "field", "value", "encoding"}`. `name` is the entry's stored name
    /// (a lookup may find it by its NFC form). The caller writes the bytes out and wipes them.
    static func get(_ vault: Vault, name: String, part: EntryPart) throws -> SecretJSON {
        let stored = vault.existingName(for: name) ?? name
        var out = SecretJSON()
        if case .field(let field) = part {
            try vault.withValue(of: stored, part: part) { value in
                out = SecretJSON(capacity: value.count * 2 + 128)
                out.raw("{")
                out.key("name")
                out.raw(JSON.quote(stored) + ",")
                out.key("field")
                out.raw(JSON.quote(field) + ",")
                out.value(value)
                out.raw("}\n")
            }
            return out
        }
        guard var entry = vault.entry(stored) else { throw VaultError.entryNotFound(name) }
        defer {
            wipe(&entry.value)
            for key in entry.fields.keys { wipe(&entry.fields[key]!) }
        }
        out = SecretJSON(capacity: (entry.value.count + entry.fields.values.reduce(0) { $0 + $1.count + 64 }) * 2 + 256)
        out.raw("{")
        out.key("name")
        out.raw(JSON.quote(stored) + ",")
        out.value(entry.value)
        out.raw(",")
        out.key("fields")
        out.raw("{")
        for (index, field) in entry.fields.keys.sorted().enumerated() {
            if index > 0 { out.raw(",") }
            out.key(field)
            out.raw("{")
            out.value(entry.fields[field]!)
            out.raw("}")
        }
        out.raw("},")
        out.raw("\"created\":" + JSON.quote(timestamp(milliseconds: entry.created)) + ",")
        out.raw("\"modified\":" + JSON.quote(timestamp(milliseconds: entry.modified)) + "}\n")
        return out
    }

    /// `summary(_:_:)` of an entry's bytes where they lie (field names are stored in byte order,
    /// which is `sorted()`'s order for their ASCII).
    static func summary(_ entry: EntryBytes) -> JSON {
        .object([
            ("name", .string(String(decoding: entry.name, as: UTF8.self))),
            ("fields", .array(entry.fields.map { .string(String(decoding: $0.name, as: UTF8.self)) })),
            ("created", .string(timestamp(milliseconds: entry.created))),
            ("modified", .string(timestamp(milliseconds: entry.modified))),
        ])
    }

    /// One entry as `list --json` and `search --json` show it: `{"name", "fields", "created", "modified"}`, no values.
    static func summary(_ name: String, _ entry: Entry) -> JSON {
        .object([
            ("name", .string(name)),
            ("fields", .array(entry.fields.keys.sorted().map { .string($0) })),
            ("created", .string(timestamp(milliseconds: entry.created))),
            ("modified", .string(timestamp(milliseconds: entry.modified))),
        ])
    }
}
