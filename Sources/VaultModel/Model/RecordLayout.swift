// MARK: - The entry record (docs/FORMAT.md §7)

/// The one description of an entry record's bytes, all little-endian:
///
///     name length (u16) ‖ name ‖ created (u64) ‖ modified (u64) ‖ value length (u32) ‖ value
///     ‖ field count (u8) ‖ per field: name length (u8) ‖ name ‖ value length (u32) ‖ value
///
/// The length computation, the encoder, the validating decoder (`EntryCodec`) and the reader of
/// validated records (`StoredRecords`) all go through it: the widths are the type aliases below,
/// and the order is written once, in `write` and in `read`.
package enum RecordLayout {
    // MARK: Widths

    /// The entry name's length.
    package typealias NameLength = UInt16
    /// The created and modified times (milliseconds since the Unix epoch, two's complement).
    package typealias Time = UInt64
    /// The length of the value and of each field value.
    package typealias ValueLength = UInt32
    /// The number of fields.
    package typealias FieldCount = UInt8
    /// A field name's length.
    package typealias FieldNameLength = UInt8

    /// The bytes of a record besides its name, value and fields.
    package static let fixedLength = MemoryLayout<NameLength>.size + 2 * MemoryLayout<Time>.size
        + MemoryLayout<ValueLength>.size + MemoryLayout<FieldCount>.size
    /// The bytes of a field besides its name and value.
    package static let fieldFixedLength = MemoryLayout<FieldNameLength>.size + MemoryLayout<ValueLength>.size
    /// The smallest record: a one-byte name, an empty value, no fields.
    static let minimumLength = fixedLength + 1

    // MARK: Writing

    /// The encoded length of a record: a name of `nameLength` bytes, a value of `valueLength`,
    /// and `fieldCount` fields whose names and values hold `fieldBytes` bytes in all.
    @inline(__always)
    package static func length(nameLength: Int, valueLength: Int, fieldCount: Int, fieldBytes: Int) -> Int {
        fixedLength + nameLength + valueLength + fieldCount * fieldFixedLength + fieldBytes
    }

    /// The encoded length of `entry` under a name of `nameLength` bytes.
    static func length(nameLength: Int, entry: Entry) -> Int {
        var fieldBytes = 0
        for (field, value) in entry.fields { fieldBytes += field.utf8.count + value.count }
        return length(nameLength: nameLength, valueLength: entry.value.count, fieldCount: entry.fields.count, fieldBytes: fieldBytes)
    }

    /// Appends the record of `entry` under `name`, its fields sorted by name bytes.
    static func write(name: [UInt8], entry: Entry, into sink: inout some ByteSink) {
        name.withUnsafeBytes { write(name: $0, entry: entry, into: &sink) }
    }

    /// Appends the record of `entry` under the name whose UTF-8 bytes are `name`, its fields
    /// sorted by name bytes.
    static func write(name: UnsafeRawBufferPointer, entry: Entry, into sink: inout some ByteSink) {
        entry.value.withUnsafeBytes { value in
            write(name: name, created: entry.created, modified: entry.modified, value: value, fieldCount: entry.fields.count,
                  into: &sink) { appendField in
                func add(_ field: String, _ value: [UInt8]) {
                    var field = field
                    field.withUTF8 { name in value.withUnsafeBytes { appendField(UnsafeRawBufferPointer(name), $0) } }
                }
                if entry.fields.count == 1, let (field, value) = entry.fields.first {
                    add(field, value)  // the common case of imports: nothing to sort
                    return
                }
                for field in entry.fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    add(field, entry.fields[field]!)
                }
            }
        }
    }

    /// `write(name:created:modified:value:fieldCount:into:fields:)` into memory the caller made room
    /// in (an import's records, Interchange/ImportRecords.swift): specialised here, since a generic
    /// `package` function is not specialised in another target.
    package static func write(
        name: UnsafeRawBufferPointer, created: Int64, modified: Int64, value: UnsafeRawBufferPointer, fieldCount: Int,
        intoCursor sink: inout UnsafeByteCursor, fields: (_ append: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) -> Void
    ) {
        write(name: name, created: created, modified: modified, value: value, fieldCount: fieldCount, into: &sink,
              fields: fields)
    }

    /// Appends one record, its parts in layout order: the one place that writes the order.
    ///
    /// `fields` hands each of the `fieldCount` fields, in the order they are stored (by name
    /// bytes, each name once), to the function it is given: its name's bytes, then its value's.
    @inline(__always)
    static func write<Sink: ByteSink>(
        name: UnsafeRawBufferPointer, created: Int64, modified: Int64, value: UnsafeRawBufferPointer, fieldCount: Int,
        into sink: inout Sink, fields: (_ append: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) -> Void
    ) {
        sink.append(NameLength(name.count))
        sink.append(raw: name)
        sink.append(Time(bitPattern: created))
        sink.append(Time(bitPattern: modified))
        sink.append(ValueLength(value.count))
        sink.append(raw: value)
        sink.append(FieldCount(fieldCount))
        fields { name, value in
            sink.append(FieldNameLength(name.count))
            sink.append(raw: name)
            sink.append(ValueLength(value.count))
            sink.append(raw: value)
        }
    }

    // MARK: Reading

    /// Reads the name at the start of a record (all a name lookup needs).
    @inline(__always)
    static func readName(_ reader: inout RecordReader, entry: Int) throws(VaultError) -> UnsafeRawBufferPointer {
        let length = Int(try reader.read(NameLength.self, Part.nameLength.describe(entry: entry)))
        return try reader.readRaw(length, Part.name.describe(entry: entry))
    }

    /// Reads one whole record, in layout order, handing each part to `visitor` as it is met.
    ///
    /// The visitor sees each length before its bytes are read, so it can refuse one over a limit
    /// first. Every read is bounds-checked; what is read is named in errors as `Part` describes it.
    @inline(__always)
    static func read(_ reader: inout RecordReader, entry: Int, into visitor: inout some RecordVisitor) throws(VaultError) {
        try visitor.visitName(try readName(&reader, entry: entry))
        let created = try reader.read(Time.self, Part.created.describe(entry: entry))
        let modified = try reader.read(Time.self, Part.modified.describe(entry: entry))
        visitor.visitTimes(created: Int64(bitPattern: created), modified: Int64(bitPattern: modified))
        visitor.visitValue(try readValue(&reader, .value, length: .valueLength, entry: entry, &visitor))
        let fieldCount = Int(try reader.read(FieldCount.self, Part.fieldCount.describe(entry: entry)))
        try visitor.visitFieldCount(fieldCount)
        for field in 0..<fieldCount {
            let nameLength = Int(try reader.read(FieldNameLength.self, Part.fieldNameLength(field).describe(entry: entry)))
            try visitor.visitFieldName(try reader.readRaw(nameLength, Part.fieldName(field).describe(entry: entry)), at: field)
            let value = try readValue(&reader, .fieldValue(field), length: .fieldValueLength(field), entry: entry, &visitor)
            visitor.visitFieldValue(value, at: field)
        }
    }

    /// Reads one whole record and keeps nothing, with the checks and errors of `read(_:entry:into:)`:
    /// for a reader that wants only where records end (`HistorySkim`, the entries-only read). Not
    /// generic, so that the read is specialised here, in the module of the layout.
    package static func skip(_ reader: inout RecordReader, entry: Int) throws(VaultError) {
        var skipped = SkippedRecord()
        try read(&reader, entry: entry, into: &skipped)
    }

    /// Visits nothing: only the record's lengths matter to `skip`.
    private struct SkippedRecord: RecordVisitor {}

    @inline(__always)
    private static func readValue(
        _ reader: inout RecordReader, _ part: Part, length lengthPart: Part, entry: Int, _ visitor: inout some RecordVisitor
    ) throws(VaultError) -> UnsafeRawBufferPointer {
        let length = Int(try reader.read(ValueLength.self, lengthPart.describe(entry: entry)))
        try visitor.checkValueLength(length, of: part)
        return try reader.readRaw(length, part.describe(entry: entry))
    }

    /// The parts of a record, as error messages name them.
    enum Part {
        case nameLength, name, created, modified, valueLength, value, fieldCount
        case fieldNameLength(Int), fieldName(Int), fieldValueLength(Int), fieldValue(Int)

        /// This part of record `entry`, e.g. "entry 3 field 1 value length".
        func describe(entry: Int) -> String {
            switch self {
            case .nameLength: return "entry \(entry) name length"
            case .name: return "entry \(entry) name"
            case .created: return "entry \(entry) created"
            case .modified: return "entry \(entry) modified"
            case .valueLength: return "entry \(entry) value length"
            case .value: return "entry \(entry) value"
            case .fieldCount: return "entry \(entry) field count"
            case .fieldNameLength(let field): return "entry \(entry) field \(field) name length"
            case .fieldName(let field): return "entry \(entry) field \(field) name"
            case .fieldValueLength(let field): return "entry \(entry) field \(field) value length"
            case .fieldValue(let field): return "entry \(entry) field \(field) value"
            }
        }
    }
}

/// Records are read where they lie in the decrypted plaintext.
package typealias RecordReader = ByteReader<Slice<UnsafeRawBufferPointer>>

// MARK: - What a record read meets

/// What `RecordLayout.read` hands over, part by part in layout order: the validating decoder
/// checks each part, the readers of validated records keep the parts they want.
///
/// Buffers point into the plaintext and are valid while it lives. Every method but the ones a
/// visitor needs does nothing by default.
protocol RecordVisitor {
    /// The entry name.
    mutating func visitName(_ name: UnsafeRawBufferPointer) throws(VaultError)
    /// The created and modified times.
    mutating func visitTimes(created: Int64, modified: Int64)
    /// A value's length (`part` is `.value` or `.fieldValue`), before its bytes are read.
    func checkValueLength(_ length: Int, of part: RecordLayout.Part) throws(VaultError)
    /// The entry's value.
    mutating func visitValue(_ value: UnsafeRawBufferPointer)
    /// The number of fields, before any is read.
    mutating func visitFieldCount(_ count: Int) throws(VaultError)
    /// The name of field `index`.
    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) throws(VaultError)
    /// The value of field `index`.
    mutating func visitFieldValue(_ value: UnsafeRawBufferPointer, at index: Int)
}

extension RecordVisitor {
    mutating func visitName(_ name: UnsafeRawBufferPointer) throws(VaultError) {}
    mutating func visitTimes(created: Int64, modified: Int64) {}
    func checkValueLength(_ length: Int, of part: RecordLayout.Part) throws(VaultError) {}
    mutating func visitValue(_ value: UnsafeRawBufferPointer) {}
    mutating func visitFieldCount(_ count: Int) throws(VaultError) {}
    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) throws(VaultError) {}
    mutating func visitFieldValue(_ value: UnsafeRawBufferPointer, at index: Int) {}
}
