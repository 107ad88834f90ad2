import SecureMemory

// MARK: - What a vault keeps of earlier values

/// How much history a vault keeps (docs/FORMAT.md §7.1): stored in the vault, so every
/// teammate's writes apply the same limits.
public struct HistoryPolicy: Equatable, Sendable {
    /// The most earlier versions kept per entry (1…255).
    public var versions: Int
    /// The most bytes of earlier versions kept per entry (1…2³²−1); sizes as `EntryVersion.size`.
    public var byteBudget: Int
    /// The most removed entries kept in the trash (0…65,535).
    public var trashLimit: Int

    /// 10 versions, 1 MiB per entry, 100 removed entries.
    public static let standard = HistoryPolicy(versions: 10, byteBudget: 1 << 20, trashLimit: 100)
    /// The bounds of each setting.
    public static let versionsRange = 1...255
    public static let byteBudgetRange = 1...Int(UInt32.max)
    public static let trashLimitRange = 0...Int(UInt16.max)

    /// Creates a policy; `validate()` checks the bounds.
    public init(versions: Int, byteBudget: Int, trashLimit: Int) {
        self.versions = versions
        self.byteBudget = byteBudget
        self.trashLimit = trashLimit
    }

    /// Throws `malformedInput` naming the setting outside its bounds.
    public func validate() throws(VaultError) {
        guard Self.versionsRange.contains(versions) else {
            throw .malformedInput("history keeps 1 to 255 versions per entry (0 turns history off), not \(versions)")
        }
        guard Self.byteBudgetRange.contains(byteBudget) else {
            throw .malformedInput("the history budget per entry is 1 byte to 4 GiB (0 turns history off), not \(byteBudget)")
        }
        guard Self.trashLimitRange.contains(trashLimit) else {
            throw .malformedInput("the trash keeps 0 to 65535 removed entries, not \(trashLimit)")
        }
    }

    /// The versions this policy keeps of `versions` (newest first): the newest ones while they
    /// fit both the count and the byte budget. The oldest go first; a version larger than the
    /// whole budget keeps none, not even older ones that would fit.
    func trimmed(_ versions: [EntryVersion]) -> [EntryVersion] {
        var kept = 0, bytes = 0
        for version in versions {
            guard kept < self.versions, bytes + version.size <= byteBudget else { break }
            kept += 1
            bytes += version.size
        }
        return Array(versions.prefix(kept))
    }
}

/// One earlier version of an entry: the entry as it was, and when it was replaced or removed.
public struct EntryVersion: Equatable, Sendable {
    /// The value, fields and times the entry had.
    public var entry: Entry
    /// When this version stopped being the current one, in milliseconds since the Unix epoch.
    public var replaced: Int64

    /// Creates a version.
    public init(entry: Entry, replaced: Int64) {
        self.entry = entry
        self.replaced = replaced
    }

    /// The bytes this version counts against the budget: its value, and each field's name and value.
    public var size: Int {
        entry.fields.reduce(entry.value.count) { $0 + $1.key.utf8.count + $1.value.count }
    }
}

// MARK: - The history section (content version 2)

/// The layout of the history section (docs/FORMAT.md §7.1), all little-endian:
///
///     history section = record count (u32) ‖ record*
///     record          = name length (u16) ‖ name ‖ version count (u8) ‖ version*
///     version         = replaced (u64) ‖ created (u64) ‖ modified (u64) ‖ value length (u32) ‖ value
///                       ‖ field count (u8) ‖ per field: name length (u8) ‖ name ‖ value length (u32) ‖ value
///
/// Records are in strictly increasing byte order of their names; versions newest first.
enum HistoryLayout {
    typealias RecordCount = UInt32
    typealias VersionCount = UInt8

    /// The encoded length of one record.
    static func length(nameLength: Int, versions: [EntryVersion]) -> Int {
        versions.reduce(MemoryLayout<RecordLayout.NameLength>.size + nameLength + MemoryLayout<VersionCount>.size) {
            $0 + MemoryLayout<RecordLayout.Time>.size + RecordLayout.length(nameLength: 0, entry: $1.entry) - MemoryLayout<RecordLayout.NameLength>.size
        }
    }

    /// Appends one record.
    static func write(name: [UInt8], versions: [EntryVersion], into sink: inout some ByteSink) {
        sink.append(RecordLayout.NameLength(name.count))
        sink.append(name)
        sink.append(VersionCount(versions.count))
        for version in versions {
            sink.append(RecordLayout.Time(bitPattern: version.replaced))
            sink.append(RecordLayout.Time(bitPattern: version.entry.created))
            sink.append(RecordLayout.Time(bitPattern: version.entry.modified))
            sink.append(RecordLayout.ValueLength(version.entry.value.count))
            sink.append(version.entry.value)
            sink.append(RecordLayout.FieldCount(version.entry.fields.count))
            for field in version.entry.fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                let value = version.entry.fields[field]!
                sink.append(RecordLayout.FieldNameLength(field.utf8.count))
                sink.append(field.utf8)
                sink.append(RecordLayout.ValueLength(value.count))
                sink.append(value)
            }
        }
    }

    /// Reads and checks one record; `decode` false only checks it (nothing is copied).
    static func read(_ reader: inout RecordReader, record: Int, decode: Bool) throws(VaultError) -> (name: UnsafeRawBufferPointer, versions: [EntryVersion]) {
        let nameLength = Int(try reader.read(RecordLayout.NameLength.self, "history record \(record) name length"))
        let name = try reader.readRaw(nameLength, "history record \(record) name")
        guard EntryName.isValid(utf8: name)
            || (String(validating: Array(name), as: UTF8.self) != nil && (try? EntryName.validate(utf8: Array(name), display: "")) != nil) else {
            throw .contentsDamaged("history record \(record) has an invalid name")
        }
        let count = Int(try reader.read(VersionCount.self, "history record \(record) version count"))
        guard count > 0 else { throw .contentsDamaged("history record \(record) has no version") }
        var versions: [EntryVersion] = []
        for index in 0..<count {
            let what = "history record \(record) version \(index + 1)"
            let replaced = Int64(bitPattern: try reader.read(RecordLayout.Time.self, "\(what) replaced"))
            let created = Int64(bitPattern: try reader.read(RecordLayout.Time.self, "\(what) created"))
            let modified = Int64(bitPattern: try reader.read(RecordLayout.Time.self, "\(what) modified"))
            let value = try readValue(&reader, "\(what) value")
            let fieldCount = Int(try reader.read(RecordLayout.FieldCount.self, "\(what) field count"))
            guard fieldCount <= VaultLimits.maxFieldsPerEntry else {
                throw .contentsDamaged("\(what) has \(fieldCount) fields; at most \(VaultLimits.maxFieldsPerEntry)")
            }
            var fields: [String: [UInt8]] = [:]
            var previous: UnsafeRawBufferPointer?
            for field in 0..<fieldCount {
                let length = Int(try reader.read(RecordLayout.FieldNameLength.self, "\(what) field \(field) name length"))
                let fieldName = try reader.readRaw(length, "\(what) field \(field) name")
                guard EntryName.isValidField(fieldName) else { throw .contentsDamaged("\(what) field \(field) has an invalid name") }
                if let previous, compareBytes(previous, fieldName) >= 0 {
                    throw .contentsDamaged("\(what) field \(field) is out of order or duplicated")
                }
                previous = fieldName
                let fieldValue = try readValue(&reader, "\(what) field \(field) value")
                if decode { fields[String(decoding: fieldName, as: UTF8.self)] = Array(fieldValue) }
            }
            if decode {
                versions.append(EntryVersion(entry: Entry(value: Array(value), fields: fields, created: created, modified: modified), replaced: replaced))
            }
        }
        return (name, versions)
    }

    private static func readValue(_ reader: inout RecordReader, _ what: @autoclosure () -> String) throws(VaultError) -> UnsafeRawBufferPointer {
        let length = Int(try reader.read(RecordLayout.ValueLength.self, "\(what()) length"))
        guard length <= VaultLimits.maxValueLength else {
            throw .contentsDamaged("\(what()) is \(length) bytes; at most \(VaultLimits.maxValueLength)")
        }
        return try reader.readRaw(length, what())
    }
}

// MARK: - The history section as decrypted

/// The history section of a decrypted vault, where it lies, checked whole and indexed by where
/// each record starts; records are decoded only when asked for.
///
/// Made only when a command reads or changes history (never by `get`): `EntryCodec.decode` keeps
/// the section's range and leaves it unread.
final class StoredHistory: Sendable {
    private let plaintext: PlaintextBuffer
    /// Where each record starts, then where the last one ends.
    private let starts: [Int]

    /// Checks the section at `range` of `plaintext` (docs/FORMAT.md §7.1) and indexes its records.
    init(plaintext: PlaintextBuffer, range: Range<Int>) throws(VaultError) {
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        var reader = RecordReader(bytes[range], reading: .contents)
        let count = Int(try reader.read(HistoryLayout.RecordCount.self, "history record count"))
        guard count <= VaultLimits.maxEntries + HistoryPolicy.trashLimitRange.upperBound else {
            throw .contentsDamaged("history record count \(count) exceeds \(VaultLimits.maxEntries + HistoryPolicy.trashLimitRange.upperBound)")
        }
        var starts: [Int] = []
        starts.reserveCapacity(min(count, reader.remaining / 12) + 1)
        var previous: UnsafeRawBufferPointer?
        for record in 0..<count {
            starts.append(reader.offset)
            let (name, _) = try HistoryLayout.read(&reader, record: record, decode: false)
            if let previous, compareBytes(previous, name) >= 0 {
                throw .contentsDamaged("history record \(record) is out of order or duplicated")
            }
            previous = name
        }
        guard reader.remaining == 0 else { throw .contentsDamaged("\(reader.remaining) bytes after the last history record") }
        starts.append(reader.offset)
        self.plaintext = plaintext
        self.starts = starts
    }

    /// The number of records.
    var count: Int { starts.count - 1 }

    private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(plaintext.bytes) }

    private func reader(at index: Int) -> RecordReader {
        RecordReader(bytes[starts[index]..<starts[index + 1]], reading: .contents)
    }

    /// The name of record `index`, copied.
    func name(at index: Int) -> [UInt8] {
        var reader = reader(at: index)
        do {
            let length = Int(try reader.read(RecordLayout.NameLength.self, "history record \(index) name length"))
            return Array(try reader.readRaw(length, "history record \(index) name"))
        } catch { Self.checkedRecordFailed(error) }
    }

    /// The versions of record `index`, newest first.
    func versions(at index: Int) -> [EntryVersion] {
        var reader = reader(at: index)
        do { return try HistoryLayout.read(&reader, record: index, decode: true).versions } catch { Self.checkedRecordFailed(error) }
    }

    /// The encoded records `range`, back to back. Valid while this object lives.
    func records(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[starts[range.lowerBound]..<starts[range.upperBound]])
    }

    /// Where `key` is or would be, and whether a record has that name.
    func position(of key: [UInt8]) -> (index: Int, found: Bool) {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            let name = name(at: middle)
            if name == key { return (middle, true) }
            if name.lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    /// The section was checked whole when this object was made, so a read that fails is a bug.
    private static func checkedRecordFailed(_ error: VaultError) -> Never {
        preconditionFailure("a checked history record fails: \(error.description)")
    }
}
