#if canImport(Glibc)
import Glibc
#endif
import VaultFile

// MARK: - BreachListError

/// The failures of a Pwned Passwords list given to `audit --hibp`.
enum BreachListErrorKind: CaseIterable {
    case unreadable, notAFileOrFolder, notAList, malformedLine, notSorted, hashMismatch, rangeFileMissing, rangeFileTooLarge, rangeFileNotRegular

    init(_ error: BreachListError) {
        switch error {
        case .unreadable: self = .unreadable
        case .notAFileOrFolder: self = .notAFileOrFolder
        case .notAList: self = .notAList
        case .malformedLine: self = .malformedLine
        case .notSorted: self = .notSorted
        case .hashMismatch: self = .hashMismatch
        case .rangeFileMissing: self = .rangeFileMissing
        case .rangeFileTooLarge: self = .rangeFileTooLarge
        case .rangeFileNotRegular: self = .rangeFileNotRegular
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .unreadable:
            return ErrorCaseRow(BreachListError.unreadable(path: "/h/shown.txt", operation: "opening", errno: ENOENT), status: 2, hint: true,
                                shows: ["/h/shown.txt", "No such file or directory"])
        case .notAFileOrFolder: return ErrorCaseRow(BreachListError.notAFileOrFolder(path: "/dev/shown"), status: 2, hint: true, shows: ["/dev/shown"])
        case .notAList:
            return ErrorCaseRow(BreachListError.notAList(path: "/h/shown.txt", why: "shown-reason"), status: 2, hint: true, shows: ["/h/shown.txt", "shown-reason"])
        case .malformedLine:
            return ErrorCaseRow(BreachListError.malformedLine(path: "/h/shown", inRangeFolder: true), status: 2, hint: true, shows: ["/h/shown", "SUFFIX:COUNT"])
        case .notSorted:
            return ErrorCaseRow(BreachListError.notSorted(path: "/h/shown.txt"), status: 2, hint: true, shows: ["/h/shown.txt", "not sorted"])
        case .hashMismatch:
            return ErrorCaseRow(BreachListError.hashMismatch(path: "/h/shown.txt", found: .ntlm, asked: .sha1), status: 2, hint: true,
                                shows: ["/h/shown.txt", "NTLM", "SHA-1"])
        case .rangeFileMissing:
            return ErrorCaseRow(BreachListError.rangeFileMissing(folder: "/h/ranges"), status: 2, hint: true,
                                shows: ["/h/ranges", "1,048,576", "incomplete"])
        case .rangeFileTooLarge:
            return ErrorCaseRow(BreachListError.rangeFileTooLarge(folder: "/h/ranges", limit: 4_194_304), status: 2,
                                hint: true, shows: ["/h/ranges", "4194304"])
        case .rangeFileNotRegular:
            return ErrorCaseRow(BreachListError.rangeFileNotRegular(folder: "/h/ranges"), status: 2, hint: true, shows: ["/h/ranges", "FIFO"])
        }
    }
}
