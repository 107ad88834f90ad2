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
            + BreachListErrorKind.allCases.map(\.row) + AgeFileErrorKind.allCases.map(\.row) + SSHKeyErrorKind.allCases.map(\.row)
            + AgePluginClientErrorKind.allCases.map(\.row)
    }
}

// MARK: - VaultError

enum VaultErrorKind: CaseIterable {
    case notAVault, unsupportedVersion, unsupportedFeature, headerDamaged, wrongPassword, headerTampered, fileKeyRejected
    case payloadDamaged, contentsDamaged, invalidName, entryNotFound, fieldNotFound, referenceNotFound, entryExists, nameTwin
    case environmentVariableClash, malformedInput, limitExceeded, vaultMissing, notARegularFile, vaultExists, busy, changedOnDisk
    case mergeRefusedUnrelatedVaults, mergeRefusedPasswordFails, mergeRefusedPasswordOpensNone, mergeRefusedPasswordOpensOnly
    case mergeRefusedLowerKeyDerivation, mergeRefusedConflictNameTaken, mergeRefusedRemovedKeyKept, staleCopy, generationCeiling, io, notDurable
    case divergedCopy, implausibleGeneration, implausibleJump
    case mergeRefusedSourcesFail, mergeRefusedSourcesOpenNone, mergeRefusedSourcesOpenOnly, sealedUnderRetiredKey
    case refusedCopySuperseded, refusedCopyRetiredSlotKey, refusedCopyUnknownLineage, refusedCopyHoldsRetiredSlotKey
    case refusedWriteKeepsRetiredSlotKey, refusedWriteKeepsUnseenSlots, untrustedCopy
    case noKeyslotOpens, slotNotFound, rotationBlocked, slotChangeRefused, slotNameAmbiguous
    case historyOff, revisionNotFound
    case noSealSigner, sealSigningFailed, slotCannotSign
    case sourceSecretRejected, sourceDamaged, importRunsDamaged, notExportable
    case identityPassphraseWrong, identityWorkOverCap

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
        case .slotNameAmbiguous: self = .slotNameAmbiguous
        case .noSealSigner: self = .noSealSigner
        case .slotCannotSign: self = .slotCannotSign
        case .sealSigningFailed: self = .sealSigningFailed
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
        case .sourceSecretRejected: self = .sourceSecretRejected
        case .sourceDamaged: self = .sourceDamaged
        case .importRunsDamaged: self = .importRunsDamaged
        case .notExportable: self = .notExportable
        case .identityPassphraseWrong: self = .identityPassphraseWrong
        case .identityWorkOverCap: self = .identityWorkOverCap
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
        case .mergeRefused(.removedKeyKept): self = .mergeRefusedRemovedKeyKept
        case .staleCopy: self = .staleCopy
        case .sealedUnderRetiredKey: self = .sealedUnderRetiredKey
        case .generationCeiling: self = .generationCeiling
        case .divergedCopy: self = .divergedCopy
        case .implausibleGeneration(_, let generation, let seen):
            self = generation > Generations.ceiling || seen == nil ? .implausibleGeneration : .implausibleJump
        case .refusedCopy(_, .supersededFileKey): self = .refusedCopySuperseded
        case .refusedCopy(_, .retiredSlotKey): self = .refusedCopyRetiredSlotKey
        case .refusedCopy(_, .unknownLineage): self = .refusedCopyUnknownLineage
        case .refusedCopy(_, .holdsRetiredSlotKey): self = .refusedCopyHoldsRetiredSlotKey
        case .refusedCopy(_, .wouldKeepRetiredSlotKey): self = .refusedWriteKeepsRetiredSlotKey
        case .refusedCopy(_, .wouldKeepUnseenSlots): self = .refusedWriteKeepsUnseenSlots
        case .untrustedCopy: self = .untrustedCopy
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
        case .slotNameAmbiguous:
            return ErrorCaseRow(VaultError.slotNameAmbiguous(name: "shown-prefix", candidates: ["1 (recipient, shown-one)", "4 (keyfile, shown-two)"]),
                                status: 2, hint: true, shows: ["shown-prefix", "1 (recipient, shown-one)", "4 (keyfile, shown-two)"])
        case .noSealSigner: return ErrorCaseRow(VaultError.noSealSigner, status: 3, hint: true, shows: ["signed", "nothing was written"])
        case .slotCannotSign:
            return ErrorCaseRow(VaultError.slotCannotSign(slot: 5, kind: "an age plugin slot", signers: 2), status: 2, hint: true,
                                shows: ["keyslot 5", "an age plugin slot", "nothing was written"])
        case .sealSigningFailed:
            return ErrorCaseRow(VaultError.sealSigningFailed("shown-why"), status: 2, hint: false, shows: ["shown-why", "nothing was written"])
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
        case .sourceSecretRejected:
            return ErrorCaseRow(VaultError.sourceSecretRejected(file: "shown.yml", what: "the vault password"), status: 3, hint: true, shows: ["shown.yml"])
        case .sourceDamaged: return ErrorCaseRow(VaultError.sourceDamaged(file: "shown.yml", why: "shown-reason"), status: 4, hint: true, shows: ["shown.yml", "shown-reason"])
        case .importRunsDamaged:
            return ErrorCaseRow(VaultError.importRunsDamaged(folder: "/shown/dir", part: "chunk 3 of a run"), status: 4, hint: true,
                                shows: ["temporary file in /shown/dir", "chunk 3 of a run"])
        case .notExportable: return ErrorCaseRow(VaultError.notExportable(format: "KDBX", why: "shown-entry"), status: 2, hint: true, shows: ["KDBX", "shown-entry"])
        case .identityPassphraseWrong:
            return ErrorCaseRow(VaultError.identityPassphraseWrong(source: "--identity shown.key", tries: 3), status: 3, hint: true,
                                shows: ["--identity shown.key", "3 tries"])
        case .identityWorkOverCap:
            return ErrorCaseRow(VaultError.identityWorkOverCap(source: "--identity shown.key", unit: "bcrypt-pbkdf rounds", asked: 100_000, limit: 1_024),
                                status: 6, hint: true, shows: ["--identity shown.key", "100000 bcrypt-pbkdf rounds", "1024"])
        case .vaultMissing: return ErrorCaseRow(VaultError.vaultMissing(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault"])
        case .notARegularFile:
            return ErrorCaseRow(VaultError.notARegularFile(path: "/v/shown.vault", kind: .namedPipe), status: 2, hint: false,
                                shows: ["/v/shown.vault is a named pipe, not a vault file"])
        case .vaultExists: return ErrorCaseRow(VaultError.vaultExists(path: "/v/shown.vault"), status: 2, hint: true, shows: ["/v/shown.vault"])
        case .busy:
            return ErrorCaseRow(VaultError.busy(lockPath: "/v/shown.vault.lock", seconds: 2.5, holder: LockHolder(pid: 4242, program: "vaultfile")),
                                status: 5, hint: true, shows: ["/v/shown.vault.lock", "2.5", "another vaultfile process (pid 4242)"])
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
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .retiredSlotKey(slot: 2, retired: 1_780_000_000,
                                                                                                 fingerprint: "x25519:0123456789abcdef")), status: 7,
                                hint: true, shows: ["/v/shown.vault was opened through keyslot 2 (x25519:0123456789abcdef)", "2026-05-28 20:26:40 UTC",
                                                    "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .refusedCopyUnknownLineage:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .unknownLineage(rotated: 1_780_000_000, expected: ["x25519:0123456789abcdef"])),
                                status: 7, hint: true,
                                shows: ["/v/shown.vault is sealed under a file key this machine has not seen", "2026-05-28 20:26:40 UTC",
                                        "(x25519:0123456789abcdef)", "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .refusedCopyHoldsRetiredSlotKey:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .holdsRetiredSlotKey(
                slots: [0, 3], retired: 1_780_000_000, fingerprints: ["x25519:0123456789abcdef", "x25519:fedcba9876543210"])), status: 7, hint: true,
                                shows: ["/v/shown.vault holds keyslots 0 and 3 (x25519:0123456789abcdef, x25519:fedcba9876543210)",
                                        "2026-05-28 20:26:40 UTC", "may have been written by someone who no longer holds a slot", "nothing was written"])
        case .refusedWriteKeepsRetiredSlotKey:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .wouldKeepRetiredSlotKey(
                slots: [2], retired: 1_780_000_000, fingerprints: ["x25519:0123456789abcdef"])), status: 7, hint: true,
                                shows: ["writing /v/shown.vault would keep keyslot 2 (x25519:0123456789abcdef)", "2026-05-28 20:26:40 UTC",
                                        "nothing was written"])
        case .refusedWriteKeepsUnseenSlots:
            return ErrorCaseRow(VaultError.refusedCopy(path: "/v/shown.vault", why: .wouldKeepUnseenSlots(slots: [
                .init(index: 3, kind: "keyfile", label: "laptop", fingerprint: "x25519:0123456789abcdef")])), status: 7, hint: true,
                                shows: ["writing /v/shown.vault would give the new file key to keyslot 3 (keyfile 'laptop', "
                                        + "x25519:0123456789abcdef)", "which the copy taken here last does not hold", "nothing was written"])
        case .untrustedCopy:
            return ErrorCaseRow(VaultError.untrustedCopy(path: "/v/shown.vault", why: [.unknownSigner(fingerprint: "x25519:0123456789abcdef")]),
                                status: 7, hint: true, shows: ["/v/shown.vault is not trusted", "signed by x25519:0123456789abcdef",
                                                               "nothing was written"])
        case .mergeRefusedLowerKeyDerivation:
            // Status 2 as every refusal; 'vaultfile git merge' exits 1 for it, as for a conflict (GitMerge).
            return ErrorCaseRow(VaultError.mergeRefused(.lowerKeyDerivation(theirs: .pbkdf2SHA256(.init(iterations: 1)), ours: [.defaults])),
                                status: 2, hint: true, shows: ["PBKDF2-SHA256 1 iterations", "Argon2id 64 MiB, t=3, p=4", "below OWASP's minimum"])
        case .mergeRefusedConflictNameTaken:
            // Status 2 as every refusal; 'vaultfile git merge' exits 1 for it, as for a conflict (GitMerge).
            return ErrorCaseRow(VaultError.mergeRefused(.conflictNameTaken(entry: "db/password", parked: "db/password.conflict-theirs", holders: ["OURS"])),
                                status: 2, hint: true, shows: ["'db/password.conflict-theirs'", "OURS already holds", "nothing was merged",
                                                               "neither is lost"])
        case .mergeRefusedRemovedKeyKept:
            return ErrorCaseRow(VaultError.mergeRefused(.removedKeyKept(slot: 2, label: "mal", keptBy: "OURS", removedBy: "THEIRS", generation: 7)),
                                status: 2, hint: true, shows: ["THEIRS removed the key that OURS's keyslot 2 ('mal') holds", "generation 7",
                                                               "the removal would be undone", "nothing was merged"])
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
            // No room (ENOSPC): the hint says to free some (other errnos have none).
            return ErrorCaseRow(VaultError.io(operation: "shown-operation", path: "/v/shown.vault", errno: ENOSPC), status: 2, hint: true,
                                shows: ["shown-operation", "/v/shown.vault", "No space left on device"])
        case .notDurable:
            return ErrorCaseRow(VaultError.notDurable(path: "/v/shown.vault", errno: EIO), status: 2, hint: false,
                                shows: ["/v/shown.vault", "Input/output error"])
        }
    }
}
