#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Errors of a breach list

/// What can be wrong with a Pwned Passwords download given to `audit --hibp`. Messages name the
/// file and the byte offset, never a password or its hash.
public enum BreachListError: CategorizedError, Equatable {
    /// The path names nothing, or a system call on it failed.
    case unreadable(path: String, operation: String, errno: Int32)
    /// The path is neither a regular file nor a folder of range files.
    case notAFileOrFolder(path: String)
    /// The file's first line is not `HASH:COUNT` with a 40-digit (SHA-1) or 32-digit (NTLM) hash,
    /// or a folder's range file is not `SUFFIX:COUNT` lines.
    case notAList(path: String, why: String)
    /// A line in the part of the file searched is not `HASH:COUNT` (`offset` is where it starts).
    case malformedLine(path: String, offset: Int)
    /// Lines out of hash order: the file is not the one ordered by hash (bisection needs it).
    case notSorted(path: String, offset: Int)
    /// The list holds hashes of one kind and the other was asked for (`--hibp-hash`).
    case hashMismatch(path: String, found: BreachHash, asked: BreachHash)
    /// A range folder lacks the file of one 5-digit prefix: the download is incomplete.
    case rangeFileMissing(folder: String, file: String)
    /// A range file is larger than any the downloader writes.
    case rangeFileTooLarge(path: String, bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .unreadable(let path, let operation, let code): return "\(operation) the breach list \(path) failed: \(errnoText(code))"
        case .notAFileOrFolder(let path): return "the breach list \(path) is neither a file nor a folder"
        case .notAList(let path, let why): return "\(path) is not a Pwned Passwords list: \(why)"
        case .malformedLine(let path, let offset): return "the breach list \(path) has a line that is not HASH:COUNT at byte \(offset)"
        case .notSorted(let path, let offset):
            return "the breach list \(path) is not sorted by hash (line at byte \(offset) out of order); it cannot be searched by bisection"
        case .hashMismatch(let path, let found, let asked):
            return "the breach list \(path) holds \(found.rawValue) hashes, not \(asked.rawValue)"
        case .rangeFileMissing(let folder, let file): return "the range folder \(folder) has no \(file): the download is incomplete"
        case .rangeFileTooLarge(let path, let bytes, let limit):
            return "the range file \(path) is \(bytes) bytes, more than the \(limit) a range file can hold"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .unreadable, .notAFileOrFolder: return .io
        case .notAList, .malformedLine, .notSorted, .hashMismatch, .rangeFileMissing, .rangeFileTooLarge: return .invalidInput
        }
    }
}
