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
///
/// A decrypted vault keeps its records where they lie in the plaintext and
/// decodes only the entries a command touches; edits are kept beside them
/// and merged in name order when the vault is encoded or listed.
public struct Vault: Sendable {
    /// The records as decrypted, shared by copies of this value; nil for a vault built in memory.
    private var stored: StoredRecords?
    /// Entries changed since decryption, by name bytes. `.removed` is kept only for stored names.
    private var changes: [[UInt8]: Change] = [:]
    /// The number of entries.
    public private(set) var count: Int

    private enum Change: Equatable, Sendable {
        case put(Entry)
        case removed
    }

    /// An empty vault.
    public init() {
        stored = nil
        count = 0
    }

    init(stored: StoredRecords) {
        self.stored = stored
        count = stored.count
    }

    // MARK: Reading

    /// Every name, sorted byte-wise.
    public var names: [String] {
        var names: [String] = []
        names.reserveCapacity(count)
        forEachRecord { names.append($0.name) }
        return names
    }

    /// The names that start with `prefix` (byte-wise), sorted.
    public func names(withPrefix prefix: String) -> [String] {
        let prefix = Array(prefix.utf8)
        var names: [String] = []
        forEachRecord { record in
            if record.withName({ $0.starts(with: prefix) }) { names.append(record.name) }
        }
        return names
    }

    /// Whether an entry called `name` exists.
    public func contains(_ name: String) -> Bool { contains(key: Array(name.utf8)) }

    /// The entry called `name`, or `nil`.
    public func entry(_ name: String) -> Entry? { entry(forKey: Array(name.utf8)) }

    /// Every entry with its name, sorted by name.
    public var sortedEntries: [(name: String, entry: Entry)] {
        var entries: [(name: String, entry: Entry)] = []
        entries.reserveCapacity(count)
        forEachRecord { entries.append(($0.name, $0.entry)) }
        return entries
    }

    /// Calls `body` with the bytes of the value of `name` (or of its field `field`) where they lie,
    /// without copying them; nil when there is no such entry or field. Do not let the pointer escape.
    public func withValue<R>(of name: String, field: String? = nil, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        let key = Array(name.utf8)
        switch changes[key] {
        case .put(let entry)?:
            let value = field == nil ? entry.value : entry.fields[field!]
            return try value?.withUnsafeBytes(body)
        case .removed?:
            return nil
        case nil:
            guard let stored, let index = stored.index(of: key), let value = stored.value(at: index, field: field) else { return nil }
            return try withExtendedLifetime(stored) { try body(value) }
        }
    }

    // MARK: Editing

    /// Sets the main value of `name`, creating the entry if needed.
    ///
    /// Setting the value it already has changes nothing (not even the modified time).
    public mutating func setValue(_ value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try EntryName.validate(name)
        try Self.checkValueLength(value.count, what: "the value of '\(name)'")
        if var existing = entry(forKey: key) {
            guard existing.value != value else { return }
            existing.value = value
            existing.modified = now
            changes[key] = .put(existing)
        } else {
            guard count < VaultLimits.maxEntries else {
                throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
            }
            store(Entry(value: value, created: now, modified: now), key: key)
        }
    }

    /// Sets field `field` of `name`, creating the entry (with an empty value) if needed.
    public mutating func setField(_ field: String, value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try EntryName.validate(name)
        try EntryName.validateField(field)
        try Self.checkValueLength(value.count, what: "field '\(field)' of '\(name)'")
        let existing = entry(forKey: key)
        var entry = existing ?? Entry(value: [], created: now, modified: now)
        if entry.fields[field] == value && existing != nil { return }
        guard entry.fields[field] != nil || entry.fields.count < VaultLimits.maxFieldsPerEntry else {
            throw .limitExceeded("an entry holds at most \(VaultLimits.maxFieldsPerEntry) fields")
        }
        if existing == nil && count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        entry.fields[field] = value
        entry.modified = now
        store(entry, key: key)
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
        if !contains(key: key) && count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        store(entry, key: key)
    }

    /// Removes the entry called `name` and returns it.
    @discardableResult
    public mutating func remove(_ name: String) throws(VaultError) -> Entry {
        let key = Array(name.utf8)
        guard let removed = entry(forKey: key) else { throw .entryNotFound(name) }
        delete(key: key)
        return removed
    }

    /// Removes field `field` of `name`.
    public mutating func removeField(_ field: String, of name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = Array(name.utf8)
        guard var entry = entry(forKey: key) else { throw .entryNotFound(name) }
        guard entry.fields.removeValue(forKey: field) != nil else { throw .entryNotFound("\(name)#\(field)") }
        entry.modified = now
        store(entry, key: key)
    }

    /// Renames `old` to `new`; refuses to replace an existing `new` unless `overwrite`.
    public mutating func rename(_ old: String, to new: String, overwrite: Bool = false) throws(VaultError) {
        let newKey = try EntryName.validate(new)
        let oldKey = Array(old.utf8)
        guard let entry = entry(forKey: oldKey) else { throw .entryNotFound(old) }
        guard oldKey != newKey else { return }
        guard overwrite || !contains(key: newKey) else { throw .entryExists(new) }
        delete(key: oldKey)
        store(entry, key: newKey)
    }

    private static func checkValueLength(_ length: Int, what: String) throws(VaultError) {
        guard length <= VaultLimits.maxValueLength else {
            throw .limitExceeded("\(what) is \(length) bytes; the limit is \(VaultLimits.maxValueLength) bytes (256 MiB)")
        }
    }

    // MARK: Stored records and changes

    private func entry(forKey key: [UInt8]) -> Entry? {
        switch changes[key] {
        case .put(let entry)?: return entry
        case .removed?: return nil
        case nil: return stored.flatMap { stored in stored.index(of: key).map { stored.entry(at: $0) } }
        }
    }

    private func contains(key: [UInt8]) -> Bool {
        switch changes[key] {
        case .put?: return true
        case .removed?: return false
        case nil: return stored?.index(of: key) != nil
        }
    }

    private mutating func store(_ entry: Entry, key: [UInt8]) {
        if !contains(key: key) { count += 1 }
        changes[key] = .put(entry)
    }

    private mutating func delete(key: [UInt8]) {
        precondition(contains(key: key), "deleting an absent entry")
        count -= 1
        changes[key] = stored?.index(of: key) != nil ? .removed : nil
    }

    /// One entry met by `forEachRecord`: a stored record untouched since decryption, or an edited entry.
    enum Record {
        case stored(StoredRecords, index: Int)
        case edited(name: [UInt8], entry: Entry)

        /// Calls `body` with the name's UTF-8 bytes.
        func withName<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
            switch self {
            case .stored(let records, let index): return withExtendedLifetime(records) { body(records.name(at: index)) }
            case .edited(let name, _): return name.withUnsafeBytes(body)
            }
        }

        var name: String { withName { String(decoding: $0, as: UTF8.self) } }

        var entry: Entry {
            switch self {
            case .stored(let records, let index): return records.entry(at: index)
            case .edited(_, let entry): return entry
            }
        }
    }

    /// A stretch of the vault in name order: stored records untouched since decryption, which lie
    /// back to back in the plaintext, or one edited entry.
    enum Segment {
        case stored(StoredRecords, Range<Int>)
        case edited(name: [UInt8], entry: Entry)
    }

    /// Calls `body` for the vault in name order, as runs of untouched stored records between the
    /// edited entries. Each edit is placed by binary search, so the cost grows with the number of
    /// edits, not of entries.
    func forEachSegment<E: Error>(_ body: (Segment) throws(E) -> Void) throws(E) {
        let edits = changes.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var next = 0
        for (name, change) in edits {
            if let stored {
                let (position, found) = stored.position(of: name)
                if position > next { try body(.stored(stored, next..<position)) }
                next = found ? position + 1 : position  // a stored record of that name was replaced or removed
            }
            if case .put(let entry) = change { try body(.edited(name: name, entry: entry)) }
        }
        if let stored, next < stored.count { try body(.stored(stored, next..<stored.count)) }
    }

    /// Calls `body` for every entry in name order.
    func forEachRecord<E: Error>(_ body: (Record) throws(E) -> Void) throws(E) {
        try forEachSegment { (segment) throws(E) in
            switch segment {
            case .stored(let records, let range):
                for index in range { try body(.stored(records, index: index)) }
            case .edited(let name, let entry):
                try body(.edited(name: name, entry: entry))
            }
        }
    }
}

// MARK: - Equality

extension Vault: Equatable {
    /// Two vaults are equal when they hold the same names with equal entries.
    ///
    /// Copies of one decrypted vault compare only the entries either has changed.
    public static func == (lhs: Vault, rhs: Vault) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.stored === rhs.stored {
            for key in Set(lhs.changes.keys).union(rhs.changes.keys) where lhs.entry(forKey: key) != rhs.entry(forKey: key) {
                return false
            }
            return true
        }
        var left: [([UInt8], Entry)] = [], right: [([UInt8], Entry)] = []
        lhs.forEachRecord { record in left.append((record.withName { Array($0) }, record.entry)) }
        rhs.forEachRecord { record in right.append((record.withName { Array($0) }, record.entry)) }
        return left.elementsEqual(right) { $0.0 == $1.0 && $0.1 == $1.1 }
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
        guard bytes.allSatisfy(isFieldByte) else {
            throw .invalidName("field name '\(field)' may hold only letters, digits, '_', '.' and '-'")
        }
    }

    // MARK: Allocation-free checks for the decoder

    /// Whether `bytes` are UTF-8 and a valid entry name, in one pass that allocates nothing.
    ///
    /// The decoder's fast path over every name of a vault; `validate(utf8:display:)` explains a failure.
    static func isValid(utf8 bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= VaultLimits.maxNameLength else { return false }
        var index = 0, componentStart = 0
        while index < bytes.count {
            // Printable ASCII eight bytes at a time, the last word overlapping the one before it
            // (its bytes already checked are printable ASCII too); each '/' in the new bytes
            // ends a component, which is then checked.
            if bytes.count >= 8 {
                let wordStart = min(index, bytes.count - 8)
                let word = bytes.loadUnaligned(fromByteOffset: wordStart, as: UInt64.self)
                if isPrintableASCII(word) {
                    var slashes = zeroBytes(word ^ ASCIIWord.slash) >> UInt64(8 * (index - wordStart))
                    while slashes != 0 {
                        let slash = index + slashes.trailingZeroBitCount / 8
                        guard isValidComponent(bytes, componentStart..<slash) else { return false }
                        componentStart = slash + 1
                        slashes &= slashes &- 1
                    }
                    index = wordStart + 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte < 0x80 {
                if byte < 0x20 || byte == 0x7F { return false }
                if byte == 0x2F {
                    guard isValidComponent(bytes, componentStart..<index) else { return false }
                    componentStart = index + 1
                }
                index += 1
                continue
            }
            // The allowed second bytes exclude overlong forms, surrogates, code points above U+10FFFF
            // and, after C2, the C1 controls U+0080–U+009F.
            let length: Int, second: ClosedRange<UInt8>
            switch byte {
            case 0xC2: (length, second) = (2, 0xA0...0xBF)
            case 0xC3...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return false
            }
            guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { return false }
            for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
            index += length
        }
        return isValidComponent(bytes, componentStart..<bytes.count)
    }

    /// Eight copies of a byte, for the word-at-a-time checks.
    private enum ASCIIWord {
        static let ones: UInt64 = 0x0101_0101_0101_0101
        static let highBits: UInt64 = 0x8080_8080_8080_8080
        static let lowBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        static let slash: UInt64 = ones &* 0x2F
    }

    /// Whether all eight bytes of `word` are in 0x20…0x7E (bit tricks on the whole word).
    @inline(__always)
    private static func isPrintableASCII(_ word: UInt64) -> Bool {
        // With no high bit set, (x - n) borrows into a byte's high bit exactly when that byte is below n:
        // the word has a control byte iff some byte is below 0x20, a DEL iff some byte of word ^ 7F is zero.
        func hasByteBelow(_ x: UInt64, _ n: UInt64) -> Bool { (x &- ASCIIWord.ones &* n) & ~x & ASCIIWord.highBits != 0 }
        return word & ASCIIWord.highBits == 0 && !hasByteBelow(word, 0x20) && zeroBytes(word ^ (ASCIIWord.ones &* 0x7F)) == 0
    }

    /// The high bit of each zero byte of `word`, and no other bit (exact: no borrow between bytes).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(((word & ASCIIWord.lowBits) &+ ASCIIWord.lowBits) | word | ASCIIWord.lowBits)
    }

    /// Whether `bytes` form a valid field name (1…64 of `A–Z a–z 0–9 _ . -`).
    static func isValidField(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (1...VaultLimits.maxFieldNameLength).contains(bytes.count) && bytes.allSatisfy(isFieldByte)
    }

    /// `A–Z a–z 0–9 _ . -` as a bit set over the ASCII codes: bits 0–63, then 64–127.
    private static let fieldBytes: (low: UInt64, high: UInt64) = (0x03FF_6000_0000_0000, 0x07FF_FFFE_87FF_FFFE)

    @inline(__always)
    private static func isFieldByte(_ byte: UInt8) -> Bool {
        let bits = byte < 64 ? fieldBytes.low : (byte < 128 ? fieldBytes.high : 0)
        return (bits >> UInt64(byte & 63)) & 1 == 1
    }

    /// A path component is neither empty nor `.` nor `..`.
    private static func isValidComponent(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        switch range.count {
        case 0: return false
        case 1: return bytes[range.lowerBound] != 0x2E
        case 2: return bytes[range.lowerBound] != 0x2E || bytes[range.lowerBound + 1] != 0x2E
        default: return true
        }
    }
}
