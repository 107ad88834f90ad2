#if canImport(Glibc)
import Glibc
#endif
import KDF
import SecureMemory

// MARK: - Errors of the vault library

/// Everything that can go wrong reading, opening, editing or writing a vault.
///
/// Messages say what happened, with the file, entry or numbers concerned; they never contain a
/// secret, and what to do next is the command line's to say.
public enum VaultError: CategorizedError, Equatable {
    // MARK: Reading and format
    /// The file does not start with the vault magic bytes.
    case notAVault(path: String)
    /// The file is a vault of a format version this build cannot read.
    case unsupportedVersion(major: UInt8, minor: UInt8)
    /// The vault uses a feature (cipher, flag, keyslot type, KDF) this build does not know.
    case unsupportedFeature(String)
    /// The header is structurally invalid or its checksum fails (accidental damage).
    case headerDamaged(String)
    /// No keyslot opens with the given password.
    case wrongPassword
    /// No keyslot opens with any of the unlock sources tried (named, never their contents); the
    /// vault also holds slots of `unknownTypes`, which this build skipped.
    case noKeyslotOpens(sources: [String], unknownTypes: [UInt8])
    /// A keyslot opened but the header MAC fails: the header was changed by someone without the key.
    case headerTampered
    /// A file key given whole (by the agent) is not this vault's: the header MAC does not verify under it.
    case fileKeyRejected
    /// A payload chunk failed to authenticate or the stream is malformed (0-based chunk index).
    case payloadDamaged(chunk: Int, reason: String)
    /// The decrypted contents are malformed.
    case contentsDamaged(String)

    // MARK: Model
    /// An entry name or field name breaks the naming rules.
    case invalidName(String)
    /// No entry (or field) with this name.
    case entryNotFound(String)
    /// The entry exists but has no field `field`; `available` are the fields it has, sorted.
    case fieldNotFound(entry: String, field: String, available: [String])
    /// A template refers to an entry (or field) the vault lacks.
    case referenceNotFound(String, line: Int)
    /// An entry with this name exists already.
    case entryExists(String)
    /// A new name is the same text as an existing entry's name in another Unicode form.
    case nameTwin(name: String, existing: String)
    /// Two entries map to one environment variable name (`exec`, dotenv export).
    case environmentVariableClash(String, String, variable: String)
    /// An import file or template is malformed (the message names the line).
    case malformedInput(String)
    /// A documented size or count limit was exceeded.
    case limitExceeded(String)
    /// Another tool's encrypted file (ansible-vault, sops) does not open with `what` (e.g. "the
    /// vault password"): its authentication tag does not verify under the key that secret gives.
    case sourceSecretRejected(file: String, what: String)
    /// A passphrase-protected identity (`source`) does not decrypt with the passphrase given
    /// (`tries` of them, typed or read); nothing was tried on the vault with it.
    case identityPassphraseWrong(source: String, tries: Int)
    /// A passphrase-protected identity (`source`) asks its KDF for more work than this build runs
    /// (`asked` `unit`, e.g. 100000 "bcrypt-pbkdf rounds", over `limit`): refused before any work.
    case identityWorkOverCap(source: String, unit: String, asked: UInt64, limit: UInt64)
    /// Another tool's encrypted file (ansible-vault, sops) fails a check after it opened: its
    /// values or its MAC do not authenticate, or its plaintext is malformed (`why`).
    case sourceDamaged(file: String, why: String)
    /// The encrypted temporary file of an import's sorted runs, in `folder`, does not read back as
    /// it was written (`part` of it): changed on disk (another process, the disk) while the import
    /// ran; nothing was imported.
    case importRunsDamaged(folder: String, part: String)
    /// An export's format cannot hold something of the vault (`why`: the entry named, never a
    /// value; e.g. a name XML 1.0 cannot hold in a KDBX file); nothing was written.
    case notExportable(format: String, why: String)

    // MARK: History
    /// The command needs entry history and this vault keeps none (`history --enable` turns it on).
    case historyOff
    /// The entry has fewer earlier versions than the revision asked for.
    case revisionNotFound(entry: String, revision: Int, available: Int)

    // MARK: Keyslots
    /// No keyslot has this id or label.
    case slotNotFound(String)
    /// Rotating the file key would drop slots it cannot re-wrap (v1 password slots that did not
    /// unlock, slots of unknown types), each described.
    case rotationBlocked(slots: [String])
    /// A change to the keyslots that cannot be made (the message says why).
    case slotChangeRefused(String)
    /// A label prefix (or a repeated label) names several keyslots; each candidate as `ID (kind, label)`.
    case slotNameAmbiguous(name: String, candidates: [String])
    /// A signed vault (format 1.3) would be sealed, or a slot attested, with nothing to sign: it was
    /// opened by a file key alone (no slot's secret, no delegation), or by a slot that cannot sign.
    case noSealSigner
    /// A signed vault opened by a slot that has no signing key (at `slot`: a post-quantum slot,
    /// type 8, or an age plugin slot, type 9; `kind` names it) would be sealed or a slot attested.
    /// `signers` is how many of the vault's slots can sign (a member holding one can write).
    case slotCannotSign(slot: Int, kind: String, signers: Int)
    /// The signer of a signed seal (the agent, or a slot's key) failed; nothing was written.
    case sealSigningFailed(String)

    // MARK: Storage
    /// The vault file does not exist.
    case vaultMissing(path: String)
    /// The vault path names a directory, a named pipe, a device or a socket, not a file.
    case notARegularFile(path: String, kind: FileKind)
    /// Creating a vault where a file already exists.
    case vaultExists(path: String)
    /// The lock was not acquired in time; `holder` names the process that held it, when known.
    case busy(lockPath: String, seconds: Double, holder: LockHolder? = nil)
    /// The vault changed on disk since it was read (a writer that ignored the lock).
    case changedOnDisk(path: String)
    /// A merge cannot proceed (different vaults, a side the password does not open).
    case mergeRefused(MergeRefusal)
    /// A write to a copy older than one this machine has seen (`newer`); nothing was written.
    case staleCopy(path: String, generation: UInt64, newer: SeenRecord)
    /// A write to a copy sealed under a file key retired on this machine (at `retired`, seconds
    /// since 1970) by a rotation of a newer copy; nothing was written.
    case sealedUnderRetiredKey(path: String, retired: Int64)
    /// A write to a copy of the generation seen here whose header differs (`other`): two copies
    /// were each changed from one older copy; nothing was written.
    case divergedCopy(path: String, generation: UInt64, other: SeenRecord)
    /// A write to a copy whose generation is no plausible successor (above the ceiling, 2^63, or
    /// more than 2^32 past `seen`, the record of this machine); nothing was written.
    case implausibleGeneration(path: String, generation: UInt64, seen: SeenRecord?)
    /// A seal of the vault at `generation` would pass the ceiling (2^63) no writer seals above; nothing was written.
    case generationCeiling(generation: UInt64)
    /// A write to a copy this machine does not take for the members' (`LineageRefusal`: a
    /// superseded file key, a retired slot key, another lineage than the rotation run here); nothing was written.
    case refusedCopy(path: String, why: LineageRefusal)
    /// A write to a copy this machine does not trust as written by the vault's members (or a
    /// program handed its values: `exec`, `inject`), for `why` (`TrustFinding`); nothing was written.
    case untrustedCopy(path: String, why: [TrustFinding])
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The new vault was renamed into place but the directory could not be synced.
    case notDurable(path: String, errno: Int32)

    /// Whether a write failed for want of room: the file system is full, or the user's quota is.
    public var isOutOfSpace: Bool {
        guard case .io(_, _, let code) = self else { return false }
        return code == ENOSPC || code == EDQUOT
    }

    public var description: String {
        switch self {
        case .notAVault(let path): return "\(path) is not a vaultfile vault (unknown magic bytes)"
        case .unsupportedVersion(let major, let minor):
            return "this vault uses format version \(major).\(minor), which this vaultfile cannot read"
        case .unsupportedFeature(let feature): return "this vault uses \(feature), which this vaultfile cannot read"
        case .headerDamaged(let why): return "the vault header is damaged: \(why)"
        case .wrongPassword: return "wrong password: no keyslot of the vault opens with it"
        case .noKeyslotOpens(let sources, let unknownTypes):
            let skipped = unknownTypes.isEmpty ? "" : "; it also has keyslots of type \(unknownTypes.map(String.init).joined(separator: ", ")), "
                + "which this vaultfile does not know and skipped"
            return "no keyslot of the vault opens with \(sources.joined(separator: ", "))" + skipped
        case .headerTampered: return "the vault header fails authentication: it was modified without the key"
        case .fileKeyRejected: return "the file key given does not open this vault (its header MAC does not verify under it)"
        case .payloadDamaged(let chunk, let why): return "the vault contents are damaged at chunk \(chunk): \(why)"
        case .contentsDamaged(let why): return "the decrypted vault contents are malformed: \(why)"
        case .invalidName(let why): return "invalid name: \(why)"
        case .entryNotFound(let name): return "no entry named '\(name)'"
        case .fieldNotFound(let entry, let field, let available):
            let fields = available.isEmpty ? "it has no fields" : "its fields: \(available.joined(separator: ", "))"
            return "the entry '\(entry)' has no field '\(field)'; \(fields)"
        case .referenceNotFound(let name, let line):
            return "the template refers to '\(name)' on line \(line), and the vault has no such \(name.contains("#") ? "entry or field" : "entry")"
        case .entryExists(let name): return "an entry named '\(name)' exists already"
        case .nameTwin(let name, let existing):
            return "'\(name)' would be a second entry beside '\(existing)': the two names differ only in their Unicode form "
                + "(\(EntryName.spelledOut(name)) and \(EntryName.spelledOut(existing)))"
        case .environmentVariableClash(let first, let second, let variable):
            return "'\(first)' and '\(second)' both map to the environment variable \(variable)"
        case .limitExceeded(let why): return "limit exceeded: \(why)"
        case .sourceSecretRejected(let file, let what): return "\(file) does not open with \(what): its authentication tag does not verify under it; nothing was imported"
        case .identityPassphraseWrong(let source, let tries):
            return "the passphrase does not decrypt the protected key of \(source)" + (tries > 1 ? " (\(tries) tries)" : "") + "; no keyslot was tried with it"
        case .identityWorkOverCap(let source, let unit, let asked, let limit):
            return "\(source) asks for \(asked) \(unit) to derive its key; vaultfile runs at most \(limit), so it was refused before any work"
        case .sourceDamaged(let file, let why): return "\(file) is damaged or was modified: \(why); nothing was imported"
        case .importRunsDamaged(let folder, let part):
            return "the import's temporary file in \(folder) is damaged or was modified: \(part) does not read back as it was written; nothing was imported"
        case .notExportable(let format, let why): return "a \(format) export cannot hold \(why); nothing was written"
        case .historyOff: return "this vault keeps no history of its entries"
        case .revisionNotFound(let entry, let revision, let available):
            let kept = available == 0 ? "no earlier version" : available == 1 ? "1 earlier version" : "\(available) earlier versions"
            return "'\(entry)' has no revision \(revision): its history holds \(kept)"
        case .slotNotFound(let name): return "no keyslot with the id, key or label '\(name)'"
        case .slotNameAmbiguous(let name, let candidates):
            return "'\(name)' names \(candidates.count) keyslots: \(candidates.joined(separator: ", ")); nothing was changed"
        case .rotationBlocked(let slots):
            return "rotating the file key would drop \(slots.joined(separator: " and ")), which cannot be re-wrapped without its own secret; nothing was changed"
        case .slotChangeRefused(let why): return why
        case .sealSigningFailed(let why): return "signing the seal failed: \(why); nothing was written"
        case .noSealSigner:
            return "this vault is signed, and nothing that opened it can sign its next seal (no slot's secret, no agent delegation); nothing was written"
        case .slotCannotSign(let slot, let kind, _):
            return "this vault is signed, and keyslot \(slot), which opened it, is \(kind): "
                + "such a slot cannot sign seals, so nothing was written"
        case .malformedInput(let why): return why
        case .vaultMissing(let path): return "no vault at \(path)"
        case .notARegularFile(let path, let kind): return "\(path) is \(kind.rawValue), not a vault file"
        case .vaultExists(let path): return "\(path) exists already; refusing to overwrite it"
        case .busy(let lockPath, let seconds, let holder):
            return "the vault is busy: \(holder.map { "\($0) holds" } ?? "another vaultfile process holds") \(lockPath) (waited \(seconds) s)"
        case .changedOnDisk(let path):
            return "\(path) changed on disk while it was being edited; nothing was written"
        case .mergeRefused(let refusal): return refusal.description
        case .staleCopy(let path, let generation, let newer):
            return "\(path) is an older copy: generation \(generation), but generation \(newer.generation) of this vault was seen here on "
                + "\(newer.seenText) (at \(newer.path)); writing to it would lose the newer copy's changes, so nothing was written "
                + "(copies of one vault, from cp, git or a backup, share its vault id: each is taken as an older or newer state of it)"
        case .sealedUnderRetiredKey(let path, let retired):
            return "\(path) is sealed under a file key that was retired here on \(utcText(seconds: retired)) ('slot rm', 'rekey' or "
                + "'passwd' on a newer copy): new secrets written there would be readable by whoever lost access then, so nothing was written"
        case .divergedCopy(let path, let generation, let other):
            return "\(path) has diverged from the copy seen here on \(other.seenText) (at \(other.path)): both are generation \(generation) "
                + "with different contents, so two copies were each changed; writing to this one would leave the other's changes "
                + "behind, so nothing was written"
        case .implausibleGeneration(let path, let generation, let seen):
            return "\(path) is at generation \(generation), " + Generations.implausibility(of: generation, seen: seen)
                + "; it is not a plausible successor of what was seen here, so nothing was written"
        case .generationCeiling(let generation):
            return "the vault is at generation \(generation); another write would pass 2^63, the largest generation a writer seals, "
                + "so nothing was written"
        case .untrustedCopy(let path, let why):
            return "\(path) is not trusted as a copy written by the vault's members: " + TrustFinding.joined(why)
                + "; nothing was written, and no value was handed to a program"
        case .refusedCopy(let path, let why):
            return why.describing(path) + "; nothing was written"
        case .io(let operation, let path, let code): return "\(operation) \(path) failed: \(errnoText(code))"
        case .notDurable(let path, let code):
            return "\(path) was replaced, but syncing its directory failed (\(errnoText(code))); the change may not survive a power loss"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .entryNotFound, .fieldNotFound, .referenceNotFound: return .notFound
        case .wrongPassword, .noKeyslotOpens, .fileKeyRejected, .noSealSigner, .sourceSecretRejected: return .wrongPassword
        case .identityPassphraseWrong: return .wrongPassword
        case .identityWorkOverCap: return .overLimit
        case .slotNotFound, .revisionNotFound: return .notFound
        case .historyOff, .notExportable: return .refused
        case .rotationBlocked, .slotChangeRefused, .slotNameAmbiguous, .sealSigningFailed, .slotCannotSign: return .refused
        case .notAVault, .headerDamaged, .headerTampered, .payloadDamaged, .contentsDamaged, .sourceDamaged, .importRunsDamaged: return .damaged
        case .unsupportedVersion, .unsupportedFeature: return .unsupported
        case .busy: return .busy
        case .limitExceeded, .generationCeiling: return .overLimit
        case .staleCopy, .sealedUnderRetiredKey, .divergedCopy, .implausibleGeneration, .refusedCopy, .untrustedCopy: return .stale
        case .invalidName: return .invalidArgument
        case .malformedInput: return .invalidInput
        case .entryExists, .nameTwin, .environmentVariableClash, .vaultExists, .changedOnDisk, .mergeRefused: return .conflict
        case .vaultMissing, .notARegularFile, .io, .notDurable: return .io
        }
    }

    // MARK: File kinds

    /// What a path that is not a regular file names, as a message says it.
    public enum FileKind: String, Equatable, Sendable {
        case directory = "a directory"
        case namedPipe = "a named pipe"
        case characterDevice = "a character device"
        case blockDevice = "a block device"
        case socket = "a socket"
        case unknown = "a special file"

        /// The kind of file `mode` (`st_mode`) describes.
        package init(mode: mode_t) {
            switch mode & S_IFMT {
            case S_IFDIR: self = .directory
            case S_IFIFO: self = .namedPipe
            case S_IFCHR: self = .characterDevice
            case S_IFBLK: self = .blockDevice
            case S_IFSOCK: self = .socket
            default: self = .unknown
            }
        }
    }

    // MARK: Merge refusals

    /// Why three files cannot be merged.
    public enum MergeRefusal: Equatable, Sendable, CustomStringConvertible {
        /// BASE, OURS and THEIRS do not have one vault id: they are not versions of one vault.
        case unrelatedVaults
        /// The password opens the other sides but not these (each named as "ROLE at path"), whose
        /// keyslots differ from BASE's: the password was changed on that side. `tried` names the
        /// unlock sources (never their contents); `[MergeRefusal.password]` when only a password was.
        case passwordFails(sides: [String], tried: [String] = [MergeRefusal.password])
        /// The password opens none of the three files (each named as "ROLE at path"): a wrong password.
        case passwordOpensNone(sides: [String], tried: [String] = [MergeRefusal.password])
        /// The password opens `opens` but not `fails`, among them BASE: the password was changed on
        /// the sides it opens (their keyslots differ from BASE's), and BASE needs the one from before.
        case passwordOpensOnly(opens: [String], fails: [String], tried: [String] = [MergeRefusal.password])
        /// Their side changed the keyslots to a KDF lower than ours (`theirs`, against our password slots' `ours`).
        case lowerKeyDerivation(theirs: KDFParameters, ours: [KDFParameters])
        /// A conflict in `entry` would park their version at `parked`, which `holders` ("OURS",
        /// "THEIRS") already hold as an entry of their own (an earlier conflict left unresolved):
        /// parking there would lose one of the two.
        case conflictNameTaken(entry: String, parked: String, holders: [String])
        /// The slots the merge keeps (`keptBy`'s) hold keyslot `slot` ('`label`'), whose key
        /// `removedBy` removed at `generation`: merged, the removal would be undone (issue 40).
        case removedKeyKept(slot: Int, label: String, keptBy: String, removedBy: String, generation: UInt64)

        /// How the password source is named among the unlock sources tried.
        public static let password = "the password"

        /// The unlock sources as a message names them when they are more than the password, e.g.
        /// `the unlock sources tried (--identity a.txt, the password)`; nil when only a password was tried.
        public static func sources(_ tried: [String]) -> String? {
            guard tried != [password] else { return nil }
            var unique: [String] = []
            for source in tried where !unique.contains(source) { unique.append(source) }
            return unique.count == 1 ? "the unlock source tried (\(unique[0]))" : "the unlock sources tried (\(unique.joined(separator: ", ")))"
        }

        public var description: String {
            switch self {
            case .passwordFails(let sides, let tried) where Self.sources(tried) != nil:
                let place = sides.count == 1 ? "that side" : "each of those sides"
                return "no keyslot of \(sides.joined(separator: " nor ")) opens with \(Self.sources(tried)!); its keyslots were changed on \(place)"
            case .passwordOpensNone(let sides, let tried) where Self.sources(tried) != nil:
                return "no keyslot opens with \(Self.sources(tried)!) in any of \(sides.joined(separator: ", ")), the versions being merged"
            case .passwordOpensOnly(let opens, let fails, let tried) where Self.sources(tried) != nil:
                let changed = opens.count == 1 ? "that side" : "those sides"
                return "with \(Self.sources(tried)!), \(opens.joined(separator: " and ")) open\(opens.count == 1 ? "s" : "") but "
                    + "\(fails.joined(separator: " nor ")) do\(fails.count == 1 ? "es" : "") not: "
                    + "the keyslots were changed on \(changed) since BASE, which needs a key from before"
            case .unrelatedVaults:
                return "OURS, THEIRS and BASE are not the same vault (vault ids differ); refusing to merge two unrelated vaults"
            case .passwordFails(let sides, _):
                let place = sides.count == 1 ? "that side" : "each of those sides"
                return "the password does not open \(sides.joined(separator: " nor ")); the password was changed on \(place)"
            case .passwordOpensNone(let sides, _):
                return "wrong password: it opens none of \(sides.joined(separator: ", ")), the three versions being merged"
            case .passwordOpensOnly(let opens, let fails, _):
                let changed = opens.count == 1 ? "that side" : "those sides"
                return "the password opens \(opens.joined(separator: " and ")) but not \(fails.joined(separator: " nor ")): "
                    + "it was changed on \(changed) since BASE, which needs the password from before"
            case .removedKeyKept(let slot, let label, let keptBy, let removedBy, let generation):
                let named = label.isEmpty ? "keyslot \(slot)" : "keyslot \(slot) ('\(label)')"
                return "\(removedBy) removed the key that \(keptBy)'s \(named) holds (at generation \(generation)), and the merge keeps "
                    + "\(keptBy)'s keyslots: merged, the removal would be undone; nothing was merged"
            case .conflictNameTaken(let entry, let parked, let holders):
                return "a conflict in '\(EntryName.escapingFormatCharacters(entry))' needs '\(EntryName.escapingFormatCharacters(parked))' "
                    + "for their side's version, but \(holders.joined(separator: " and ")) already hold\(holders.count == 1 ? "s" : "") "
                    + "an entry of that name (a conflict not resolved before?); nothing was merged, so neither is lost"
            case .lowerKeyDerivation(let theirs, let ours):
                let floor = theirs.meetsRecommendedMinimum ? "" : ", below OWASP's minimum"
                return "THEIRS (the branch being merged) lowers the key derivation from \(ours.map(\.description).joined(separator: " and ")) "
                    + "to \(theirs)\(floor); the merge stopped and OURS was left as it was"
            }
        }
    }
}

/// `strerror(3)` text for an errno value.
package func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}
