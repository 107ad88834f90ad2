#if canImport(Glibc)
import Glibc
#endif
import KDF
import VaultFile
import VaultFormat
import VaultModel
@testable import vaultfile

// MARK: - Every error case, with what the CLI must make of it

/// One error case: a sample of it, the exit status the CLI gives it (the documented contract,
/// written out as numbers so that a changed mapping fails), whether a hint is printed, and
/// data of the sample the message must name (paths, entry names, numbers).
struct ErrorCaseRow {
    let error: any Error
    let status: Int32
    let hasHint: Bool
    let shows: [String]

    init(_ error: any Error, status: Int32, hint hasHint: Bool, shows: [String] = []) {
        self.error = error
        self.status = status
        self.hasHint = hasHint
        self.shows = shows
    }
}

/// The rows of every error type that can reach `VaultfileCommand.main()` (`BatchError` wraps them).
///
/// Each type has a kind enum whose `init` switches over the error without a `default`: a case
/// added to an error does not compile until it has a kind, and `row` then needs its status.
enum ErrorCatalog {
    static var rows: [ErrorCaseRow] {
        VaultErrorKind.allCases.map(\.row) + KDFErrorKind.allCases.map(\.row)
            + CLIErrorKind.allCases.map(\.row) + AEADFailureKind.allCases.map(\.row) + OTPErrorKind.allCases.map(\.row)
            + X25519FailureKind.allCases.map(\.row) + HKDFFailureKind.allCases.map(\.row)
    }
}

// MARK: - VaultError

enum VaultErrorKind: CaseIterable {
    case notAVault, unsupportedVersion, unsupportedFeature, headerDamaged, wrongPassword, headerTampered, fileKeyRejected
    case payloadDamaged, contentsDamaged, invalidName, entryNotFound, fieldNotFound, referenceNotFound, entryExists, nameTwin
    case environmentVariableClash, malformedInput, limitExceeded, vaultMissing, notARegularFile, vaultExists, busy, changedOnDisk
    case mergeRefusedUnrelatedVaults, mergeRefusedPasswordFails, mergeRefusedPasswordOpensNone, mergeRefusedPasswordOpensOnly
    case mergeRefusedLowerKeyDerivation, mergeRefusedConflictNameTaken, staleCopy, generationCeiling, io, notDurable
    case divergedCopy, implausibleGeneration, implausibleJump
    case mergeRefusedSourcesFail, mergeRefusedSourcesOpenNone, mergeRefusedSourcesOpenOnly, sealedUnderRetiredKey
    case refusedCopySuperseded, refusedCopyRetiredSlotKey, refusedCopyUnknownLineage
    case noKeyslotOpens, slotNotFound, rotationBlocked, slotChangeRefused
    case historyOff, revisionNotFound

    init(_ error: VaultError) {
        switch error {
        case .notAVault: self = .notAVault
        case .unsupportedVersion: self = .unsupportedVersion
        case .unsupportedFeature: self = .unsupportedFeature
        case .headerDamaged: self = .headerDamaged
        case .wrongPassword: self = .wrongPassword
        case .noKeyslotOpens: self = .noKeyslotOpens
        case .slotNotFound: self = .slotNotFound
        case .historyOff: self = .historyOff
        case .revisionNotFound: self = .revisionNotFound
        case .rotationBlocked: self = .rotationBlocked
        case .slotChangeRefused: self = .slotChangeRefused
        case .headerTampered: self = .headerTampered
        case .fileKeyRejected: self = .fileKeyRejected
        case .payloadDamaged: self = .payloadDamaged
        case .contentsDamaged: self = .contentsDamaged
        case .invalidName: self = .invalidName
        case .entryNotFound: self = .entryNotFound
        case .fieldNotFound: self = .fieldNotFound
        case .referenceNotFound: self = .referenceNotFound
        case .entryExists: self = .entryExists
        case .nameTwin: self = .nameTwin
        case .environmentVariableClash: self = .environmentVariableClash
        case .malformedInput: self = .malformedInput
        case .limitExceeded: self = .limitExceeded
        case .vaultMissing: self = .vaultMissing
        case .notARegularFile: self = .notARegularFile
        case .vaultExists: self = .vaultExists
        case .busy: self = .busy
        case .changedOnDisk: self = .changedOnDisk
        case .mergeRefused(.unrelatedVaults): self = .mergeRefusedUnrelatedVaults
        case .mergeRefused(.passwordFails(_, let tried)) where VaultError.MergeRefusal.sources(tried) != nil: self = .mergeRefusedSourcesFail
        case .mergeRefused(.passwordFails): self = .mergeRefusedPasswordFails
        case .mergeRefused(.passwordOpensNone(_, let tried)) where VaultError.MergeRefusal.sources(tried) != nil: self = .mergeRefusedSourcesOpenNone
        case .mergeRefused(.passwordOpensNone): self = .mergeRefusedPasswordOpensNone
        case .mergeRefused(.passwordOpensOnly(_, _, let tried)) where VaultError.MergeRefusal.sources(tried) != nil: self = .mergeRefusedSourcesOpenOnly
        case .mergeRefused(.passwordOpensOnly): self = .mergeRefusedPasswordOpensOnly
        case .mergeRefused(.lowerKeyDerivation): self = .mergeRefusedLowerKeyDerivation
        case .mergeRefused(.conflictNameTaken): self = .mergeRefusedConflictNameTaken
        case .staleCopy: self = .staleCopy
        case .sealedUnderRetiredKey: self = .sealedUnderRetiredKey
        case .generationCeiling: self = .generationCeiling
        case .divergedCopy: self = .divergedCopy
        case .implausibleGeneration(_, let generation, let seen):
            self = generation > Generations.ceiling || seen == nil ? .implausibleGeneration : .implausibleJump
        case .refusedCopy(_, .supersededFileKey): self = .refusedCopySuperseded
        case .refusedCopy(_, .retiredSlotKey): self = .refusedCopyRetiredSlotKey
        case .refusedCopy(_, .unknownLineage): self = .refusedCopyUnknownLineage
        case .io: self = .io
        case .notDurable: self = .notDurable
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .notAVault: return ErrorCaseRow(VaultError.notAVault(path: "/v/shown.vault"), status: 4, hint: true, shows: ["/v/shown.vault"])
        case .unsupportedVersion: return ErrorCaseRow(VaultError.unsupportedVersion(major: 7, minor: 9), status: 4, hint: true, shows: ["7.9"])
        case .unsupportedFeature: return ErrorCaseRow(VaultError.unsupportedFeature("shown-feature"), status: 4, hint: true, shows: ["shown-feature"])
        case .headerDamaged: return ErrorCaseRow(VaultError.headerDamaged("shown-reason"), status: 4, hint: true, shows: ["shown-reason"])
        case .wrongPassword: return ErrorCaseRow(VaultError.wrongPassword, status: 3, hint: true)
        case .noKeyslotOpens:
            return ErrorCaseRow(VaultError.noKeyslotOpens(sources: ["--identity shown.key", "VAULTFILE_KEYFILE"], unknownTypes: [42]),
                                status: 3, hint: true, shows: ["--identity shown.key", "VAULTFILE_KEYFILE", "type 42"])
        case .slotNotFound: return ErrorCaseRow(VaultError.slotNotFound("shown-label"), status: 1, hint: true, shows: ["shown-label"])
        case .historyOff: return ErrorCaseRow(VaultError.historyOff, status: 2, hint: true, shows: ["keeps no history"])
        case .revisionNotFound:
            return ErrorCaseRow(VaultError.revisionNotFound(entry: "shown/name", revision: 7, available: 2), status: 1, hint: true,
                                shows: ["shown/name", "revision 7", "2 earlier versions"])
        case .rotationBlocked:
            return ErrorCaseRow(VaultError.rotationBlocked(slots: ["keyslot 7 (unknown type 9)"]), status: 2, hint: true, shows: ["keyslot 7", "type 9"])
        case .slotChangeRefused: return ErrorCaseRow(VaultError.slotChangeRefused("shown reason"), status: 2, hint: false, shows: ["shown reason"])
        case .headerTampered: return ErrorCaseRow(VaultError.headerTampered, status: 4, hint: true)
        case .fileKeyRejected: return ErrorCaseRow(VaultError.fileKeyRejected, status: 3, hint: true)
        case .payloadDamaged:
            return ErrorCaseRow(VaultError.payloadDamaged(chunk: 41, reason: "shown-reason"), status: 4, hint: true, shows: ["41", "shown-reason"])
        case .contentsDamaged: return ErrorCaseRow(VaultError.contentsDamaged("shown-reason"), status: 4, hint: true, shows: ["shown-reason"])
        case .invalidName: return ErrorCaseRow(VaultError.invalidName("shown-reason"), status: 64, hint: false, shows: ["shown-reason"])
        case .entryNotFound: return ErrorCaseRow(VaultError.entryNotFound("shown/name"), status: 1, hint: true, shows: ["shown/name"])
        case .fieldNotFound:
            return ErrorCaseRow(VaultError.fieldNotFound(entry: "shown/name", field: "shown-field", available: ["shown-a", "shown-b"]),
                                status: 1, hint: false, shows: ["the entry 'shown/name' has no field 'shown-field'", "shown-a, shown-b"])
        case .referenceNotFound:
            return ErrorCaseRow(VaultError.referenceNotFound("shown/name", line: 12), status: 1, hint: true, shows: ["shown/name", "12"])
        case .entryExists: return ErrorCaseRow(VaultError.entryExists("shown/name"), status: 2, hint: true, shows: ["shown/name"])
        case .nameTwin:
            return ErrorCaseRow(VaultError.nameTwin(name: "shown/caf\u{E9}", existing: "shown/cafe\u{301}"), status: 2, hint: true,
                                shows: ["$'shown/caf\\u00e9'", "$'shown/cafe\\u0301'"])
        case .environmentVariableClash:
            return ErrorCaseRow(VaultError.environmentVariableClash("shown/a", "shown-a", variable: "SHOWN_A"), status: 2, hint: true,
                                shows: ["'shown/a'", "'shown-a'", "SHOWN_A"])
        case .malformedInput: return ErrorCaseRow(VaultError.malformedInput("line 3: shown-reason"), status: 2, hint: false, shows: ["line 3: shown-reason"])
        case .limitExceeded: return ErrorCaseRow(VaultError.limitExceeded("shown-reason"), status: 6, hint: false, shows: ["shown-reason"])
        case .vaultMissing: return ErrorCaseRow(VaultError.vaultMissing(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault"])
        case .notARegularFile:
            return ErrorCaseRow(VaultError.notARegularFile(path: "/v/shown.vault", kind: .namedPipe), status: 2, hint: false,
                                shows: ["/v/shown.vault is a named pipe, not a vault file"])
        case .vaultExists: return ErrorCaseRow(VaultError.vaultExists(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault"])
        case .busy:
            return ErrorCaseRow(VaultError.busy(lockPath: "/v/shown.vault.lock", seconds: 2.5), status: 5, hint: true, shows: ["/v/shown.vault.lock", "2.5"])
        case .changedOnDisk: return ErrorCaseRow(VaultError.changedOnDisk(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault"])
        case .mergeRefusedUnrelatedVaults: return ErrorCaseRow(VaultError.mergeRefused(.unrelatedVaults), status: 2, hint: true)
        case .mergeRefusedPasswordFails:
            return ErrorCaseRow(VaultError.mergeRefused(.passwordFails(sides: ["THEIRS at /v/shown.vault"])), status: 2, hint: true,
                                shows: ["THEIRS at /v/shown.vault"])
        case .mergeRefusedPasswordOpensNone:
            return ErrorCaseRow(VaultError.mergeRefused(.passwordOpensNone(sides: ["BASE at /v/b.vault", "OURS at /v/o.vault", "THEIRS at /v/t.vault"])),
                                status: 2, hint: true, shows: ["wrong password", "BASE at /v/b.vault", "OURS at /v/o.vault", "THEIRS at /v/t.vault"])
        case .mergeRefusedPasswordOpensOnly:
            return ErrorCaseRow(VaultError.mergeRefused(.passwordOpensOnly(opens: ["OURS at /v/o.vault"], fails: ["BASE at /v/b.vault"])),
                                status: 2, hint: true, shows: ["OURS at /v/o.vault", "BASE at /v/b.vault", "changed on that side"])
        case .mergeRefusedSourcesFail:
            // Identities and keyfiles are named as sources, never "the password", and never their contents.
            return ErrorCaseRow(VaultError.mergeRefused(.passwordFails(sides: ["THEIRS at /v/t.vault"], tried: ["--identity shown.txt", "--keyfile k.bin"])),
                                status: 2, hint: true, shows: ["THEIRS at /v/t.vault", "--identity shown.txt, --keyfile k.bin", "keyslots were changed"])
        case .mergeRefusedSourcesOpenNone:
            return ErrorCaseRow(VaultError.mergeRefused(.passwordOpensNone(sides: ["OURS at /v/o.vault", "THEIRS at /v/t.vault"],
                                                                           tried: ["VAULTFILE_IDENTITY_FILE (/v/id.txt)", "VAULTFILE_IDENTITY_FILE (/v/id.txt)"])),
                                status: 2, hint: true, shows: ["the unlock source tried (VAULTFILE_IDENTITY_FILE (/v/id.txt))", "OURS at /v/o.vault", "THEIRS at /v/t.vault"])
        case .mergeRefusedSourcesOpenOnly:
            return ErrorCaseRow(VaultError.mergeRefused(.passwordOpensOnly(opens: ["OURS at /v/o.vault"], fails: ["BASE at /v/b.vault"],
                                                                           tried: ["VAULTFILE_KEYFILE (/v/k)", "the password"])),
                                status: 2, hint: true, shows: ["VAULTFILE_KEYFILE (/v/k), the password", "OURS at /v/o.vault opens", "BASE at /v/b.vault does not"])
        case .sealedUnderRetiredKey:
            return ErrorCaseRow(VaultError.sealedUnderRetiredKey(path: "/v/shown.vault", retired: 1_780_000_000), status: 7, hint: true,
                                shows: ["/v/shown.vault is sealed under a file key that was retired", "2026-05-28 20:26:40 UTC",
                                        "readable by whoever lost access", "nothing was written"])
        case .refusedCopySuperseded:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .supersededFileKey(since: 1_780_000_000)), status: 7, hint: true,
                                shows: ["/v/shown.vault is sealed under a file key that a newer copy", "2026-05-28 20:26:40 UTC",
                                        "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .refusedCopyRetiredSlotKey:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .retiredSlotKey(slot: 2, retired: 1_780_000_000)), status: 7,
                                hint: true, shows: ["/v/shown.vault was opened through keyslot 2", "2026-05-28 20:26:40 UTC",
                                                    "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .refusedCopyUnknownLineage:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .unknownLineage(rotated: 1_780_000_000)), status: 7, hint: true,
                                shows: ["/v/shown.vault is sealed under a file key this machine has not seen", "2026-05-28 20:26:40 UTC",
                                        "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .mergeRefusedLowerKeyDerivation:
            // Status 2 as every refusal; 'vaultfile git merge' exits 1 for it, as for a conflict (GitMerge).
            return ErrorCaseRow(VaultError.mergeRefused(.lowerKeyDerivation(theirs: .pbkdf2SHA256(.init(iterations: 1)), ours: [.defaults])),
                                status: 2, hint: true, shows: ["PBKDF2-SHA256 1 iterations", "Argon2id 64 MiB, t=3, p=4", "below OWASP's minimum"])
        case .mergeRefusedConflictNameTaken:
            // Status 2 as every refusal; 'vaultfile git merge' exits 1 for it, as for a conflict (GitMerge).
            return ErrorCaseRow(VaultError.mergeRefused(.conflictNameTaken(entry: "db/password", parked: "db/password.conflict-theirs", holders: ["OURS"])),
                                status: 2, hint: true, shows: ["'db/password.conflict-theirs'", "OURS already holds", "nothing was merged",
                                                               "neither is lost"])
        case .staleCopy:
            let newer = SeenGenerations.Record(generation: 12, headerHash: [UInt8](repeating: 7, count: 32), seen: 1_780_000_000, path: "/v/newer.vault")
            return ErrorCaseRow(VaultError.staleCopy(path: "/v/shown.vault", generation: 11, newer: newer), status: 7, hint: true,
                                shows: ["/v/shown.vault is an older copy", "generation 11", "generation 12", "2026-05-28 20:26:40 UTC", "/v/newer.vault",
                                        "nothing was written"])
        case .generationCeiling:
            return ErrorCaseRow(VaultError.generationCeiling(generation: 1 << 63), status: 6, hint: true,
                                shows: ["generation 9223372036854775808", "pass 2^63", "nothing was written"])
        case .divergedCopy:
            let other = SeenGenerations.Record(generation: 12, headerHash: [UInt8](repeating: 7, count: 32), seen: 1_780_000_000, path: "/v/other.vault")
            return ErrorCaseRow(VaultError.divergedCopy(path: "/v/shown.vault", generation: 12, other: other), status: 7, hint: true,
                                shows: ["/v/shown.vault has diverged", "/v/other.vault", "both are generation 12", "2026-05-28 20:26:40 UTC",
                                        "nothing was written"])
        case .implausibleGeneration:
            return ErrorCaseRow(VaultError.implausibleGeneration(path: "/v/shown.vault", generation: UInt64.max, seen: nil), status: 7, hint: true,
                                shows: ["/v/shown.vault is at generation 18446744073709551615", "above 2^63", "not a plausible successor",
                                        "nothing was written"])
        case .implausibleJump:
            let seen = SeenGenerations.Record(generation: 12, headerHash: [UInt8](repeating: 7, count: 32), seen: 1_780_000_000, path: "/v/seen.vault")
            return ErrorCaseRow(VaultError.implausibleGeneration(path: "/v/shown.vault", generation: 5_000_000_000, seen: seen), status: 7,
                                hint: true, shows: ["generation 5000000000", "more than 2^32 past generation 12", "/v/seen.vault",
                                                    "not a plausible successor of what was seen here", "nothing was written"])
        case .io:
            return ErrorCaseRow(VaultError.io(operation: "shown-operation", path: "/v/shown.vault", errno: ENOSPC), status: 2, hint: false,
                                shows: ["shown-operation", "/v/shown.vault", "No space left on device"])
        case .notDurable:
            return ErrorCaseRow(VaultError.notDurable(path: "/v/shown.vault", errno: EIO), status: 2, hint: false,
                                shows: ["/v/shown.vault", "Input/output error"])
        }
    }
}

// MARK: - KDFError

enum KDFErrorKind: CaseIterable {
    case unknownAlgorithm, invalidParameters, invalidSaltLength, memoryOverCap, workOverCap, iterationsOverCap
    case workTotalOverCap, iterationsTotalOverCap, belowMinimum, derivationFailed

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
        case .belowMinimum: return ErrorCaseRow(KDFError.belowMinimum("(shown-settings)"), status: 64, hint: true, shows: ["(shown-settings)"])
        case .derivationFailed: return ErrorCaseRow(KDFError.derivationFailed("shown-reason"), status: 2, hint: false, shows: ["shown-reason"])
        }
    }
}

// MARK: - CLIError

enum CLIErrorKind: CaseIterable {
    case noPasswordSource, passwordSourceFailed, emptyPassword, passwordsDiffer, passwordCommandFailed, inputFailed
    case inputTooLarge, io, outputFailed, invalidArgument, cannotRun, refused, agentFailed
    case agentOfAnotherRelease, agentHoldsOtherKeys, agentChangeDenied
    case noMatch, binaryOnTerminal, emptyValue, unknownVerb, standardInputTaken, regexWorkLimit, folderNotEntry, noEntryOrFolder, nothingUnder
    case stateFolderUnsafe

    init(_ error: CLIError) {
        switch error {
        case .noPasswordSource: self = .noPasswordSource
        case .passwordSourceFailed: self = .passwordSourceFailed
        case .emptyPassword: self = .emptyPassword
        case .passwordsDiffer: self = .passwordsDiffer
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
        case .noMatch: self = .noMatch
        case .binaryOnTerminal: self = .binaryOnTerminal
        case .emptyValue: self = .emptyValue
        case .unknownVerb: self = .unknownVerb
        case .standardInputTaken: self = .standardInputTaken
        case .regexWorkLimit: self = .regexWorkLimit
        case .folderNotEntry: self = .folderNotEntry
        case .noEntryOrFolder: self = .noEntryOrFolder
        case .nothingUnder: self = .nothingUnder
        case .stateFolderUnsafe: self = .stateFolderUnsafe
        }
    }

    var row: ErrorCaseRow {
        switch self {
        case .noPasswordSource: return ErrorCaseRow(CLIError.noPasswordSource, status: 2, hint: true)
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
        case .cannotRun:
            return ErrorCaseRow(CLIError.cannotRun(command: "shown-command", errno: E2BIG), status: 64, hint: false,
                                shows: ["cannot run 'shown-command': its environment and arguments are larger than the system allows"])
        case .refused: return ErrorCaseRow(CLIError.refused("shown-reason", hint: "shown-hint"), status: 2, hint: true, shows: ["shown-reason"])
        case .agentFailed: return ErrorCaseRow(CLIError.agentFailed("shown-reason"), status: 2, hint: true, shows: ["shown-reason"])
        case .agentOfAnotherRelease:
            return ErrorCaseRow(CLIError.agentOfAnotherRelease(agentVersion: 1), status: 2, hint: false,
                                shows: ["the running agent is from another release: run 'vaultfile agent stop', then unlock again"])
        case .agentHoldsOtherKeys:
            return ErrorCaseRow(CLIError.agentHoldsOtherKeys(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault", "nothing changed"])
        case .agentChangeDenied:
            return ErrorCaseRow(CLIError.agentChangeDenied(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault", "nothing changed"])
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
        case .folderNotEntry:
            return ErrorCaseRow(CLIError.folderNotEntry(name: "shown/folder", count: 3), status: 1, hint: true,
                                shows: ["'shown/folder' is a folder of 3 entries, not an entry"])
        case .noEntryOrFolder:
            return ErrorCaseRow(CLIError.noEntryOrFolder("shown/name"), status: 1, hint: true, shows: ["no entry or folder named 'shown/name' (nothing under 'shown/name/')"])
        case .nothingUnder:
            return ErrorCaseRow(CLIError.nothingUnder(folder: "shown/", entry: nil), status: 1, hint: true, shows: ["nothing under 'shown/'"])
        case .stateFolderUnsafe:
            return ErrorCaseRow(CLIError.stateFolderUnsafe(.init(folder: "/v/state", owner: 65534, mode: 0o777, othersOwn: true)), status: 2,
                                hint: true, shows: ["the state folder /v/state", "uid 65534", "mode 0777", "nothing was written"])
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
