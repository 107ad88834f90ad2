#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Records past one buffer

/// What an import's record writers hand over: the records in one buffer, or in encrypted runs on disk.
enum WrittenRecords {
    case memory(StoredRecords)
    /// Runs (`RecordRuns`), with the names in them that `import` warns about, in input order.
    case runs(RecordRuns, dangerous: [String])

    /// The records of `.memory`; nil for runs.
    var inMemory: StoredRecords? {
        guard case .memory(let records) = self else { return nil }
        return records
    }
}

/// Where an import's record writers (`ImportRecordWriter`) write runs once their buffer is full,
/// and how large that buffer is. `import` sets it around its read of the input (a task-local
/// value: the readers between the command and the writers need not carry it); unset, every record
/// stays in memory as before.
public struct ImportRuns: Sendable {
    /// The buffer: 512 KiB. A 100,000-row CSV's records are about 8.5 MB; held until the seal they
    /// were most of the import's peak above start-up (3.1× the input, issue 44's rule is 2×). With
    /// runs the records add the buffer, the sorted order of its records (4 bytes each) and, at the
    /// seal, one 16 KiB chunk and its sealed copy per run read at once (`RecordRuns.chunkLength`:
    /// every run when runs overlap, one at a time when they do not). 512 KiB rather than 1 MiB: a
    /// 1pux's ZIP is a quarter of its records, and the buffer was a sixth of its peak above start-up
    /// (docs/PERFORMANCE.md, "1pux: the fixed part"); the runs of 100,000 shuffled rows then merge
    /// 17 chunks of 32 KiB at once, where 1 MiB runs merged 9 of 128 KiB.
    public static let defaultBufferLimit = 512 << 10

    /// The folder of the runs' nameless temporary file (`RecordRuns`).
    public var directory: String
    /// The bytes of records a writer holds before it writes them as a run.
    public var bufferLimit: Int

    /// Runs in `directory`, written once `bufferLimit` bytes of records are held.
    public init(directory: String, bufferLimit: Int = defaultBufferLimit) {
        self.directory = directory
        self.bufferLimit = bufferLimit
    }

    /// The bytes the runs' file may take before a write fails as on a full disk (lowered by tests only).
    var room = Int.max

    /// The runs' place for the read in progress; nil keeps every record in memory.
    @TaskLocal public static var current: ImportRuns?
}
