#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - Property 19: the reader of an import's runs

/// The folder of the runs' files: they have no name (each goes with its `RecordRuns`), so nothing is left there.
private let runsFolder = "/tmp"

/// 19. the reader of an import's sorted runs (`RecordRuns`, issue 44) over hostile bytes:
/// - as the plaintext of a run's chunks behind valid authentication (`appendSealed`: items of any
///   length and input index, a count of records the items do not match, chunks cut anywhere, two
///   runs whose names overlap or not): reading (`forEachItem`, `firstRepeat`, `materialized`,
///   `moveIntoMemory`) never crashes, and what reads back holds exactly the records counted;
/// - as damage to the file of a run written whole (bytes changed, the file cut or extended):
///   never a crash, and a run whose file changed never reads back (every chunk authenticated).
func fuzzRecordRuns(_ bytes: [UInt8]) {
    // Up to 64 KiB: a run of a few chunks is reached as well by a short input, and the fuzzer stays fast.
    guard bytes.count >= 4, bytes.count <= 1 << 16 else { return }
    hostilePlaintext(bytes, in: runsFolder)
    damagedFile(bytes, in: runsFolder)
}

/// The input as the plaintext of one or two runs, cut into chunks where its first bytes say.
private func hostilePlaintext(_ bytes: [UInt8], in folder: String) {
    guard let runs = try? RecordRuns(directory: folder) else { return }
    let body = Array(bytes[4...])
    // One run, or two (the input halved): each cut into 1 to 4 chunks; counts of 0 to 7 records.
    let halves = bytes[0] & 1 == 0 ? [body[...]] : [body[..<(body.count / 2)], body[(body.count / 2)...]]
    for (number, half) in halves.enumerated() {
        let pieces = 1 + Int(bytes[1] >> (2 * number)) % 4
        let size = max(1, (half.count + pieces - 1) / pieces)
        let chunks = stride(from: half.startIndex, to: max(half.endIndex, half.startIndex + 1), by: size).map {
            Array(half[$0..<min($0 + size, half.endIndex)])
        }
        // First and last names from the input: the runs then overlap, or follow one another.
        let first = Array(half.prefix(Int(bytes[2] % 4))), last = Array(half.suffix(Int(bytes[3] % 4)))
        guard (try? runs.appendSealed(chunks, count: Int(bytes[2] >> 4) % 8, first: first, last: number == 0 ? last : first + last)) != nil else { return }
    }
    var read = 0
    if (try? runs.forEachItem { _, _, _ in read += 1 }) != nil {
        precondition(read == runs.count, "runs read back \(read) records of \(runs.count)")
    }
    _ = try? runs.firstRepeat()
    if let (records, positions) = try? runs.materialized() {
        precondition(records.count == runs.count && positions.count == runs.count, "materialized runs of another count")
    }
    if (try? runs.moveIntoMemory()) == true {
        var again = 0
        try? runs.forEachItem { _, _, _ in again += 1 }
        precondition(again == runs.count, "runs in memory read back \(again) records of \(runs.count)")
    }
}

/// A run of well-formed records written whole, then its file changed as the input says.
private func damagedFile(_ bytes: [UInt8], in folder: String) {
    guard let runs = try? RecordRuns(directory: folder) else { return }
    // Records of the layout the reader checks: name length (u16), name, then any bytes.
    let records: [[UInt8]] = (0..<40).map { index in
        let name = Array("entry-\(1_000 + index)".utf8)
        return [UInt8(name.count), 0] + name + [UInt8](repeating: UInt8(index), count: 30 + index * 97)
    }
    let all = records.flatMap { $0 }
    var starts = [0]
    for record in records { starts.append(starts.last! + record.count) }
    let written = all.withUnsafeBytes { raw in
        Result { () throws(VaultError) in
            try runs.append(records.count, record: { UnsafeRawBufferPointer(rebasing: raw[starts[$0]..<starts[$0 + 1]]) }, inputIndex: { $0 })
        }
    }
    guard case .success = written else { return }
    var info = stat()
    guard fstat(runs.descriptor, &info) == 0 else { return }
    let size = Int(info.st_size)
    var file = [UInt8](repeating: 0, count: size)
    guard pread(runs.descriptor, &file, size, 0) == size else { return }
    // The damage: bytes of the input laid over the file at an offset, the file cut, or extended.
    var damaged = file
    let at = (Int(bytes[1]) << 8 | Int(bytes[2])) % max(size, 1)
    switch bytes[0] % 3 {
    case 0:
        for (offset, byte) in bytes[3...].prefix(64).enumerated() where at + offset < size { damaged[at + offset] ^= byte }
    case 1: damaged = Array(damaged.prefix(at))
    default: damaged += bytes[3...]
    }
    guard ftruncate(runs.descriptor, 0) == 0, pwrite(runs.descriptor, damaged, damaged.count, 0) == damaged.count else { return }
    var read: [[UInt8]] = []
    let outcome = Result { () throws(VaultError) in try runs.forEachItem { record, _, _ in read.append(Array(record)) } }
    // Extra bytes past the last chunk are never read; any other change is refused.
    if damaged.prefix(size) != file[...] || damaged.count < size {
        guard case .failure = outcome else { preconditionFailure("a run whose file changed read back") }
    } else if case .success = outcome {
        precondition(read.sorted { $0.lexicographicallyPrecedes($1) } == records.sorted { $0.lexicographicallyPrecedes($1) }, "a run read back other records")
    }
}
