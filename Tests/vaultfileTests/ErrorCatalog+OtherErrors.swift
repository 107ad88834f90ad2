#if canImport(Glibc)
import Glibc
#endif
import KDF
import VaultFile
import VaultFormat
import VaultModel
@testable import vaultfile

// The rows of the errors other than VaultError (ErrorCatalog.swift holds the catalog and VaultError's).

// MARK: - KDFError

enum KDFErrorKind: CaseIterable {
    case unknownAlgorithm, invalidParameters, invalidSaltLength, memoryOverCap, workOverCap, iterationsOverCap
    case workTotalOverCap, iterationsTotalOverCap, belowMinimum, derivationFailed, aesKDFRoundsOverCap

    init(_ error: KDFError) {
        switch error {
        case .unknownAlgorithm: self = .unknownAlgorithm
        case .invalidParameters: self = .invalidParameters
        case .invalidSaltLength: self = .invalidSaltLength
        case .memoryOverCap: self = .memoryOverCap
        case .workOverCap: self = .workOverCap
        case .iterationsOverCap: self = .iterationsOverCap
        case .workTotalOverCap: self = .workTotalOverCap
        case .iterationsTotalOverCap: self = .iterationsTotalOverCap
        case .belowMinimum: self = .belowMinimum
        case .aesKDFRoundsOverCap: self = .aesKDFRoundsOverCap
        case .derivationFailed: self = .derivationFailed
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .unknownAlgorithm: return ErrorCaseRow(KDFError.unknownAlgorithm(77), status: 4, hint: true, shows: ["77"])
        case .invalidParameters: return ErrorCaseRow(KDFError.invalidParameters("shown-reason"), status: 4, hint: false, shows: ["shown-reason"])
        case .invalidSaltLength: return ErrorCaseRow(KDFError.invalidSaltLength(13), status: 4, hint: false, shows: ["13"])
        case .memoryOverCap: return ErrorCaseRow(KDFError.memoryOverCap(asked: 3 << 30, cap: 1 << 30), status: 6, hint: true, shows: ["3 GiB", "1 GiB"])
        case .workOverCap: return ErrorCaseRow(KDFError.workOverCap(asked: 48 << 20, cap: 32 << 20), status: 6, hint: true, shows: ["48 GiB", "32 GiB"])
        case .iterationsOverCap:
            return ErrorCaseRow(KDFError.iterationsOverCap(asked: 70_000_001, cap: 50_000_000), status: 6, hint: true, shows: ["70000001", "50000000"])
        case .workTotalOverCap:
            return ErrorCaseRow(KDFError.workTotalOverCap(spent: 24 << 20, asked: 16 << 20, cap: 32 << 20), status: 6, hint: true,
                                shows: ["40 GiB", "24 GiB", "16 GiB", "32 GiB", "in total over the slots tried"])
        case .iterationsTotalOverCap:
            return ErrorCaseRow(KDFError.iterationsTotalOverCap(spent: 40_000_000, asked: 30_000_000, cap: 50_000_000), status: 6, hint: true,
                                shows: ["70000000", "40000000", "30000000", "50000000", "in total over the slots tried"])
        case .aesKDFRoundsOverCap:
            return ErrorCaseRow(KDFError.aesKDFRoundsOverCap(source: "shown.kdbx", rounds: 800_000_003, cap: 800_000_000), status: 6, hint: true,
                                shows: ["shown.kdbx", "800000003", "AES-KDF", "--kdf-max-iterations"])
        case .belowMinimum: return ErrorCaseRow(KDFError.belowMinimum("(shown-settings)"), status: 64, hint: true, shows: ["(shown-settings)"])
        case .derivationFailed: return ErrorCaseRow(KDFError.derivationFailed("shown-reason"), status: 2, hint: false, shows: ["shown-reason"])
        }
    }
}

// MARK: - CLIError

enum CLIErrorKind: CaseIterable {
    case noIdentityPassphraseSource, identityPassphraseSourceFailed
    case noPasswordSource, noForeignPasswordSource, passwordSourceFailed, emptyPassword, passwordsDiffer, passwordCommandFailed, inputFailed
    case inputTooLarge, io, outputFailed, invalidArgument, cannotRun, refused, agentFailed
    case agentOfAnotherRelease, agentHoldsOtherKeys, agentChangeDenied, agentCannotSign, agentSignDenied, pluginObserved
    case noMatch, binaryOnTerminal, emptyValue, unknownVerb, standardInputTaken, regexWorkLimit, fieldLabelShared, folderNotEntry, noEntryOrFolder, nothingUnder, referenceNotFound
    case stateFolderUnsafe, typedPasswordWrong, execMatchesNothing, importFormatMismatch, importFormatUnknown, importUnreadable, kdfOverOpenCaps
    case sourceDecryptionFailed, sourceDecryptionTooLarge, sourceDecryptionTotalOverLimit, sopsDataKeyNotOpened, identitiesFileNoTerminal, identitiesFilePassphraseWrong, nothingOpens, nothingOpensNoTerminal
    case storeEncryptionFailed
    case gitCredentialVaultLocked

    init(_ error: CLIError) {
        switch error {
        case .noPasswordSource: self = .noPasswordSource
        case .noForeignPasswordSource: self = .noForeignPasswordSource
        case .nothingOpens(let report): self = report.noTerminal ? .nothingOpensNoTerminal : .nothingOpens
        case .gitCredentialVaultLocked: self = .gitCredentialVaultLocked
        case .noIdentityPassphraseSource: self = .noIdentityPassphraseSource
        case .identityPassphraseSourceFailed: self = .identityPassphraseSourceFailed
        case .passwordSourceFailed: self = .passwordSourceFailed
        case .emptyPassword: self = .emptyPassword
        case .passwordsDiffer: self = .passwordsDiffer
        case .sourceDecryptionFailed(_, _, let status, _): self = status == nil ? .sourceDecryptionTooLarge : .sourceDecryptionFailed
        case .sourceDecryptionTotalOverLimit: self = .sourceDecryptionTotalOverLimit
        case .sopsDataKeyNotOpened: self = .sopsDataKeyNotOpened
        case .identitiesFileNoTerminal: self = .identitiesFileNoTerminal
        case .identitiesFilePassphraseWrong: self = .identitiesFilePassphraseWrong
        case .storeEncryptionFailed: self = .storeEncryptionFailed
        case .passwordCommandFailed: self = .passwordCommandFailed
        case .inputFailed: self = .inputFailed
        case .inputTooLarge: self = .inputTooLarge
        case .io: self = .io
        case .outputFailed: self = .outputFailed
        case .invalidArgument: self = .invalidArgument
        case .cannotRun: self = .cannotRun
        case .refused: self = .refused
        case .agentFailed: self = .agentFailed
        case .agentOfAnotherRelease: self = .agentOfAnotherRelease
        case .agentHoldsOtherKeys: self = .agentHoldsOtherKeys
        case .agentChangeDenied: self = .agentChangeDenied
        case .agentCannotSign: self = .agentCannotSign
        case .agentSignDenied: self = .agentSignDenied
        case .pluginObserved: self = .pluginObserved
        case .noMatch: self = .noMatch
        case .binaryOnTerminal: self = .binaryOnTerminal
        case .emptyValue: self = .emptyValue
        case .unknownVerb: self = .unknownVerb
        case .standardInputTaken: self = .standardInputTaken
        case .regexWorkLimit: self = .regexWorkLimit
        case .fieldLabelShared: self = .fieldLabelShared
        case .folderNotEntry: self = .folderNotEntry
        case .noEntryOrFolder: self = .noEntryOrFolder
        case .nothingUnder: self = .nothingUnder
        case .referenceNotFound: self = .referenceNotFound
        case .stateFolderUnsafe: self = .stateFolderUnsafe
        case .typedPasswordWrong: self = .typedPasswordWrong
        case .execMatchesNothing: self = .execMatchesNothing
        case .kdfOverOpenCaps: self = .kdfOverOpenCaps
        case .importFormatMismatch: self = .importFormatMismatch
        case .importFormatUnknown: self = .importFormatUnknown
        case .importUnreadable: self = .importUnreadable
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .noPasswordSource: return ErrorCaseRow(CLIError.noPasswordSource, status: 2, hint: true)
        case .noForeignPasswordSource:
            return ErrorCaseRow(CLIError.noForeignPasswordSource(what: "the KeePass database shown.kdbx", options: "--shown-option"), status: 2, hint: true,
                                shows: ["shown.kdbx"])
        case .noIdentityPassphraseSource:
            return ErrorCaseRow(CLIError.noIdentityPassphraseSource(identity: "--identity shown.key"), status: 2, hint: true, shows: ["--identity shown.key"])
        case .identityPassphraseSourceFailed:
            return ErrorCaseRow(CLIError.identityPassphraseSourceFailed(source: "--identity-passphrase-fd 7", why: "shown-reason"), status: 2,
                                hint: false, shows: ["--identity-passphrase-fd 7", "shown-reason"])
        case .passwordSourceFailed: return ErrorCaseRow(CLIError.passwordSourceFailed("shown-reason"), status: 2, hint: false, shows: ["shown-reason"])
        case .emptyPassword: return ErrorCaseRow(CLIError.emptyPassword, status: 2, hint: false)
        case .passwordsDiffer: return ErrorCaseRow(CLIError.passwordsDiffer, status: 2, hint: false)
        case .passwordCommandFailed: return ErrorCaseRow(CLIError.passwordCommandFailed(status: 97), status: 2, hint: true, shows: ["97"])
        case .inputFailed: return ErrorCaseRow(CLIError.inputFailed("shown-reason"), status: 2, hint: false, shows: ["shown-reason"])
        case .inputTooLarge:
            return ErrorCaseRow(CLIError.inputTooLarge(what: "/v/shown.txt", limit: 256 << 20), status: 6, hint: false,
                                shows: ["limit exceeded: /v/shown.txt holds more than 268435456 bytes (256 MiB), the largest value a vault holds"])
        case .io:
            return ErrorCaseRow(CLIError.io(operation: "shown-operation", path: "/v/shown.txt", errno: ENOENT), status: 2, hint: false,
                                shows: ["shown-operation", "/v/shown.txt", "No such file or directory"])
        case .outputFailed: return ErrorCaseRow(CLIError.outputFailed(errno: EPIPE), status: 2, hint: false, shows: ["Broken pipe"])
        case .invalidArgument: return ErrorCaseRow(CLIError.invalidArgument("shown-reason"), status: 64, hint: false, shows: ["shown-reason"])
        case .sourceDecryptionFailed:
            return ErrorCaseRow(CLIError.sourceDecryptionFailed(tool: "gpg", file: "shown/file.gpg", status: 2, limit: 1), status: 3, hint: true,
                                shows: ["shown/file.gpg", "exit status 2"])
        case .storeEncryptionFailed:
            return ErrorCaseRow(CLIError.storeEncryptionFailed(entry: "shown/entry", status: 2), status: 2, hint: true,
                                shows: ["shown/entry", "exit status 2", "no store was written"])
        case .sourceDecryptionTooLarge:
            return ErrorCaseRow(CLIError.sourceDecryptionFailed(tool: "age", file: "shown/file.age", status: nil, limit: 77), status: 6, hint: true,
                                shows: ["shown/file.age", "77"])
        case .sourceDecryptionTotalOverLimit:
            return ErrorCaseRow(CLIError.sourceDecryptionTotalOverLimit(tool: "gpg", files: 17, limit: 268_435_456), status: 6, hint: true,
                                shows: ["17 files", "268435456", "256 MiB"])
        case .sopsDataKeyNotOpened:
            return ErrorCaseRow(CLIError.sopsDataKeyNotOpened(file: "shown/secrets.yaml", keys: "/shown/keys.txt"), status: 3, hint: true,
                                shows: ["shown/secrets.yaml", "/shown/keys.txt", "nothing was imported"])
        case .identitiesFileNoTerminal:
            return ErrorCaseRow(CLIError.identitiesFileNoTerminal(file: "/shown/identities"), status: 2, hint: true,
                                shows: ["/shown/identities", "protected by a passphrase", "no terminal", "nothing was imported"])
        case .identitiesFilePassphraseWrong:
            return ErrorCaseRow(CLIError.identitiesFilePassphraseWrong(file: "/shown/identities", tries: 3), status: 3, hint: true,
                                shows: ["/shown/identities", "(3 tries)", "nothing was imported"])
        case .cannotRun:
            return ErrorCaseRow(CLIError.cannotRun(command: "shown-command", errno: E2BIG), status: 64, hint: false,
                                shows: ["cannot run 'shown-command': its environment and arguments are larger than the system allows"])
        case .refused: return ErrorCaseRow(CLIError.refused("shown-reason", hint: "shown-hint"), status: 2, hint: true, shows: ["shown-reason"])
        case .importFormatMismatch:
            return ErrorCaseRow(CLIError.importFormatMismatch(source: "/v/shown.csv", given: "csv", looksLike: "a Chrome CSV export", hint: "shown-hint"),
                                status: 2, hint: true, shows: ["/v/shown.csv", "a Chrome CSV export", "nothing was imported"])
        case .importFormatUnknown:
            return ErrorCaseRow(CLIError.importFormatUnknown(source: "/v/shown.txt", why: "shown-reason"), status: 64, hint: true,
                                shows: ["/v/shown.txt", "shown-reason"])
        case .importUnreadable:
            return ErrorCaseRow(CLIError.importUnreadable(source: "/v/shown.csv", format: "chrome-csv", why: "line 3: shown-reason", hint: "shown-hint"),
                                status: 2, hint: true, shows: ["/v/shown.csv", "chrome-csv", "line 3: shown-reason", "nothing was imported"])
        case .agentFailed: return ErrorCaseRow(CLIError.agentFailed("shown-reason"), status: 2, hint: true, shows: ["shown-reason"])
        case .agentOfAnotherRelease:
            return ErrorCaseRow(CLIError.agentOfAnotherRelease(agentVersion: 1), status: 2, hint: false,
                                shows: ["the running agent is from another release: run 'vaultfile agent stop', then unlock again"])
        case .agentHoldsOtherKeys:
            return ErrorCaseRow(CLIError.agentHoldsOtherKeys(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault", "nothing changed"])
        case .agentChangeDenied:
            return ErrorCaseRow(CLIError.agentChangeDenied(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault", "nothing changed"])
        case .agentCannotSign:
            return ErrorCaseRow(CLIError.agentCannotSign(path: "/v/shown.vault", reason: .expired), status: 3, hint: true,
                                shows: ["/v/shown.vault", "expired", "nothing was written"])
        case .agentSignDenied:
            return ErrorCaseRow(CLIError.agentSignDenied(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault", "nothing was written"])
        case .gitCredentialVaultLocked:
            return ErrorCaseRow(CLIError.gitCredentialVaultLocked(path: "/v/shown.vault", vaultOption: "/v/shown.vault", operation: "git-credential-store",
                                                                  agentMiss: nil), status: 2, hint: true,
                                shows: ["git credential store: the vault is locked (/v/shown.vault)", "nothing was stored"])
        case .pluginObserved:
            return ErrorCaseRow(CLIError.pluginObserved("LD_PRELOAD is set"), status: 2, hint: false,
                                shows: ["refuses to unwrap: LD_PRELOAD is set", "file key", "neither the agent nor the vault was asked", "env -u LD_PRELOAD"])
        case .noMatch:
            return ErrorCaseRow(CLIError.noMatch(pattern: "'shown-pattern'", searchedValues: false, caseSensitive: false), status: 1, hint: true,
                                shows: ["no entry matches 'shown-pattern'"])
        case .binaryOnTerminal:
            return ErrorCaseRow(CLIError.binaryOnTerminal(name: "shown/name", field: "shown-field"), status: 2, hint: true,
                                shows: ["field 'shown-field' of 'shown/name'", "terminal"])
        case .emptyValue:
            return ErrorCaseRow(CLIError.emptyValue(name: "shown/name", field: nil), status: 2, hint: true, shows: ["'shown/name'", "empty"])
        case .unknownVerb:
            return ErrorCaseRow(CLIError.unknownVerb("shown-verb", suggestions: ["list"]), status: 64, hint: true, shows: ["'shown-verb'"])
        case .standardInputTaken:
            return ErrorCaseRow(CLIError.standardInputTaken(reader: "shown-first", second: "shown-second"), status: 64, hint: false,
                                shows: ["shown-first", "shown-second"])
        case .regexWorkLimit:
            return ErrorCaseRow(CLIError.regexWorkLimit(pattern: "'shown-pattern'", initialSteps: 1_000_000, stepsPerCharacter: 1_000), status: 6,
                                hint: true, shows: ["limit exceeded", "'shown-pattern'", "1000 steps per character", "1000000"])
        case .fieldLabelShared:
            return ErrorCaseRow(CLIError.fieldLabelShared(entry: "shown/entry", label: "Shown Label", fields: ["Shown_Label_2", "Shown_Label_3"]),
                                status: 1, hint: true, shows: ["'shown/entry' has no field 'Shown Label'", "Shown_Label_2, Shown_Label_3"])
        case .folderNotEntry:
            return ErrorCaseRow(CLIError.folderNotEntry(name: "shown/folder", count: 3), status: 1, hint: true,
                                shows: ["'shown/folder' is a folder of 3 entries, not an entry"])
        case .noEntryOrFolder:
            return ErrorCaseRow(CLIError.noEntryOrFolder("shown/name"), status: 1, hint: true, shows: ["no entry or folder named 'shown/name' (nothing under 'shown/name/')"])
        case .nothingUnder:
            return ErrorCaseRow(CLIError.nothingUnder(folder: "shown/", entry: nil), status: 1, hint: true, shows: ["nothing under 'shown/'"])
        case .referenceNotFound:
            return ErrorCaseRow(CLIError.referenceNotFound(reference: "vf://shown#f", why: "shown-why", place: "SHOWN_VAR in shown.env"),
                                status: 1, hint: true, shows: ["vf://shown#f", "shown-why", "SHOWN_VAR in shown.env"])
        case .stateFolderUnsafe:
            return ErrorCaseRow(CLIError.stateFolderUnsafe(.init(folder: "/v/state", owner: 65534, mode: 0o777, othersOwn: true)), status: 2,
                                hint: true, shows: ["the state folder /v/state", "uid 65534", "mode 0777", "nothing was written"])
        case .typedPasswordWrong:
            return ErrorCaseRow(CLIError.typedPasswordWrong(tries: 3), status: 3, hint: true, shows: ["wrong password 3 times"])
        case .nothingOpens:
            let report = NothingOpens(tried: ["--identity /v/shown.txt"], hasPasswordSlot: false, otherKinds: [.recipient], unknownTypes: [9],
                                      passwordFrom: "typed at the prompt", agentMiss: .notHeld(socket: "/run/shown.sock"),
                                      identityLocations: "/h/.config/vaultfile/identity.txt and /h/.config/vaultfile/identities/",
                                      noTerminal: false, noSourceGiven: false)
            return ErrorCaseRow(CLIError.nothingOpens(report), status: 3, hint: true,
                                shows: ["no keyslot of the vault opens with --identity /v/shown.txt", "keyslots of type 9",
                                        "the agent at /run/shown.sock does not hold this vault"])
        case .nothingOpensNoTerminal:
            let report = NothingOpens(tried: ["the default identity /h/id.txt"], hasPasswordSlot: true, otherKinds: [], unknownTypes: [],
                                      passwordFrom: "typed at the prompt", agentMiss: nil, identityLocations: "/h/id.txt and /h/ids/",
                                      noTerminal: true, noSourceGiven: true)
            return ErrorCaseRow(CLIError.nothingOpens(report), status: 2, hint: true,
                                shows: ["no password source, and no terminal to ask on", "no keyslot of the vault opens with the default identity /h/id.txt"])
        case .execMatchesNothing:
            return ErrorCaseRow(CLIError.execMatchesNothing(prefix: "shown/"), status: 1, hint: true, shows: ["--prefix shown/ matches no entry"])
        case .kdfOverOpenCaps:
            return ErrorCaseRow(CLIError.kdfOverOpenCaps(settings: "Argon2id shown", cap: .workOverCap(asked: 48 << 20, cap: 32 << 20)), status: 64,
                                hint: true, shows: ["Argon2id shown is over the Argon2id work limit", "every later open would fail"])
        }
    }
}

// MARK: - XChaCha20Poly1305.Failure

enum AEADFailureKind: CaseIterable {
    case invalidKeyLength, invalidNonceLength, authenticationFailed

    init(_ error: XChaCha20Poly1305.Failure) {
        switch error {
        case .invalidKeyLength: self = .invalidKeyLength
        case .invalidNonceLength: self = .invalidNonceLength
        case .authenticationFailed: self = .authenticationFailed
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .invalidKeyLength: return ErrorCaseRow(XChaCha20Poly1305.Failure.invalidKeyLength(31), status: 2, hint: false, shows: ["31"])
        case .invalidNonceLength: return ErrorCaseRow(XChaCha20Poly1305.Failure.invalidNonceLength(23), status: 2, hint: false, shows: ["23"])
        case .authenticationFailed: return ErrorCaseRow(XChaCha20Poly1305.Failure.authenticationFailed, status: 4, hint: false)
        }
    }
}

// MARK: - OTPError

enum OTPErrorKind: CaseIterable {
    case malformedURI, invalidSecret, unsupportedParameter, noTOTP, invalidTime

    init(_ error: OTPError) {
        switch error {
        case .malformedURI: self = .malformedURI
        case .invalidSecret: self = .invalidSecret
        case .unsupportedParameter: self = .unsupportedParameter
        case .noTOTP: self = .noTOTP
        case .invalidTime: self = .invalidTime
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .malformedURI: return ErrorCaseRow(OTPError.malformedURI("shown-reason"), status: 2, hint: true, shows: ["shown-reason"])
        case .invalidSecret: return ErrorCaseRow(OTPError.invalidSecret("shown-reason"), status: 2, hint: true, shows: ["shown-reason"])
        case .unsupportedParameter: return ErrorCaseRow(OTPError.unsupportedParameter("shown-reason"), status: 2, hint: true, shows: ["shown-reason"])
        case .noTOTP: return ErrorCaseRow(OTPError.noTOTP("shown/name"), status: 1, hint: true, shows: ["shown/name"])
        case .invalidTime: return ErrorCaseRow(OTPError.invalidTime(-5), status: 64, hint: false, shows: ["-5"])
        }
    }
}
