import VaultModel

// MARK: - Whether a streamed name came before

/// Whether each name a streaming build hands its record writer is new, without a table of every
/// name while they come in increasing byte order (an export sorted by title, the bench's): each is
/// compared with the last record written only. The first name that does not follow it hashes every
/// name written so far into a `NameHashes`, which then decides (false may then be a collision of
/// two hashes: the caller takes false as "maybe repeated" and reads the items again for a plan of
/// their numbers, which costs time, never a wrong name). A repeat is said at once either way, so a
/// build whose titles repeat is declined at its first repeat, not after every record is written.
///
/// The table was 2 MiB at 100,000 names, 3 MiB while it doubled (issue 44's memory rule); sorted
/// exports no longer pay it, unsorted ones still do.
struct StreamedNameCheck {
    private var hashes: NameHashes?

    /// Whether `name` is new among the names of the records `writer` holds (every earlier name).
    mutating func isNew(_ name: String, among writer: ImportRecordWriter) -> Bool {
        if hashes == nil {
            guard writer.count > 0 else { return true }
            var name = name
            let order = name.withUTF8 { compareBytes(writer.lastName, UnsafeRawBufferPointer($0)) }
            if order < 0 { return true }
            if order == 0 { return false }
            var table = NameHashes(expected: writer.count)
            // A run that does not read back: "maybe repeated", and the writer's failure is said later.
            guard writer.forEachName({ _ = table.insert(String(decoding: $0, as: UTF8.self)) }) else { return false }
            hashes = table
        }
        return hashes!.insert(name)
    }
}
