// MARK: - Records a seal takes from outside the vault's plaintext

/// New records in name order that a seal writes after reading them from elsewhere than the
/// vault's own plaintext (an import too large for one buffer: its sorted runs, encrypted in a
/// temporary file, `RecordRuns` in VaultFormat). The seal's third source, beside stored records and
/// edited entries (`EntryCodec.encode`): their number and total length are known before the first
/// chunk is sealed, and the records are read only as the seal writes them.
///
/// The seam between the model (which knows no cipher) and the runs' encryption.
package protocol IncomingRecords: AnyObject, Sendable {
    /// The number of records.
    var count: Int { get }
    /// The length of the records, back to back.
    var length: Int { get }
    /// Calls `body` with each record, its name and its index in the input, in name order (no name
    /// twice); throws when one cannot be read back as it was written (an I/O error, a run file
    /// changed meanwhile).
    func forEachItem(_ body: (_ record: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer, _ index: Int) -> Void) throws(VaultError)
    /// Brings the records into memory and frees what held them elsewhere (the seal found no room
    /// for the new vault beside them); false when nothing was elsewhere.
    func moveIntoMemory() throws(VaultError) -> Bool
}

/// Incoming records put into a vault, and the length of the vault's records they replace.
struct IncomingPut: Sendable {
    let records: any IncomingRecords
    let replacedLength: Int
}

/// What incoming records meet in a vault that holds entries (`Vault.clashes(with:)`): the names it
/// holds already, as the import's plan says them, and what the seal must know of them.
package struct IncomingClashes: Sendable {
    /// How many of the incoming names the vault holds.
    package var count = 0
    /// The first five of them in input order (the refusal names them so).
    package var first: [(index: Int, name: String)] = []
    /// The length of the vault's records they replace.
    package var replacedLength = 0
    /// Whether every incoming record is the vault's record of its name, byte for byte: putting them
    /// changes nothing (and the vault is not written).
    package var changeNothing = true
}

extension Vault {
    /// Brings the incoming records of an import into memory (`IncomingRecords.moveIntoMemory`);
    /// false when there are none, or none outside memory.
    package func moveIncomingIntoMemory() throws(VaultError) -> Bool {
        try incoming?.records.moveIntoMemory() ?? false
    }

    /// The names of `records` this vault holds, in one pass of their names against its records; nil
    /// when it cannot say so the way an import's checks would (edits pending, or a stored name that is
    /// not ASCII, whose twin check reads every imported name: the caller brings them into memory).
    package func clashes(with records: any IncomingRecords) throws(VaultError) -> IncomingClashes? {
        guard let stored = storedRecords, stored.count == count, storedNonASCIINames.isEmpty, nonASCIIEditedKeys.isEmpty else { return nil }
        var clashes = IncomingClashes()
        var edited = false
        forEachSegment { if case .edited = $0 { edited = true } }
        guard !edited else { return nil }
        try withExtendedLifetime(stored) { () throws(VaultError) in
            try records.forEachItem { record, name, index in
                let (position, found) = stored.position(of: name, in: 0..<stored.count)
                guard found else {
                    clashes.changeNothing = false
                    return
                }
                let existing = stored.records(position..<position + 1)
                clashes.count += 1
                clashes.replacedLength += existing.count
                if compareBytes(existing, record) != 0 { clashes.changeNothing = false }
                if clashes.first.count < 5 || index < clashes.first[4].index {
                    clashes.first.append((index, String(decoding: name, as: UTF8.self)))
                    clashes.first.sort { $0.index < $1.index }
                    if clashes.first.count > 5 { clashes.first.removeLast() }
                }
            }
        }
        return clashes
    }
}

extension EntryCodec {
    /// Appends the vault's stored records and `incoming` in one name order: an incoming record replaces
    /// the stored one of its name (Vault.put(incoming:clashes:) took no edit, so the stored records are
    /// the whole vault).
    static func merge(_ incoming: any IncomingRecords, with stored: StoredRecords?, into writer: inout some ByteSink) throws(VaultError) {
        var next = 0
        try withExtendedLifetime(stored) { () throws(VaultError) in
            try incoming.forEachItem { record, name, _ in
                if let stored {
                    let (position, found) = stored.position(of: name, in: next..<stored.count)
                    if position > next { writer.append(raw: stored.records(next..<position)) }
                    next = found ? position + 1 : position
                }
                writer.append(raw: record)
            }
            if let stored, next < stored.count { writer.append(raw: stored.records(next..<stored.count)) }
        }
    }
}
