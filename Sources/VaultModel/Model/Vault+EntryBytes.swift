import SecureMemory

// MARK: - Entries as the bytes they are stored in

/// One entry as `Vault.forEachEntryBytes` hands it over: its name, value and fields where their
/// bytes lie in the decrypted plaintext, and its times. Nothing is copied.
///
/// Every buffer is valid only during the call that hands it over: do not let it escape.
public struct EntryBytes {
    /// The name's UTF-8 bytes.
    public fileprivate(set) var name = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The value's bytes.
    public fileprivate(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The fields, in byte order of their names (the order of the encoding).
    public fileprivate(set) var fields = UnsafeBufferPointer<FieldBytes>(start: nil, count: 0)
    /// When the entry was created, in milliseconds since the Unix epoch.
    public fileprivate(set) var created: Int64 = 0
    /// When the entry last changed, in milliseconds since the Unix epoch.
    public fileprivate(set) var modified: Int64 = 0
}

/// One field of an `EntryBytes`: its name (ASCII, `EntryName.validateField`) and value bytes.
public struct FieldBytes: BitwiseCopyable {
    /// The field name's bytes.
    public let name: UnsafeRawBufferPointer
    /// The field value's bytes.
    public let value: UnsafeRawBufferPointer
}

extension Vault {
    /// Calls `body` with the bytes of every entry whose name starts with `prefix` (byte-wise, as
    /// `names(withPrefix:)`), in name order: what `sortedEntries` gives, without copying anything.
    ///
    /// The read-all verbs (exports, `git textconv`, `search --values`) decoded every entry into an
    /// `Entry` (an array per value, a dictionary of fields) to read each byte once: 5–9× a `verify`
    /// at 100,000 entries. A stored record is read where it lies; an entry edited since decryption
    /// is encoded into one scratch record (the same layout, so one reader serves both), which is
    /// wiped after `body` returns. The fields lie in one buffer of room for the most an entry may
    /// have, reused for every entry: nothing is allocated, retained or released per entry.
    public func forEachEntryBytes<E: Error>(withPrefix prefix: String = "", _ body: (EntryBytes) throws(E) -> Void) throws(E) {
        let prefix = Array(prefix.utf8)
        let fields = UnsafeMutableBufferPointer<FieldBytes>.allocate(capacity: VaultLimits.maxFieldsPerEntry)
        defer { fields.deallocate() }
        var reader = EntryBytesReader(fields: fields)
        try forEachSegment { (segment) throws(E) in
            switch segment {
            case .stored(let records, let range):
                try withExtendedLifetime(records) { () throws(E) in
                    for index in range where prefix.isEmpty || Self.hasPrefix(records.name(at: index), prefix) {
                        records.read(index, into: &reader)
                        try reader.hand(to: body)
                    }
                }
            case .edited(let name, let entry):
                guard prefix.isEmpty || name.withUnsafeBytes({ Self.hasPrefix($0, prefix) }) else { return }
                // The exact size up front: a grown array would leave an unwiped copy of the values behind.
                var scratch = ByteWriter(capacity: RecordLayout.length(nameLength: name.count, entry: entry))
                RecordLayout.write(name: name, entry: entry, into: &scratch)
                var record = scratch.bytes
                scratch = ByteWriter()
                defer { wipe(&record) }
                // `withUnsafeBytes` rethrows untyped errors: the body's error is carried out of it.
                var failure: E?
                record.withUnsafeBytes { bytes in
                    var recordReader = RecordReader(bytes[...], reading: .contents)
                    do throws(VaultError) { try RecordLayout.read(&recordReader, entry: 0, into: &reader) } catch {
                        preconditionFailure("an edited entry's own record does not read back: \(error.description)")
                    }
                    do throws(E) { try reader.hand(to: body) } catch { failure = error }
                }
                if let failure { throw failure }
            }
        }
    }

    /// Whether `name` starts with the bytes of `prefix` (one memcmp).
    private static func hasPrefix(_ name: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        name.count >= prefix.count && prefix.withUnsafeBytes { compareBytes(UnsafeRawBufferPointer(rebasing: name[..<$0.count]), $0) == 0 }
    }

    /// The number of bytes the stored records take in the plaintext (0 for a vault built in
    /// memory): what an export sizes its buffer by, so that it rarely grows.
    package var storedRecordsByteCount: Int {
        guard let records = storedRecords, records.count > 0 else { return 0 }
        return records.records(0..<records.count).count
    }
}

// MARK: - The reader

/// Keeps where each part of a record lies; the fields go into a buffer the caller owns.
private struct EntryBytesReader: RecordVisitor {
    private var entry = EntryBytes()
    private let fields: UnsafeMutableBufferPointer<FieldBytes>
    private var fieldName = UnsafeRawBufferPointer(start: nil, count: 0)

    init(fields: UnsafeMutableBufferPointer<FieldBytes>) { self.fields = fields }

    mutating func visitName(_ name: UnsafeRawBufferPointer) throws(VaultError) {
        entry.name = name
        entry.fields = UnsafeBufferPointer(rebasing: fields[..<0])
    }

    mutating func visitFieldCount(_ count: Int) throws(VaultError) {
        // The decoder checked the count against the limit; an edited entry's was checked when put.
        precondition(count <= fields.count, "more fields than an entry may have")
    }

    mutating func visitTimes(created: Int64, modified: Int64) {
        entry.created = created
        entry.modified = modified
    }

    mutating func visitValue(_ value: UnsafeRawBufferPointer) { entry.value = value }

    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) throws(VaultError) { fieldName = name }

    mutating func visitFieldValue(_ value: UnsafeRawBufferPointer, at index: Int) {
        fields[index] = FieldBytes(name: fieldName, value: value)
        entry.fields = UnsafeBufferPointer(rebasing: fields[..<(index + 1)])
    }

    /// Calls `body` with the entry read last.
    func hand<E: Error>(to body: (EntryBytes) throws(E) -> Void) throws(E) { try body(entry) }
}
