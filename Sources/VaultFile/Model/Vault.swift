#if canImport(Glibc)
import Glibc
#endif

// MARK: - Limits

/// The documented limits of a vault, enforced on read and on write.
public enum VaultLimits {
    /// The most entries one vault holds.
    public static let maxEntries = 1_000_000
    /// The longest entry name, in UTF-8 bytes.
    public static let maxNameLength = 1_024
    /// The longest field name, in bytes.
    public static let maxFieldNameLength = 64
    /// The most named fields per entry.
    public static let maxFieldsPerEntry = 64
    /// The largest value (or field value), in bytes.
    public static let maxValueLength = 256 << 20
    /// The largest encoded content of a vault, in bytes.
    public static let maxContentLength = 1 << 30
    /// The largest vault file this build reads.
    public static let maxFileLength = (1 << 30) + (1 << 25)
}

// MARK: - Entry

/// One secret: a value, optional named fields, and its times.
public struct Entry: Equatable, Sendable {
    /// The main value: arbitrary bytes.
    public var value: [UInt8]
    /// Named fields (username, url, notes, totp, …): arbitrary bytes each.
    public var fields: [String: [UInt8]]
    /// When the entry was created, in milliseconds since the Unix epoch.
    public var created: Int64
    /// When the entry last changed, in milliseconds since the Unix epoch.
    public var modified: Int64

    /// Creates an entry.
    public init(value: [UInt8], fields: [String: [UInt8]] = [:], created: Int64, modified: Int64) {
        self.value = value
        self.fields = fields
        self.created = created
        self.modified = modified
    }
}

// MARK: - Vault

/// The decrypted contents of a vault: entries keyed by name.
///
/// Names are compared byte for byte (two spellings of "é" are two names, as
/// on a file system) and listed in byte order, the order of the encoding.
public struct Vault: Equatable, Sendable {
    private var entries: [[UInt8]: Entry]

    /// An empty vault.
    public init() { entries = [:] }

    init(entries: [[UInt8]: Entry]) { self.entries = entries }

    /// The number of entries.
    public var count: Int { entries.count }

    /// Every name, sorted byte-wise.
    public var names: [String] { sortedKeys.map { String(decoding: $0, as: UTF8.self) } }

    /// The names that start with `prefix` (byte-wise), sorted.
    public func names(withPrefix prefix: String) -> [String] {
        let prefix = Array(prefix.utf8)
        return sortedKeys.filter { $0.starts(with: prefix) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The entry called `name`, or `nil`.
    public func entry(_ name: String) -> Entry? { entries[Array(name.utf8)] }

    /// Every entry with its name, sorted by name.
    public var sortedEntries: [(name: String, entry: Entry)] {
        sortedKeys.map { (String(decoding: $0, as: UTF8.self), entries[$0]!) }
    }

    var sortedKeys: [[UInt8]] { entries.keys.sorted { $0.lexicographicallyPrecedes($1) } }
    var storage: [[UInt8]: Entry] { entries }

    // MARK: Editing

    /// Sets the main value of `name`, creating the entry if needed.
    ///
    /// Setting the value it already has changes nothing (not even the modified time).
    public mutating func setValue(_ value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try EntryName.validate(name)
        try Self.checkValueLength(value.count, what: "the value of '\(name)'")
        if var existing = entries[key] {
            guard existing.value != value else { return }
            existing.value = value
            existing.modified = now
            entries[key] = existing
        } else {
            guard entries.count < VaultLimits.maxEntries else {
                throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
            }
            entries[key] = Entry(value: value, created: now, modified: now)
        }
    }

    /// Sets field `field` of `name`, creating the entry (with an empty value) if needed.
    public mutating func setField(_ field: String, value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try EntryName.validate(name)
        try EntryName.validateField(field)
        try Self.checkValueLength(value.count, what: "field '\(field)' of '\(name)'")
        var entry = entries[key] ?? Entry(value: [], created: now, modified: now)
        if entry.fields[field] == value && entries[key] != nil { return }
        guard entry.fields[field] != nil || entry.fields.count < VaultLimits.maxFieldsPerEntry else {
            throw .limitExceeded("an entry holds at most \(VaultLimits.maxFieldsPerEntry) fields")
        }
        if entries[key] == nil && entries.count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        entry.fields[field] = value
        entry.modified = now
        entries[key] = entry
    }

    /// Puts a whole entry under `name`, replacing any entry there (used by import and merge).
    public mutating func put(_ entry: Entry, as name: String) throws(VaultError) {
        let key = try EntryName.validate(name)
        try Self.checkValueLength(entry.value.count, what: "the value of '\(name)'")
        guard entry.fields.count <= VaultLimits.maxFieldsPerEntry else {
            throw .limitExceeded("an entry holds at most \(VaultLimits.maxFieldsPerEntry) fields")
        }
        for (field, value) in entry.fields {
            try EntryName.validateField(field)
            try Self.checkValueLength(value.count, what: "field '\(field)' of '\(name)'")
        }
        if entries[key] == nil && entries.count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        entries[key] = entry
    }

    /// Removes the entry called `name` and returns it.
    @discardableResult
    public mutating func remove(_ name: String) throws(VaultError) -> Entry {
        guard let removed = entries.removeValue(forKey: Array(name.utf8)) else { throw .entryNotFound(name) }
        return removed
    }

    /// Removes field `field` of `name`.
    public mutating func removeField(_ field: String, of name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = Array(name.utf8)
        guard var entry = entries[key] else { throw .entryNotFound(name) }
        guard entry.fields.removeValue(forKey: field) != nil else { throw .entryNotFound("\(name)#\(field)") }
        entry.modified = now
        entries[key] = entry
    }

    /// Renames `old` to `new`; refuses to replace an existing `new` unless `overwrite`.
    public mutating func rename(_ old: String, to new: String, overwrite: Bool = false) throws(VaultError) {
        let newKey = try EntryName.validate(new)
        let oldKey = Array(old.utf8)
        guard let entry = entries[oldKey] else { throw .entryNotFound(old) }
        guard oldKey != newKey else { return }
        guard overwrite || entries[newKey] == nil else { throw .entryExists(new) }
        entries[oldKey] = nil
        entries[newKey] = entry
    }

    private static func checkValueLength(_ length: Int, what: String) throws(VaultError) {
        guard length <= VaultLimits.maxValueLength else {
            throw .limitExceeded("\(what) is \(length) bytes; the limit is \(VaultLimits.maxValueLength) bytes (256 MiB)")
        }
    }
}

/// The wall-clock time in milliseconds since the Unix epoch.
public func currentTimeMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

// MARK: - Names

/// The rules for entry and field names.
public enum EntryName {
    /// Checks an entry name and returns its UTF-8 bytes.
    ///
    /// A name is 1…1024 bytes of UTF-8 without control characters, made of
    /// `/`-separated components that are neither empty nor `.` or `..`.
    public static func validate(_ name: String) throws(VaultError) -> [UInt8] {
        let bytes = Array(name.utf8)
        try validate(utf8: bytes, display: name)
        return bytes
    }

    /// The same rules over UTF-8 bytes already known to be valid UTF-8, in one pass
    /// (the decoder calls this for every entry of a vault).
    static func validate(utf8 bytes: [UInt8], display: @autoclosure () -> String) throws(VaultError) {
        guard !bytes.isEmpty else { throw .invalidName("an entry name cannot be empty") }
        guard bytes.count <= VaultLimits.maxNameLength else {
            throw .invalidName("an entry name is at most \(VaultLimits.maxNameLength) bytes; this one is \(bytes.count)")
        }
        var componentStart = 0
        for index in 0...bytes.count {
            let byte: UInt8 = index < bytes.count ? bytes[index] : 0x2F  // a virtual '/' closes the last component
            // C0 controls, DEL, and C1 controls (U+0080–U+009F, encoded C2 80…C2 9F).
            if byte < 0x20 || byte == 0x7F || (byte == 0xC2 && index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1])) {
                throw .invalidName("an entry name cannot contain control characters (newline, tab, NUL, …)")
            }
            guard byte == 0x2F else { continue }
            let length = index - componentStart
            if length == 0 {
                throw .invalidName("'\(display())' has an empty path component (leading, trailing or double '/')")
            }
            if (length == 1 && bytes[componentStart] == 0x2E) || (length == 2 && bytes[componentStart] == 0x2E && bytes[componentStart + 1] == 0x2E) {
                throw .invalidName("'\(display())' has a '.' or '..' component")
            }
            componentStart = index + 1
        }
    }

    /// Checks a field name: 1…64 characters from `A–Z a–z 0–9 _ . -`.
    public static func validateField(_ field: String) throws(VaultError) {
        let bytes = Array(field.utf8)
        guard (1...VaultLimits.maxFieldNameLength).contains(bytes.count) else {
            throw .invalidName("a field name is 1 to \(VaultLimits.maxFieldNameLength) characters")
        }
        let allowed: (UInt8) -> Bool = {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D
        }
        guard bytes.allSatisfy(allowed) else {
            throw .invalidName("field name '\(field)' may hold only letters, digits, '_', '.' and '-'")
        }
    }
}
