#if canImport(Glibc)
import CPlatform
import Glibc
#endif
import CSodium
import SecureMemory
import VaultModel

// MARK: - An import's records, sorted in runs on disk, encrypted

/// The records of an import too large for one buffer (issue 44's memory rule: an import's peak
/// within 2× its input): each full buffer is sorted by name and written as a run, sealed with
/// libsodium's secretstream (XChaCha20-Poly1305) under a one-off random key held in guarded memory
/// (`SecureBytes`), to a temporary file that has no name: `O_TMPFILE`, else created (0600) and
/// unlinked at once. Nothing readable survives the process, whatever ends it: the file goes with
/// its last descriptor, and its bytes are ciphertext under a key that only this process held.
///
/// The seal merges the runs, one chunk of each at a time, into the vault's payload
/// (`IncomingRecords`, through `EntryCodec.encode`). Each run's stream header, chunk lengths,
/// record count and first and last names stay in memory, never read back from the file: a run
/// is read with its own header (two runs cannot be swapped), every chunk is authenticated, and its
/// last chunk must be the stream's FINAL one (a truncated or extended run is refused).
///
/// A run's plaintext is items back to back, each: record length (u32) ‖ index of the record in the
/// input (u32) ‖ the record (`RecordLayout`); a chunk holds whole items, up to 16 KiB (one item
/// larger than that is a chunk of its own). Equal names are ordered by their input index, so the
/// merge meets the first of them first.
///
/// When the folder runs out of room for the new vault beside the runs, the seal brings them into
/// memory (`moveIntoMemory`: where an import held its records before runs) and the file goes.
package final class RecordRuns: IncomingRecords, @unchecked Sendable {
    // @unchecked: written by one import while it reads its input (`append`), then read, or moved
    // into memory, by the one seal that takes them.

    /// The plaintext of a chunk, but for a single item larger than it: 16 KiB. The writer holds one
    /// chunk and its sealed copy, and the merge one of each per run read at once (every run when
    /// they overlap), so the chunk is most of what the runs add to an import's peak; 16 KiB chunks
    /// cost one more secretstream push and pread per 16 KiB, nothing measurable beside the records'
    /// encryption.
    static let chunkLength = 16 << 10
    /// The bytes before each record in a run: its length and its index in the input.
    static let itemPrefix = 8

    /// The file (for the tests and the fuzzer that damage it); -1 once its records are in memory.
    package private(set) var descriptor: Int32
    private let key: SecureBytes
    /// The folder of the file, and how I/O errors name the file.
    private let directory: String, place: String
    private var runs: [Run] = []
    /// The records moved into memory (`moveIntoMemory`), in name order, and each one's input index.
    private var held: (records: StoredRecords, indices: [Int32])?
    /// Where the next run starts in the file.
    private var end = 0
    /// The first name an earlier one repeats within one run (input indices), found as runs are written.
    private var repeatWithinRuns: (index: Int, first: Int)?
    package private(set) var count = 0
    package private(set) var length = 0
    /// The seal's limit on the contents (lowered by tests only).
    var contentLimit = VaultLimits.maxContentLength
    /// The bytes the file may take before a write fails as on a full disk, ENOSPC (lowered by tests only).
    package var room = Int.max

    /// One sorted run: what reading it back needs, kept in memory.
    private struct Run {
        var header: [UInt8]
        var offset: Int
        var chunks: [Int] = []
        var count = 0
        var first: [UInt8] = [], last: [UInt8] = []
    }

    /// A store of runs in a nameless temporary file in `directory`, under a fresh random key.
    package init(directory: String) throws(VaultError) {
        var fd = vaultfile_open_nameless(directory)
        if fd < 0 {
            // A file system without O_TMPFILE (FAT, some network ones): a random name, unlinked at once.
            var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast()) + Array(".vaultfile-runs-XXXXXX".utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }  // 0600, O_EXCL
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                let path = String(cString: template.map { UInt8(bitPattern: $0) })
                if unlink(path) != 0 {  // a file that kept its name could outlive the process
                    let failed = errno
                    close(fd)
                    throw .io(operation: "removing the name of the import's temporary file", path: path, errno: failed)
                }
            }
        }
        guard fd >= 0 else { throw .io(operation: "creating the import's temporary file in", path: directory, errno: errno) }
        descriptor = fd
        key = SecureBytes(count: 32)
        key.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        self.directory = directory
        place = "the import's temporary file in " + directory
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The number of runs written.
    package var runCount: Int { runs.count }

    // MARK: Writing

    /// Writes `count` records, already in name order (equal names in input order), as a new run:
    /// record `i` is `record(i)`, with its index in the input `inputIndex(i)`.
    package func append(_ count: Int, record: (Int) -> UnsafeRawBufferPointer, inputIndex: (Int) -> Int) throws(VaultError) {
        guard count > 0 else { return }
        var encryptor = SecretStream.Encryptor(key: key)
        defer { encryptor.wipe() }
        var run = Run(header: encryptor.header, offset: end)
        var staging = try Self.window(Self.chunkLength)
        var filled = 0
        var sealed: [UInt8] = []
        func push(final: Bool) throws(VaultError) {
            let plaintext = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(staging.bytes)[..<filled])
            let sealedLength = filled + SecretStream.overhead
            if sealed.count < sealedLength { sealed = [UInt8](repeating: 0, count: sealedLength) }
            let outcome = sealed.withUnsafeMutableBytes { buffer in
                encryptor.push(plaintext, final: final, into: buffer)
                return Result { () throws(VaultError) in try write(UnsafeRawBufferPointer(rebasing: buffer[..<sealedLength])) }
            }
            try outcome.get()
            run.chunks.append(sealedLength)
            filled = 0
        }
        var previous: (name: UnsafeRawBufferPointer, index: Int)?
        for position in 0..<count {
            let bytes = record(position), index = inputIndex(position)
            let name = Self.name(of: bytes)
            if let previous, compareBytes(previous.name, name) == 0, index < (repeatWithinRuns?.index ?? .max) {
                repeatWithinRuns = (index, previous.index)
            }
            if previous == nil || compareBytes(previous!.name, name) != 0 { previous = (name, index) }
            if position == 0 { run.first = Array(name) }
            if position == count - 1 { run.last = Array(name) }
            let item = Self.itemPrefix + bytes.count
            if filled > 0 && filled + item > Self.chunkLength { try push(final: false) }
            if item > staging.count { staging = try Self.window(item) }
            let base = staging.bytes.baseAddress! + filled
            base.storeBytes(of: UInt32(bytes.count).littleEndian, as: UInt32.self)
            base.storeBytes(of: UInt32(index).littleEndian, toByteOffset: 4, as: UInt32.self)
            if bytes.count > 0 { (base + Self.itemPrefix).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            filled += item
            self.length += bytes.count
            // The seal's limit, checked as runs are written: a hostile input stops here, not after
            // gigabytes of runs (the records alone past it make the contents past it).
            guard self.length <= contentLimit else {
                throw .limitExceeded("the vault contents exceed \(VaultLimits.maxContentLength) bytes (1 GiB)")
            }
        }
        try push(final: true)
        run.count = count
        self.count += count
        runs.append(run)
    }

    /// A run whose chunks hold `plaintexts` as they are, sealed as `append` seals its chunks, and
    /// said to hold `count` records from `first` to `last`: hostile plaintext behind valid
    /// authentication, for the fuzzer (Fuzz/VaultFileFuzz/RecordRunsFuzz.swift).
    package func appendSealed(_ plaintexts: [[UInt8]], count: Int, first: [UInt8], last: [UInt8]) throws(VaultError) {
        var encryptor = SecretStream.Encryptor(key: key)
        defer { encryptor.wipe() }
        var run = Run(header: encryptor.header, offset: end, count: count, first: first, last: last)
        for (position, plaintext) in plaintexts.enumerated() {
            var sealed = [UInt8](repeating: 0, count: plaintext.count + SecretStream.overhead)
            plaintext.withUnsafeBytes { text in sealed.withUnsafeMutableBytes { encryptor.push(text, final: position == plaintexts.count - 1, into: $0) } }
            try sealed.withUnsafeBytes { bytes in Result { () throws(VaultError) in try write(bytes) } }.get()
            run.chunks.append(sealed.count)
        }
        self.count += count
        length += plaintexts.reduce(0) { $0 + $1.count }
        runs.append(run)
    }

    /// Writes `bytes` at the end of the file.
    private func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        guard bytes.count <= room - end else { throw .io(operation: "writing", path: place, errno: ENOSPC) }
        var written = 0
        while written < bytes.count {
            let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(end + written))
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw .io(operation: "writing", path: place, errno: result < 0 ? errno : ENOSPC) }
            written += result
        }
        end += bytes.count
    }

    /// A wiped buffer of `count` bytes for plaintext.
    private static func window(_ count: Int) throws(VaultError) -> PlaintextBuffer {
        do { return try PlaintextBuffer(uninitializedCount: count) } catch {
            throw .limitExceeded("cannot map \(count) bytes for an import's records (\(error))")
        }
    }

    /// The name of a record (`RecordLayout`: its length, then its bytes).
    static func name(of record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let length = Int(RecordLayout.NameLength(littleEndian: record.loadUnaligned(as: RecordLayout.NameLength.self)))
        let start = MemoryLayout<RecordLayout.NameLength>.size
        return UnsafeRawBufferPointer(rebasing: record[start..<start + length])
    }

    // MARK: Reading

    /// The runs in name order when no two overlap (each ends before the next begins: an input in
    /// name order, an export), so that the merge reads them one after another; nil otherwise.
    private var orderedRuns: [Int]? {
        let order = runs.indices.sorted { runs[$0].first.lexicographicallyPrecedes(runs[$1].first) }
        for (earlier, later) in zip(order, order.dropFirst()) {
            let before = runs[earlier].last.withUnsafeBytes { a in runs[later].first.withUnsafeBytes { b in compareBytes(a, b) } }
            guard before < 0 else { return nil }
        }
        return order
    }

    /// Calls `body` with each record, its name and its input index, in name order (equal names in
    /// input order); throws when a run does not read back as it was written.
    package func forEachItem(_ body: (_ record: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer, _ index: Int) -> Void) throws(VaultError) {
        if let (records, indices) = held {
            withExtendedLifetime(records) {
                for position in indices.indices {
                    let record = records.records(position..<position + 1)
                    body(record, Self.name(of: record), Int(indices[position]))
                }
            }
            return
        }
        if let order = orderedRuns {
            for run in order {
                let cursor = try Cursor(runs[run], in: self)
                while try cursor.next() { body(cursor.record, cursor.name, cursor.index) }
            }
            return
        }
        var cursors: [Cursor] = []
        for run in runs {
            let cursor = try Cursor(run, in: self)
            if try cursor.next() { cursors.append(cursor) }
        }
        while !cursors.isEmpty {
            var least = 0
            for candidate in cursors.indices.dropFirst() {
                let order = compareBytes(cursors[candidate].name, cursors[least].name)
                if order < 0 || (order == 0 && cursors[candidate].index < cursors[least].index) { least = candidate }
            }
            let cursor = cursors[least]
            body(cursor.record, cursor.name, cursor.index)
            if try !cursor.next() { cursors.remove(at: least) }
        }
    }

    /// Calls `body` with each record in name order (`forEachItem`).
    package func forEachRecord(_ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError) {
        try forEachItem { record, _, _ in body(record) }
    }

    /// The first name, in input order, that an earlier name repeats (its index and the earlier
    /// one's), as `NameOrder.firstRepeat` finds it; nil when every name is distinct. Found as the
    /// runs were written when no two runs overlap, else by a pass over every name.
    package func firstRepeat() throws(VaultError) -> (index: Int, first: Int)? {
        if orderedRuns != nil { return repeatWithinRuns }
        var found: (index: Int, first: Int)?
        var group: (name: [UInt8], first: Int, counted: Bool)?
        try forEachItem { _, name, index in
            if let current = group, current.name.withUnsafeBytes({ compareBytes($0, name) }) == 0 {
                if !current.counted, index < (found?.index ?? .max) { found = (index, current.first) }
                group!.counted = true
            } else {
                group = (Array(name), index, false)
            }
        }
        return found
    }

    /// The records in name order in one buffer, and where each input index went (`positions[i]`
    /// is the position of the record of input index `i`), as `StoredRecords.sortedByName` gives
    /// them: what every path that needs the records in memory takes (no name may repeat).
    package func materialized() throws(VaultError) -> (records: StoredRecords, positions: [Int32]) {
        let buffer = try Self.window(max(length, 1))
        var starts: [StoredRecords.Offset] = []
        starts.reserveCapacity(count + 1)
        var positions = [Int32](repeating: 0, count: count)
        var offset = 0, overflows = false
        try forEachItem { record, _, index in
            // Never past the buffer, whatever the runs hold (their lengths add up to `length` as written).
            guard !overflows, record.count <= buffer.count - offset else { overflows = true; return }
            starts.append(StoredRecords.Offset(offset))
            positions[index] = Int32(starts.count - 1)
            if record.count > 0 { (buffer.bytes.baseAddress! + offset).copyMemory(from: record.baseAddress!, byteCount: record.count) }
            offset += record.count
        }
        guard !overflows else { throw damaged("the records' length") }
        starts.append(StoredRecords.Offset(offset))
        buffer.written = offset
        return (StoredRecords(plaintext: buffer, starts: starts), positions)
    }

    /// Brings every record into memory (`materialized`) and frees the file: a seal that found no
    /// room for the new vault beside the runs seals again from memory. False when they are in
    /// memory already.
    package func moveIntoMemory() throws(VaultError) -> Bool {
        guard held == nil else { return false }
        let (records, positions) = try materialized()
        var indices = [Int32](repeating: 0, count: positions.count)
        for (index, position) in positions.enumerated() { indices[Int(position)] = Int32(index) }
        held = (records, indices)
        runs = []
        close(descriptor)  // nameless: its blocks go with its last descriptor
        descriptor = -1
        return true
    }

    // MARK: One run read back

    /// One run read a chunk at a time into a window of wiped memory.
    private final class Cursor {
        private let run: Run
        private let owner: RecordRuns
        private var decryptor: SecretStream.Decryptor
        private var chunk = 0
        private var offset: Int
        private var window: PlaintextBuffer
        private var sealed: [UInt8] = []
        private var filled = 0, position = 0, items = 0
        private(set) var record = UnsafeRawBufferPointer(start: nil, count: 0)
        private(set) var name = UnsafeRawBufferPointer(start: nil, count: 0)
        private(set) var index = 0

        init(_ run: Run, in owner: RecordRuns) throws(VaultError) {
            guard let decryptor = SecretStream.Decryptor(key: owner.key, header: run.header) else { throw owner.damaged("a run's header") }
            self.run = run
            self.owner = owner
            self.decryptor = decryptor
            offset = run.offset
            window = try RecordRuns.window(RecordRuns.chunkLength)
        }

        deinit { decryptor.wipe() }

        /// Moves to the next record; false after the last one.
        func next() throws(VaultError) -> Bool {
            if position == filled {
                guard chunk < run.chunks.count else {
                    // As many records as the run was written with: the runs add up to `count`.
                    guard items == run.count else { throw owner.damaged("a run's number of records") }
                    return false
                }
                try readChunk()
            }
            guard items < run.count else { throw owner.damaged("a run's number of records") }
            let rest = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(window.bytes)[position..<filled])
            guard rest.count >= RecordRuns.itemPrefix else { throw owner.damaged("an item") }
            let length = Int(UInt32(littleEndian: rest.loadUnaligned(as: UInt32.self)))
            index = Int(UInt32(littleEndian: rest.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            let prefix = MemoryLayout<RecordLayout.NameLength>.size
            guard length <= rest.count - RecordRuns.itemPrefix, length >= prefix, index < owner.count else { throw owner.damaged("an item") }
            record = UnsafeRawBufferPointer(rebasing: rest[RecordRuns.itemPrefix..<RecordRuns.itemPrefix + length])
            guard Int(RecordLayout.NameLength(littleEndian: record.loadUnaligned(as: RecordLayout.NameLength.self))) <= length - prefix else {
                throw owner.damaged("an item")
            }
            name = RecordRuns.name(of: record)
            position += RecordRuns.itemPrefix + length
            items += 1
            return true
        }

        /// Reads, authenticates and decrypts the next chunk into the window.
        private func readChunk() throws(VaultError) {
            let length = run.chunks[chunk]
            if sealed.count < length { sealed = [UInt8](repeating: 0, count: length) }
            let plaintextLength = length - SecretStream.overhead
            if plaintextLength > window.count { window = try RecordRuns.window(plaintextLength) }
            let descriptor = owner.descriptor
            let window = self.window, start = offset
            let outcome = sealed.withUnsafeMutableBytes { buffer -> Result<SecretStream.Tag?, VaultError> in
                var read = 0
                while read < length {
                    let result = pread(descriptor, buffer.baseAddress! + read, length - read, off_t(start + read))
                    if result < 0 && errno == EINTR { continue }
                    guard result > 0 else {
                        return .failure(result < 0 ? .io(operation: "reading", path: owner.place, errno: errno) : owner.damaged("a run that ends early"))
                    }
                    read += result
                }
                return .success(decryptor.pull(UnsafeRawBufferPointer(rebasing: buffer[..<length]), into: window.bytes.baseAddress!))
            }
            let tag = try outcome.get()
            let last = chunk == run.chunks.count - 1
            guard let tag, tag == (last ? .final : .message) else { throw owner.damaged("chunk \(chunk) of a run") }
            offset += length
            chunk += 1
            filled = plaintextLength
            position = 0
        }
    }

    /// The error for a part of the file that does not read back as written.
    private func damaged(_ part: String) -> VaultError {
        .importRunsDamaged(folder: directory, part: part)
    }
}
