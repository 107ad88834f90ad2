import SecureMemory

// MARK: - Deterministic entry encoding (payload content, v1)

/// Encodes and decodes a `Vault` as the payload content (docs/FORMAT.md §7): the version, the
/// entry count, then the records as `RecordLayout` lays them out.
///
/// Deterministic: entries sorted by name bytes, fields by name, fixed-width
/// little-endian lengths. Decoding bounds-checks every length and rejects
/// anything a canonical encoder would not produce (unsorted or duplicate
/// names, invalid names, trailing bytes).
package enum EntryCodec {
    /// The content encoding version of a vault without history.
    static let version: UInt8 = 1
    /// The content encoding version of a vault that keeps history (format 1.2, docs/FORMAT.md §7.1).
    package static let historyVersion: UInt8 = 2
    /// The width of the entry count.
    typealias EntryCount = UInt32
    /// The bytes before the first record: the version and the entry count.
    static let prefixLength = MemoryLayout.size(ofValue: version) + MemoryLayout<EntryCount>.size
    /// The history policy of content version 2: versions (u8), byte budget (u32), trash limit (u16).
    static let policyLength = 1 + 4 + 2

    // MARK: Encoding

    /// The exact length of the encoded contents; throws when it exceeds the limit, before anything is written.
    package static func encodedLength(_ vault: Vault) throws(VaultError) -> Int {
        // Every seal sizes its content here first: a vault read for its entries only would lose its history.
        precondition(vault.historyState?.isUnread != true, "a vault read for its entries only is never sealed")
        var length = prefixLength + (vault.historyState == nil ? 0 : policyLength + historyLength(vault.historyState!))
        length += (vault.incoming?.records.length ?? 0) - (vault.incoming?.replacedLength ?? 0)
        vault.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range):
                length += records.records(range).count
            case .edited(let name, let entry):
                length += RecordLayout.length(nameLength: name.count, entry: entry)
            }
        }
        guard length <= VaultLimits.maxContentLength else {
            throw .limitExceeded("the vault contents exceed \(VaultLimits.maxContentLength) bytes (1 GiB)")
        }
        return length
    }

    /// Appends the encoded contents to `writer`: each run of untouched records copied as it was decrypted, edited entries encoded anew,
    /// and the records of an import put as `IncomingRecords` read back as they are written (throws when they cannot be).
    package static func encode(_ vault: Vault, into writer: inout some ByteSink) throws(VaultError) {
        if let history = vault.historyState {
            writer.append(historyVersion)
            writer.append(UInt8(history.policy.versions))
            writer.append(UInt32(history.policy.byteBudget))
            writer.append(UInt16(history.policy.trashLimit))
        } else {
            writer.append(version)
        }
        writer.append(EntryCount(vault.count))
        if let incoming = vault.incoming {
            // No edit beside them (`Vault.put(incoming:clashes:)`): the stored records are the vault.
            try merge(incoming.records, with: vault.storedRecords, into: &writer)
        } else {
            encodeSegments(vault, into: &writer)
        }
        if let history = vault.historyState { encodeHistory(history, into: &writer) }
    }

    /// Appends the vault's segments: each run of untouched records as decrypted, edited entries encoded anew.
    private static func encodeSegments(_ vault: Vault, into writer: inout some ByteSink) {
        vault.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range):
                withExtendedLifetime(records) { writer.append(raw: records.records(range)) }
            case .edited(let name, let entry):
                RecordLayout.write(name: name, entry: entry, into: &writer)
            }
        }
    }

    /// The length of the history section.
    private static func historyLength(_ history: HistoryState) -> Int {
        if history.isUntouched, let section = history.section { return section.range.count }
        var length = MemoryLayout<HistoryLayout.RecordCount>.size
        history.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range): length += records.records(range).count
            case .changed(let name, let versions): length += HistoryLayout.length(nameLength: name.count, versions: versions)
            }
        }
        return length
    }

    /// Appends the history section: as decrypted when nothing changed, else untouched records copied and changed ones encoded.
    private static func encodeHistory(_ history: HistoryState, into writer: inout some ByteSink) {
        if history.isUntouched, let section = history.section {
            withExtendedLifetime(section.plaintext) {
                writer.append(raw: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(section.plaintext.bytes)[section.range]))
            }
            return
        }
        var count = 0
        history.forEachSegment { segment in
            switch segment {
            case .stored(_, let range): count += range.count
            case .changed: count += 1
            }
        }
        writer.append(HistoryLayout.RecordCount(count))
        history.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range): withExtendedLifetime(records) { writer.append(raw: records.records(range)) }
            case .changed(let name, let versions): HistoryLayout.write(name: name, versions: versions, into: &writer)
            }
        }
    }

    /// The encoded contents in a new array of exactly their length.
    static func encode(_ vault: Vault) throws(VaultError) -> [UInt8] {
        var writer = ByteWriter(capacity: try encodedLength(vault))
        try encode(vault, into: &writer)
        return writer.bytes
    }

    // MARK: Decoding

    static func decode(_ content: [UInt8], history: Bool = false) throws(VaultError) -> Vault {
        try decode(PlaintextBuffer.forVault(copying: content), content: 0..<content.count, history: history)
    }

    /// Validates the contents at `content` in `plaintext` in one pass that allocates only the
    /// record index, and returns a vault over them (which keeps `plaintext`).
    ///
    /// `history` is the header's history flag: content version 2 is read only then, and its
    /// history section is kept where it lies, unread, until a command asks for history.
    /// `historyUnreadFrom`: where the entries end in a payload read for its entries only
    /// (`HistorySkim`); the plaintext holds no history then, and the vault can be read but not
    /// sealed, nor its history read.
    package static func decode(
        _ plaintext: PlaintextBuffer, content: Range<Int>, history: Bool = false, historyUnreadFrom entriesEnd: Int? = nil
    ) throws(VaultError) -> Vault {
        // The records are indexed by 4-byte offsets (`StoredRecords.Offset`): contents of at most
        // 1 GiB lie far below 4 GiB in their payload.
        guard content.count <= VaultLimits.maxContentLength, content.upperBound <= Int(StoredRecords.Offset.max) else {
            throw .contentsDamaged("the contents exceed \(VaultLimits.maxContentLength) bytes")
        }
        precondition(entriesEnd == nil || (history && content.contains(entriesEnd! - 1)), "entries end within the content")
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        // Read for its entries only: the reader cannot reach the bytes that were not kept.
        var reader = RecordReader(bytes[content.lowerBound..<(entriesEnd ?? content.upperBound)], reading: .contents)
        let foundVersion = try reader.read(UInt8.self, "content version")
        guard foundVersion == (history ? historyVersion : version) else {
            if history { throw .contentsDamaged("content encoding version \(foundVersion) in a vault that keeps history (expected \(historyVersion))") }
            throw .contentsDamaged("content encoding version \(foundVersion) is unknown")
        }
        var policy: HistoryPolicy?
        if history {
            let versions = Int(try reader.read(UInt8.self, "history versions"))
            let budget = Int(try reader.read(UInt32.self, "history byte budget"))
            let trash = Int(try reader.read(UInt16.self, "trash limit"))
            let read = HistoryPolicy(versions: versions, byteBudget: budget, trashLimit: trash)
            do { try read.validate() } catch { throw .contentsDamaged("history policy: \(error.description)") }
            policy = read
        }
        let count = Int(try reader.read(EntryCount.self, "entry count"))
        guard count <= VaultLimits.maxEntries else {
            throw .contentsDamaged("entry count \(count) exceeds \(VaultLimits.maxEntries)")
        }
        var starts: [StoredRecords.Offset] = []
        starts.reserveCapacity(min(count, reader.remaining / RecordLayout.minimumLength) + 1)
        var check = ContentCheck()
        for index in 0..<count {
            starts.append(StoredRecords.Offset(reader.offset))
            check.index = index
            try RecordLayout.read(&reader, entry: index, into: &check)
        }
        starts.append(StoredRecords.Offset(reader.offset))
        if let policy, entriesEnd != nil {
            // The scan that found this end read the same records; anything else is a bug, not damage.
            precondition(reader.remaining == 0, "the entries end where the skim found them")
            return Vault(stored: StoredRecords(plaintext: plaintext, starts: starts), history: HistoryState(unreadWith: policy))
        }
        if let policy {
            // The rest is the history section: checked when a command reads or changes history, never by `get`.
            let section = (plaintext: plaintext, range: reader.offset..<content.upperBound)
            return Vault(stored: StoredRecords(plaintext: plaintext, starts: starts), history: HistoryState(policy: policy, section: section))
        }
        guard reader.remaining == 0 else {
            throw .contentsDamaged("\(reader.remaining) bytes after the last entry")
        }
        return Vault(stored: StoredRecords(plaintext: plaintext, starts: starts))
    }
}

// MARK: - The checks of the decoder

/// What `EntryCodec.decode` checks in each record beyond its bounds: valid names, in strictly
/// increasing order, at most 64 fields, values within the limit. Allocates nothing per record.
private struct ContentCheck: RecordVisitor {
    /// The record being read.
    var index = 0
    private var previousName = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The field names of the entry before, all valid: entries mostly repeat them, and a name
    /// equal to one of them needs no second check.
    private var checkedFields: [UnsafeRawBufferPointer] = []
    private var previousField = UnsafeRawBufferPointer(start: nil, count: 0)

    mutating func visitName(_ name: UnsafeRawBufferPointer) throws(VaultError) {
        if !EntryName.isValid(utf8: name) { try explainInvalidName(name) }
        if index > 0 && compareBytes(previousName, name) >= 0 {
            throw .contentsDamaged("entry \(index) is out of order or duplicated")
        }
        previousName = name
    }

    func checkValueLength(_ length: Int, of part: RecordLayout.Part) throws(VaultError) {
        guard length <= VaultLimits.maxValueLength else {
            throw .contentsDamaged("\(part.describe(entry: index)) is \(length) bytes; at most \(VaultLimits.maxValueLength)")
        }
    }

    func visitFieldCount(_ count: Int) throws(VaultError) {
        guard count <= VaultLimits.maxFieldsPerEntry else {
            throw .contentsDamaged("entry \(index) has \(count) fields; at most \(VaultLimits.maxFieldsPerEntry)")
        }
    }

    mutating func visitFieldName(_ field: UnsafeRawBufferPointer, at fieldIndex: Int) throws(VaultError) {
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
    }

    /// Throws the message for a name the fast check refused: not UTF-8, or which rule it breaks.
    private func explainInvalidName(_ name: UnsafeRawBufferPointer) throws(VaultError) {
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
}

// MARK: - Public entry points (fuzzing, export)

extension Vault {
    /// The deterministic content encoding of this vault (docs/FORMAT.md §7).
    public func encodedContent() throws(VaultError) -> [UInt8] { try EntryCodec.encode(self) }

    /// Decodes content bytes, rejecting anything a canonical encoder would not produce.
    public init(decodingContent content: [UInt8]) throws(VaultError) { self = try EntryCodec.decode(content) }

    /// Decodes content of a vault that keeps history (content version 2), checking its history section too.
    public init(decodingHistoryContent content: [UInt8]) throws(VaultError) {
        self = try EntryCodec.decode(content, history: true)
        try checkHistory()
    }

    /// Checks the history section whole (`verify`, and every command that reads or changes
    /// history, do; `get` does not), keeping its index.
    public mutating func checkHistory() throws(VaultError) {
        try historyState?.index()
    }
}
