// MARK: - Entries without their values

/// An entry as `list --json` shows it: everything but the value and the field values.
public struct EntrySummary: Equatable, Sendable {
    /// The entry's name.
    public var name: String
    /// The names of its fields, in byte order (the order of the encoding).
    public var fieldNames: [String]
    /// When the entry was created, in milliseconds since the Unix epoch.
    public var created: Int64
    /// When the entry last changed, in milliseconds since the Unix epoch.
    public var modified: Int64
}

extension Vault {
    /// Calls `body` with the summary of every entry at or under `prefix`, whole path segments as
    /// `names(atOrUnder:)` takes them, in name order.
    ///
    /// One pass over the records that copies no value: `list --json` looked every name up again
    /// and decoded the whole entry, value included, to show its field names.
    public func forEachSummary<E: Error>(atOrUnder prefix: String, _ body: (EntrySummary) throws(E) -> Void) throws(E) {
        let matches = Self.pathMatcher(atOrUnder: prefix)
        try forEachRecord { (record) throws(E) in
            guard record.withName(matches) else { return }
            switch record {
            case .stored(let records, let index):
                try body(records.summary(at: index))
            case .edited(let name, let entry):
                let fieldNames = entry.fields.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                try body(EntrySummary(name: String(decoding: name, as: UTF8.self), fieldNames: fieldNames,
                                      created: entry.created, modified: entry.modified))
            }
        }
    }

    /// Whether a name's bytes are `prefix` or under it, as `names(atOrUnder:)` decides.
    static func pathMatcher(atOrUnder prefix: String) -> (UnsafeRawBufferPointer) -> Bool {
        let segments = Array(prefix.utf8)
        guard let last = segments.last, last != UInt8(ascii: "/") else { return { $0.starts(with: segments) } }
        return { name in
            name.starts(with: segments) && (name.count == segments.count || name[segments.count] == UInt8(ascii: "/"))
        }
    }
}
