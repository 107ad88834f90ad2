#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Errors of a breach list

/// What can be wrong with a Pwned Passwords download given to `audit --hibp`. Messages name the
/// list the user gave (the file or the folder), never a password, its hash, or anything derived
/// from one: not the name of a range file (its 5 digits are a hash's first 5) nor a byte offset in
/// a sorted file (where a lookup stopped tells roughly where the hash lies).
public enum BreachListError: CategorizedError, Equatable {
    /// The path names nothing, or a system call on it (or on one of its range files) failed.
    case unreadable(path: String, operation: String, errno: Int32)
    /// The path is neither a regular file nor a folder of range files.
    case notAFileOrFolder(path: String)
    /// The file's first line is not `HASH:COUNT` with a 40-digit (SHA-1) or 32-digit (NTLM) hash,
    /// or a folder's first range file (`00000.txt`) is not `SUFFIX:COUNT` lines.
    case notAList(path: String, why: String)
    /// A line in the part of the list searched is not `HASH:COUNT` (in a range file of the folder
    /// `path`: `SUFFIX:COUNT`), or its count does not fit in 64 bits.
    case malformedLine(path: String, inRangeFolder: Bool)
    /// Lines out of hash order: the file is not the one ordered by hash (bisection needs it).
    case notSorted(path: String)
    /// The list holds hashes of one kind and the other was asked for (`--hibp-hash`).
    case hashMismatch(path: String, found: BreachHash, asked: BreachHash)
    /// A range folder lacks the file of one 5-digit prefix: the download is incomplete.
    case rangeFileMissing(folder: String)
    /// A range file is larger than any the downloader writes.
    case rangeFileTooLarge(folder: String, limit: Int)
    /// A range file is not a regular file (a FIFO, a device, a symbolic link, a folder).
    case rangeFileNotRegular(folder: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let operation, let code): return "\(operation) the breach list \(path) failed: \(errnoText(code))"
        case .notAFileOrFolder(let path): return "the breach list \(path) is neither a file nor a folder"
        case .notAList(let path, let why): return "\(path) is not a Pwned Passwords list: \(why)"
        case .malformedLine(let path, false): return "a line of the breach list \(path) is not HASH:COUNT (a hash, a colon, a count of at most 19 digits)"
        case .malformedLine(let path, true): return "a line of a range file in \(path) is not SUFFIX:COUNT (a hash suffix, a colon, a count of at most 19 digits)"
        case .notSorted(let path): return "the breach list \(path) is not sorted by hash; it cannot be searched by bisection"
        case .hashMismatch(let path, let found, let asked):
            return "the breach list \(path) holds \(found.rawValue) hashes, not \(asked.rawValue)"
        case .rangeFileMissing(let folder):
            return "a range file is missing from \(folder) (the folder must hold all 1,048,576, 00000.txt to FFFFF.txt): the download is incomplete"
        case .rangeFileTooLarge(let folder, let limit):
            return "a range file of \(folder) is larger than the \(limit) bytes a range file can hold"
        case .rangeFileNotRegular(let folder):
            return "a range file of \(folder) is not a regular file (a FIFO, a device, a symbolic link or a folder)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .unreadable, .notAFileOrFolder: return .io
        case .notAList, .malformedLine, .notSorted, .hashMismatch, .rangeFileMissing, .rangeFileTooLarge, .rangeFileNotRegular: return .invalidInput
        }
    }
}
