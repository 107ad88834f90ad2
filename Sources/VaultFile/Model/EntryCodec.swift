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

    static func encode(_ vault: Vault) throws(VaultError) -> [UInt8] {
        var writer = ByteWriter()
        writer.append(version)
        writer.append(UInt32(vault.count))
        let storage = vault.storage
        for key in vault.sortedKeys {
            let entry = storage[key]!
            writer.append(UInt16(key.count))
            writer.append(key)
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
            guard writer.bytes.count <= VaultLimits.maxContentLength else {
                throw .limitExceeded("the vault contents exceed \(VaultLimits.maxContentLength) bytes (1 GiB)")
            }
        }
        return writer.bytes
    }

    static func decode(_ content: [UInt8]) throws(VaultError) -> Vault { try decode(content[...]) }

    static func decode(_ content: ArraySlice<UInt8>) throws(VaultError) -> Vault {
        guard content.count <= VaultLimits.maxContentLength else {
            throw .contentsDamaged("the contents exceed \(VaultLimits.maxContentLength) bytes")
        }
        var reader = ByteReader(content, context: "contents") { .contentsDamaged($0) }
        let foundVersion = try reader.readU8("content version")
        guard foundVersion == version else {
            throw .contentsDamaged("content encoding version \(foundVersion) is unknown")
        }
        let count = Int(try reader.readU32("entry count"))
        guard count <= VaultLimits.maxEntries else {
            throw .contentsDamaged("entry count \(count) exceeds \(VaultLimits.maxEntries)")
        }
        var entries: [[UInt8]: Entry] = [:]
        entries.reserveCapacity(min(count, reader.remaining / 27))  // 27: the smallest encoded entry
        var previous: [UInt8]? = nil
        for index in 0..<count {
            let nameLength = Int(try reader.readU16("entry \(index) name length"))
            let key = Array(try reader.read(nameLength, "entry \(index) name"))
            guard String(validating: key, as: UTF8.self) != nil else {
                throw .contentsDamaged("entry \(index) name is not UTF-8")
            }
            do {
                try EntryName.validate(utf8: key, display: String(decoding: key, as: UTF8.self))
            } catch {
                throw .contentsDamaged("entry \(index): \(error.description)")
            }
            if let previous, !previous.lexicographicallyPrecedes(key) {
                throw .contentsDamaged("entry \(index) is out of order or duplicated")
            }
            previous = key
            let created = Int64(bitPattern: try reader.readU64("entry \(index) created"))
            let modified = Int64(bitPattern: try reader.readU64("entry \(index) modified"))
            let value = try readValue(&reader, "entry \(index) value")
            let fieldCount = Int(try reader.readU8("entry \(index) field count"))
            guard fieldCount <= VaultLimits.maxFieldsPerEntry else {
                throw .contentsDamaged("entry \(index) has \(fieldCount) fields; at most \(VaultLimits.maxFieldsPerEntry)")
            }
            var fields: [String: [UInt8]] = [:]
            var previousField: [UInt8]? = nil
            for fieldIndex in 0..<fieldCount {
                let length = Int(try reader.readU8("entry \(index) field \(fieldIndex) name length"))
                let fieldBytes = Array(try reader.read(length, "entry \(index) field \(fieldIndex) name"))
                let field = String(decoding: fieldBytes, as: UTF8.self)
                do { try EntryName.validateField(field) } catch { throw .contentsDamaged("entry \(index): \(error.description)") }
                if let previousField, !previousField.lexicographicallyPrecedes(fieldBytes) {
                    throw .contentsDamaged("entry \(index) field \(fieldIndex) is out of order or duplicated")
                }
                previousField = fieldBytes
                fields[field] = try readValue(&reader, "entry \(index) field \(fieldIndex) value")
            }
            entries[key] = Entry(value: value, fields: fields, created: created, modified: modified)
        }
        guard reader.remaining == 0 else {
            throw .contentsDamaged("\(reader.remaining) bytes after the last entry")
        }
        return Vault(entries: entries)
    }

    private static func readValue(_ reader: inout ByteReader, _ what: @autoclosure () -> String) throws(VaultError) -> [UInt8] {
        let length = Int(try reader.readU32("\(what()) length"))
        guard length <= VaultLimits.maxValueLength else {
            throw .contentsDamaged("\(what()) is \(length) bytes; at most \(VaultLimits.maxValueLength)")
        }
        return Array(try reader.read(length, what()))
    }
}

// MARK: - Public entry points (fuzzing, export)

extension Vault {
    /// The deterministic content encoding of this vault (docs/FORMAT.md §7).
    public func encodedContent() throws(VaultError) -> [UInt8] { try EntryCodec.encode(self) }

    /// Decodes content bytes, rejecting anything a canonical encoder would not produce.
    public init(decodingContent content: [UInt8]) throws(VaultError) { self = try EntryCodec.decode(content[...]) }
}
