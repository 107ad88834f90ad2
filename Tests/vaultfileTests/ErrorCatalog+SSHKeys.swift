import VaultFormat

// MARK: - SSHKeyError

/// The refusals of ssh keys kept as entries (`set --ssh-key`, `ssh-keygen`, the agent's
/// signatures): damaged or unsupported keys exit 4, the bcrypt cap 6, a wrong passphrase 3.
enum SSHKeyErrorKind: CaseIterable {
    case damaged, unsupported, workOverCap, passphraseWrong, signingRefused, invalidRequest, cryptoFailure

    init(_ error: SSHKeyError) {
        switch error {
        case .damaged: self = .damaged
        case .unsupported: self = .unsupported
        case .workOverCap: self = .workOverCap
        case .passphraseWrong: self = .passphraseWrong
        case .signingRefused: self = .signingRefused
        case .invalidRequest: self = .invalidRequest
        case .cryptoFailure: self = .cryptoFailure
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .damaged: return ErrorCaseRow(SSHKeyError.damaged("id: the key's check integers differ"), status: 4, hint: false, shows: ["id:", "check integers"])
        case .unsupported: return ErrorCaseRow(SSHKeyError.unsupported("id: ssh keys of type 'ssh-dss' are not kept"), status: 4, hint: false, shows: ["ssh-dss"])
        case .workOverCap:
            return ErrorCaseRow(SSHKeyError.workOverCap(source: "id", rounds: 5000, limit: 1024), status: 6, hint: false, shows: ["id", "5000", "1024"])
        case .passphraseWrong:
            return ErrorCaseRow(SSHKeyError.passphraseWrong(source: "id", tries: 3), status: 3, hint: false, shows: ["id", "3 tries", "nothing was stored"])
        case .signingRefused: return ErrorCaseRow(SSHKeyError.signingRefused("unknown flags (0x8)"), status: 2, hint: false, shows: ["0x8"])
        case .invalidRequest: return ErrorCaseRow(SSHKeyError.invalidRequest("an RSA key of 1,024 bits is not made"), status: 64, hint: false, shows: ["1,024"])
        case .cryptoFailure: return ErrorCaseRow(SSHKeyError.cryptoFailure("an RSA signature"), status: 2, hint: false, shows: ["an RSA signature"])
        }
    }
}
