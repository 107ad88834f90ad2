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

// MARK: - AgeFileError

/// The failures of age files (`share`, `receive`): damaged input exits 4, a missing or wrong
/// identity or passphrase 3, the scrypt cap 6.
enum AgeFileErrorKind: CaseIterable {
    case notAnAgeFile, unsupportedVersion, headerMalformed, headerTooLarge, stanzaMalformed, scryptNotAlone, headerMACFailed
    case noIdentityMatches, passphraseRequired, passphraseNotUsable, wrongPassphrase, workFactorOverCap, scryptFailed
    case missingNonce, payloadDamaged, plaintextTooLarge, armorMalformed, invalidRecipients, plugin

    init(_ error: AgeFileError) {
        switch error {
        case .notAnAgeFile: self = .notAnAgeFile
        case .unsupportedVersion: self = .unsupportedVersion
        case .headerMalformed: self = .headerMalformed
        case .headerTooLarge: self = .headerTooLarge
        case .stanzaMalformed: self = .stanzaMalformed
        case .scryptNotAlone: self = .scryptNotAlone
        case .headerMACFailed: self = .headerMACFailed
        case .noIdentityMatches: self = .noIdentityMatches
        case .passphraseRequired: self = .passphraseRequired
        case .passphraseNotUsable: self = .passphraseNotUsable
        case .wrongPassphrase: self = .wrongPassphrase
        case .workFactorOverCap: self = .workFactorOverCap
        case .scryptFailed: self = .scryptFailed
        case .missingNonce: self = .missingNonce
        case .payloadDamaged: self = .payloadDamaged
        case .plaintextTooLarge: self = .plaintextTooLarge
        case .armorMalformed: self = .armorMalformed
        case .invalidRecipients: self = .invalidRecipients
        case .plugin: self = .plugin
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .notAnAgeFile: return ErrorCaseRow(AgeFileError.notAnAgeFile, status: 4, hint: false, shows: ["not an age file"])
        case .unsupportedVersion: return ErrorCaseRow(AgeFileError.unsupportedVersion("v2"), status: 4, hint: false, shows: ["v2"])
        case .headerMalformed: return ErrorCaseRow(AgeFileError.headerMalformed(line: 3, why: "bad"), status: 4, hint: false, shows: ["line 3", "bad"])
        case .headerTooLarge: return ErrorCaseRow(AgeFileError.headerTooLarge(limit: 1024), status: 4, hint: false, shows: ["1024"])
        case .stanzaMalformed: return ErrorCaseRow(AgeFileError.stanzaMalformed(kind: "X25519", why: "odd"), status: 4, hint: false, shows: ["X25519", "odd"])
        case .scryptNotAlone: return ErrorCaseRow(AgeFileError.scryptNotAlone, status: 4, hint: false, shows: ["scrypt"])
        case .headerMACFailed: return ErrorCaseRow(AgeFileError.headerMACFailed, status: 4, hint: false, shows: ["MAC"])
        case .noIdentityMatches: return ErrorCaseRow(AgeFileError.noIdentityMatches(kinds: ["X25519", "ssh-ed25519"]), status: 3, hint: true, shows: ["X25519, ssh-ed25519"])
        case .passphraseRequired: return ErrorCaseRow(AgeFileError.passphraseRequired, status: 3, hint: true, shows: ["passphrase"])
        case .passphraseNotUsable: return ErrorCaseRow(AgeFileError.passphraseNotUsable, status: 3, hint: true, shows: ["recipients"])
        case .wrongPassphrase: return ErrorCaseRow(AgeFileError.wrongPassphrase, status: 3, hint: true, shows: ["wrong passphrase"])
        case .workFactorOverCap:
            return ErrorCaseRow(AgeFileError.workFactorOverCap(logN: 21, asked: 2 << 30, cap: 1 << 30), status: 6, hint: true, shows: ["2^21", "2 GiB", "1 GiB"])
        case .scryptFailed: return ErrorCaseRow(AgeFileError.scryptFailed(logN: 20), status: 2, hint: false, shows: ["2^20"])
        case .missingNonce: return ErrorCaseRow(AgeFileError.missingNonce, status: 4, hint: false, shows: ["nonce"])
        case .payloadDamaged: return ErrorCaseRow(AgeFileError.payloadDamaged(chunk: 5, why: "bad tag"), status: 4, hint: false, shows: ["chunk 5", "bad tag"])
        case .plaintextTooLarge: return ErrorCaseRow(AgeFileError.plaintextTooLarge(limit: 99), status: 6, hint: true, shows: ["99"])
        case .armorMalformed: return ErrorCaseRow(AgeFileError.armorMalformed("line 2"), status: 4, hint: false, shows: ["line 2"])
        case .invalidRecipients: return ErrorCaseRow(AgeFileError.invalidRecipients("no recipient"), status: 64, hint: false, shows: ["no recipient"])
        case .plugin:
            return ErrorCaseRow(AgeFileError.plugin(.timedOut(plugin: "yk", phase: "phase 2", seconds: 9)), status: 2, hint: true,
                                shows: ["age-plugin-yk", "9 s", "phase 2"])
        }
    }
}
