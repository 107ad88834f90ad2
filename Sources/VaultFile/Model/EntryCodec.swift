import SecureMemory

// MARK: - Deterministic entry encoding (payload content, v1)

/// Encodes and decodes a `Vault` as the payload content (docs/FORMAT.md, "Content").
///
/// Deterministic: entries sorted by name bytes, fields by name, fixed-width
/// little-endian lengths. Decoding bounds-checks every length and rejects
/// anything a canonical encoder would not produce (unsorted or duplicate
/// names, invalid names, trailing bytes).
enum EntryCodec {
    /// The content encoding version.
    static let version: UInt8 = 1

    // MARK: Encoding

    /// The exact length of the encoded contents; throws when it exceeds the limit, before anything is written.
    static func encodedLength(_ vault: Vault) throws(VaultError) -> Int {
        var length = 5
        vault.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range):
                length += records.records(range).count
            case .edited(let name, let entry):
                length += 2 + name.count + 8 + 8 + 4 + entry.value.count + 1
                for (field, value) in entry.fields { length += 1 + field.utf8.count + 4 + value.count }
            }
        }
        guard length <= VaultLimits.maxContentLength else {
            throw .limitExceeded("the vault contents exceed \(VaultLimits.maxContentLength) bytes (1 GiB)")
        }
        return length
    }

    /// Appends the encoded contents to `writer`: each run of untouched records copied as it was decrypted, edited entries encoded anew.
    static func encode(_ vault: Vault, into writer: inout some ByteSink) {
        writer.append(version)
        writer.append(UInt32(vault.count))
        vault.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range):
                withExtendedLifetime(records) { writer.append(raw: records.records(range)) }
            case .edited(let name, let entry):
                writer.append(UInt16(name.count))
                writer.append(name)
                writer.append(UInt64(bitPattern: entry.created))
                writer.append(UInt64(bitPattern: entry.modified))
                writer.append(UInt32(entry.value.count))
                writer.append(entry.value)
                writer.append(UInt8(entry.fields.count))
                for field in entry.fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    let value = entry.fields[field]!
                    writer.append(UInt8(field.utf8.count))
                    writer.append(field.utf8)
                    writer.append(UInt32(value.count))
                    writer.append(value)
                }
            }
        }
    }

    /// The encoded contents in a new array of exactly their length.
    static func encode(_ vault: Vault) throws(VaultError) -> [UInt8] {
        var writer = ByteWriter(capacity: try encodedLength(vault))
        encode(vault, into: &writer)
        return writer.bytes
    }

    // MARK: Decoding

    static func decode(_ content: [UInt8]) throws(VaultError) -> Vault {
        try decode(PlaintextBuffer.forVault(copying: content), content: 0..<content.count)
    }

    /// Validates the contents at `content` in `plaintext` in one pass that allocates only the
    /// record index, and returns a vault over them (which keeps `plaintext`).
    static func decode(_ plaintext: PlaintextBuffer, content: Range<Int>) throws(VaultError) -> Vault {
        guard content.count <= VaultLimits.maxContentLength else {
            throw .contentsDamaged("the contents exceed \(VaultLimits.maxContentLength) bytes")
        }
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        var reader = ByteReader(bytes[content], context: "contents") { .contentsDamaged($0) }
        let foundVersion = try reader.readU8("content version")
        guard foundVersion == version else {
            throw .contentsDamaged("content encoding version \(foundVersion) is unknown")
        }
        let count = Int(try reader.readU32("entry count"))
        guard count <= VaultLimits.maxEntries else {
            throw .contentsDamaged("entry count \(count) exceeds \(VaultLimits.maxEntries)")
        }
        var starts: [Int] = []
        starts.reserveCapacity(min(count, reader.remaining / 27) + 1)  // 27: the smallest encoded entry
        var previousName = UnsafeRawBufferPointer(start: nil, count: 0)
        // The field names of the entry before, all valid: entries mostly repeat them, and a name
        // equal to one of them needs no second check.
        var checkedFields: [UnsafeRawBufferPointer] = []
        for index in 0..<count {
            starts.append(reader.offset)
            let nameLength = Int(try reader.readU16("entry \(index) name length"))
            let name = UnsafeRawBufferPointer(rebasing: try reader.read(nameLength, "entry \(index) name"))
            if !EntryName.isValid(utf8: name) { try explainInvalidName(name, entry: index) }
            if index > 0 && compareBytes(previousName, name) >= 0 {
                throw .contentsDamaged("entry \(index) is out of order or duplicated")
            }
            previousName = name
            _ = try reader.readU64("entry \(index) created")
            _ = try reader.readU64("entry \(index) modified")
            try skipValue(&reader, "entry \(index) value")
            let fieldCount = Int(try reader.readU8("entry \(index) field count"))
            guard fieldCount <= VaultLimits.maxFieldsPerEntry else {
                throw .contentsDamaged("entry \(index) has \(fieldCount) fields; at most \(VaultLimits.maxFieldsPerEntry)")
            }
            var previousField = UnsafeRawBufferPointer(start: nil, count: 0)
            for fieldIndex in 0..<fieldCount {
                let length = Int(try reader.readU8("entry \(index) field \(fieldIndex) name length"))
                let field = UnsafeRawBufferPointer(rebasing: try reader.read(length, "entry \(index) field \(fieldIndex) name"))
                if fieldIndex < checkedFields.count && compareBytes(checkedFields[fieldIndex], field) == 0 {
                    // Checked in the entry before.
                } else if EntryName.isValidField(field) {
                    if fieldIndex < checkedFields.count { checkedFields[fieldIndex] = field } else { checkedFields.append(field) }
                } else {
                    do { try EntryName.validateField(String(decoding: field, as: UTF8.self)) } catch {
                        throw .contentsDamaged("entry \(index): \(error.description)")
                    }
                }
                if fieldIndex > 0 && compareBytes(previousField, field) >= 0 {
                    throw .contentsDamaged("entry \(index) field \(fieldIndex) is out of order or duplicated")
                }
                previousField = field
                try skipValue(&reader, "entry \(index) field \(fieldIndex) value")
            }
        }
        guard reader.remaining == 0 else {
            throw .contentsDamaged("\(reader.remaining) bytes after the last entry")
        }
        starts.append(reader.offset)
        return Vault(stored: StoredRecords(plaintext: plaintext, starts: starts))
    }

    /// Throws the message for a name the fast check refused: not UTF-8, or which rule it breaks.
    private static func explainInvalidName(_ name: UnsafeRawBufferPointer, entry index: Int) throws(VaultError) {
        let key = Array(name)
        guard String(validating: key, as: UTF8.self) != nil else {
            throw .contentsDamaged("entry \(index) name is not UTF-8")
        }
        do {
            try EntryName.validate(utf8: key, display: String(decoding: key, as: UTF8.self))
        } catch {
            throw .contentsDamaged("entry \(index): \(error.description)")
        }
        // The fast check refused what the full rules accept: the full rules decide.
    }

    private static func skipValue(
        _ reader: inout ByteReader<Slice<UnsafeRawBufferPointer>>, _ what: @autoclosure () -> String
    ) throws(VaultError) {
        let length = Int(try reader.readU32("\(what()) length"))
        guard length <= VaultLimits.maxValueLength else {
            throw .contentsDamaged("\(what()) is \(length) bytes; at most \(VaultLimits.maxValueLength)")
        }
        _ = try reader.read(length, what())
    }
}

// MARK: - Public entry points (fuzzing, export)

extension Vault {
    /// The deterministic content encoding of this vault (docs/FORMAT.md §7).
    public func encodedContent() throws(VaultError) -> [UInt8] { try EntryCodec.encode(self) }

    /// Decodes content bytes, rejecting anything a canonical encoder would not produce.
    public init(decodingContent content: [UInt8]) throws(VaultError) { self = try EntryCodec.decode(content) }
}
