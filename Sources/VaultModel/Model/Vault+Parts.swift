// MARK: - EntryPart

/// Which bytes of an entry a command reads, writes or removes: its value or one named field.
///
/// The commands' `--field F` option and a template's `NAME#FIELD` choose a field; without one
/// they mean the value.
public enum EntryPart: Equatable, Sendable {
    /// The entry's main value.
    case value
    /// The field with this name.
    case field(String)

    /// `.field(field)`, or `.value` when `field` is nil (a `--field` option left out).
    public init(field: String?) {
        self = field.map(EntryPart.field) ?? .value
    }

    /// The field's name; nil for the value.
    public var fieldName: String? {
        switch self {
        case .value: return nil
        case .field(let name): return name
        }
    }

    /// How messages name this part of `name`: `NAME`, or `NAME#FIELD` as in templates.
    public func reference(to name: String) -> String {
        switch self {
        case .value: return name
        case .field(let field): return "\(name)#\(field)"
        }
    }

    /// The error for an entry `name` that exists without this part, as the lookup reports it
    /// (templates name the reference `NAME#FIELD`; see `Vault.missingPart(_:of:)` for commands).
    func notFound(in name: String) -> VaultError { .entryNotFound(reference(to: name)) }
}

// MARK: - Entry

extension Entry {
    /// The bytes of `part`; nil for a field the entry lacks.
    subscript(part: EntryPart) -> [UInt8]? {
        switch part {
        case .value: return value
        case .field(let name): return fields[name]
        }
    }
}

// MARK: - Vault: the value or a field of an entry

extension Vault {
    /// Calls `body` with the bytes of `part` of `name` where they lie in the decrypted vault,
    /// without copying them (a copy would be one more plaintext to wipe). Do not let the pointer escape.
    ///
    /// Throws `VaultError.entryNotFound` naming the entry, or `VaultError.fieldNotFound` (with the
    /// fields it has) when the entry exists without the field, before `body` runs; otherwise
    /// rethrows what `body` throws.
    public func withValue<R>(of name: String, part: EntryPart = .value, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try lookUp(part, of: name, found: body, missing: { throw missingPart(part, of: name, lookUp: $0) })
    }

    /// A copy of the bytes of `part` of `name`, for a caller that must keep them (wipe it after use).
    ///
    /// Throws `VaultError.entryNotFound` or `VaultError.fieldNotFound` as `withValue(of:part:_:)` does.
    public func value(of name: String, part: EntryPart = .value) throws(VaultError) -> [UInt8] {
        try lookUp(part, of: name) { (bytes) throws(VaultError) in Array(bytes) } missing: { (error) throws(VaultError) in
            throw missingPart(part, of: name, lookUp: error)
        }
    }

    /// Sets `part` of `name`, creating the entry if needed (with an empty value when `part` is a field).
    ///
    /// Setting the bytes it already has changes nothing (not even the modified time).
    public mutating func setValue(_ value: [UInt8], for name: String, part: EntryPart, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        switch part {
        case .value: try setValue(value, for: name, now: now)
        case .field(let field): try setField(field, value: value, for: name, now: now)
        }
    }

    /// Removes `part` of `name`: removing the value removes the whole entry, removing a field
    /// keeps the rest of the entry.
    ///
    /// Throws `VaultError.entryNotFound` naming the entry, or `VaultError.fieldNotFound` when the
    /// entry exists without the field.
    public mutating func removeValue(for name: String, part: EntryPart, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        switch part {
        case .value: try remove(name)
        case .field(let field): try removeField(field, of: name, now: now)
        }
    }

    /// The error for a lookup of `part` of `name` that found nothing: `lookUp`'s own error for a
    /// missing entry, `fieldNotFound` with the entry's fields for a missing field. Runs only on
    /// that path, so a lookup that succeeds decodes no field names.
    func missingPart(_ part: EntryPart, of name: String, lookUp error: VaultError) -> VaultError {
        guard case .field(let field) = part, let entry = entry(name) else { return error }
        return .fieldNotFound(entry: name, field: field, available: entry.fields.keys.sorted())
    }
}
