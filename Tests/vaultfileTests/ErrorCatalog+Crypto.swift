import VaultFormat

// MARK: - X25519.Failure

/// The failures of X25519 key agreement: before issue 39 they reached the user raw
/// (`Error: lowOrderPoint`, exit 1).
enum X25519FailureKind: CaseIterable {
    case invalidKeyLength, lowOrderPoint

    init(_ error: X25519.Failure) {
        switch error {
        case .invalidKeyLength: self = .invalidKeyLength
        case .lowOrderPoint: self = .lowOrderPoint
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .invalidKeyLength: return ErrorCaseRow(X25519.Failure.invalidKeyLength(31), status: 2, hint: false, shows: ["31"])
        case .lowOrderPoint: return ErrorCaseRow(X25519.Failure.lowOrderPoint, status: 2, hint: false, shows: ["low-order point"])
        }
    }
}

// MARK: - HKDFSHA256.Failure

enum HKDFFailureKind: CaseIterable {
    case invalidLength

    init(_ error: HKDFSHA256.Failure) {
        switch error {
        case .invalidLength: self = .invalidLength
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .invalidLength: return ErrorCaseRow(HKDFSHA256.Failure.invalidLength(9000), status: 2, hint: false, shows: ["9000"])
        }
    }
}
