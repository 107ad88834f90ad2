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

// MARK: - AgePluginClientError

/// The failures of an age plugin vaultfile runs as a client: a missing binary exits 1, a reply
/// that breaks the protocol 4, a bad name 64, the plugin's own error, a refusal, a hang or an exit 2.
enum AgePluginClientErrorKind: CaseIterable {
    case invalidName, notFound, notAllowed, cannotStart, pluginReported, protocolViolation, timedOut, exited, noStanza, exclusive

    init(_ error: AgePluginClientError) {
        switch error {
        case .invalidName: self = .invalidName
        case .notFound: self = .notFound
        case .notAllowed: self = .notAllowed
        case .cannotStart: self = .cannotStart
        case .pluginReported: self = .pluginReported
        case .protocolViolation: self = .protocolViolation
        case .timedOut: self = .timedOut
        case .exited: self = .exited
        case .noStanza: self = .noStanza
        case .exclusive: self = .exclusive
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .invalidName: return ErrorCaseRow(AgePluginClientError.invalidName, status: 64, hint: true, shows: ["plugin name"])
        case .notFound:
            return ErrorCaseRow(AgePluginClientError.notFound(plugin: "yk", searched: ["/usr/bin"]), status: 1, hint: true,
                                shows: ["age-plugin-yk", "/usr/bin", "relative"])
        case .notAllowed:
            return ErrorCaseRow(AgePluginClientError.notAllowed(plugin: "yk", context: "git textconv"), status: 2, hint: true, shows: ["git textconv", "age-plugin-yk"])
        case .cannotStart: return ErrorCaseRow(AgePluginClientError.cannotStart(plugin: "yk", why: "EACCES"), status: 2, hint: true, shows: ["EACCES"])
        case .pluginReported:
            return ErrorCaseRow(AgePluginClientError.pluginReported(plugin: "yk", kind: "identity", message: "no key"), status: 2, hint: true,
                                shows: ["age-plugin-yk", "(identity)", "no key"])
        case .protocolViolation:
            return ErrorCaseRow(AgePluginClientError.protocolViolation(plugin: "yk", why: "odd"), status: 4, hint: true, shows: ["odd"])
        case .timedOut:
            return ErrorCaseRow(AgePluginClientError.timedOut(plugin: "yk", phase: "phase 2", seconds: 3), status: 2, hint: true, shows: ["3 s"])
        case .exited: return ErrorCaseRow(AgePluginClientError.exited(plugin: "yk", phase: "phase 2"), status: 2, hint: true, shows: ["phase 2"])
        case .noStanza: return ErrorCaseRow(AgePluginClientError.noStanza(plugin: "yk"), status: 4, hint: true, shows: ["no stanza"])
        case .exclusive:
            return ErrorCaseRow(AgePluginClientError.exclusive(plugin: "yk", others: "X25519"), status: 2, hint: true, shows: ["not be mixed", "X25519"])
        }
    }
}
