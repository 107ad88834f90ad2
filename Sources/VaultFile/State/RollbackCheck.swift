import VaultFormat
import VaultModel

// MARK: - The rollback check of one command

/// Compares the vault a command opens with what this machine has seen of it, refuses a write
/// to an older, diverged or implausible copy, and records the newest plausible generation seen
/// (docs/SECURITY.md, "Rollback"; the generation steps are in RollbackCheck+Generations.swift);
/// recognises a copy sealed under a file key retired here, refuses a write to it, and records
/// the key a rotation retires (docs/SECURITY.md, "What recipients cannot promise").
///
/// The one pipeline (`VaultStore.read`, `edit`, `replaceKeys`: Storage/VaultStore+Access.swift) calls it: `opened` after a
/// successful unlock, `willWrite` just before the new version is written (nothing is on disk
/// yet), and `finished` once the command is over, with the header of the file now on disk, so
/// that a write records its new generation (and a rotation the key it retired) only after its
/// rename. What the user should know is collected in `findings` and `problem`, for the command
/// line to show. Inside a git work tree a check is made with `comparesGenerations` false: the
/// retired keys still count there. The git integration (textconv, the merge driver) runs without one.
public final class RollbackCheck: @unchecked Sendable {
    // @unchecked: one command on one thread uses it, then reads what it found.

    /// Something the user should be told.
    public enum Finding: Equatable, Sendable, CustomStringConvertible {
        /// A copy older than one seen here was opened, and nothing was written to it.
        case olderCopy(path: String, generation: UInt64, newer: SeenGenerations.Record)
        /// A copy of the generation seen here, with another header: two copies of one older copy were each changed.
        case diverged(path: String, generation: UInt64, other: SeenGenerations.Record)
        /// A copy whose generation is no plausible successor of what was seen here (`seen`; of
        /// anything, without a record): not recorded, and nothing was written to it.
        case implausible(path: String, generation: UInt64, seen: SeenGenerations.Record?)
        /// A copy sealed under a file key retired here (at `retired`, seconds since 1970), and nothing was written to it.
        case retiredKey(path: String, retired: Int64)

        public var description: String {
            switch self {
            case .olderCopy(let path, let generation, let newer):
                return "\(path) is an older copy: generation \(generation), but generation \(newer.generation) of this vault "
                    + "was seen here on \(newer.seenText) (at \(newer.path))"
            case .diverged(let path, let generation, let other):
                return "\(path) has diverged from the copy seen here on \(other.seenText) (at \(other.path)): both are generation "
                    + "\(generation) with different contents, so two copies were each changed"
            case .implausible(let path, let generation, let seen):
                return "\(path) is at generation \(generation), \(Generations.implausibility(of: generation, seen: seen)): it is not a "
                    + "plausible successor of what was seen here, so it is not recorded and makes no other copy older"
            case .retiredKey(let path, let retired):
                return "\(path) is sealed under a file key that was retired here on \(utcText(seconds: retired)) ('slot rm', 'rekey' or "
                    + "'passwd' on a newer copy): whoever lost access then may still open this copy"
            }
        }
    }

    /// The records consulted and updated.
    public let seen: SeenGenerations
    /// Whether a write to an older copy is let through (then sealed past the recorded generation).
    public let allowRollback: Bool
    /// Whether generations are compared and recorded (off inside a git work tree); retired keys always are.
    public let comparesGenerations: Bool
    /// The file keys retired on this machine, in the state folder of `seen`.
    public let retiredKeys: RetiredKeys
    /// What the user should be told, in order.
    public internal(set) var findings: [Finding] = []
    /// The first problem with the state folder, if any: the check did what it could without it.
    public private(set) var problem: StateFolder.Problem?

    /// The header as unlocked, and how it compared with the record (RollbackCheck+Generations.swift).
    private var openedHeader: VaultHeader?
    var comparison: SeenGenerations.Comparison = .unseen
    /// Whether a write was refused: its error says it all, and the record stays above the file.
    var refused = false
    /// The id of the file key unlocked, and when it was retired here (nil: it was not).
    private var openedKeyID: [UInt8] = []
    private var openedKeyRetired: Int64?
    /// Whether the write under way seals a new file key (a rotation), which retires the one unlocked.
    private var rotating = false

    /// A check against the records in `seen`; with `comparesGenerations` false (a vault inside a
    /// git work tree) only the retired file keys are checked.
    public init(seen: SeenGenerations, allowRollback: Bool = false, comparesGenerations: Bool = true) {
        self.seen = seen
        self.allowRollback = allowRollback
        self.comparesGenerations = comparesGenerations
        self.retiredKeys = RetiredKeys(state: seen.state)
    }

    // MARK: The steps of one command

    /// After a successful unlock: compares `unlocked`'s header with the record of its vault, and
    /// looks its file key up among the retired ones.
    func opened(_ unlocked: UnlockedVault) {
        let header = unlocked.header
        openedHeader = header
        compareGeneration(of: header)
        openedKeyID = unlocked.fileKeyID
        do {
            openedKeyRetired = try retiredKeys.retiredAt(openedKeyID, vault: header.vaultID)
        } catch {
            problem = problem ?? error
        }
    }

    /// Before `unlocked` is sealed over the file at `path`. A new file key (a rotation) is always
    /// let through: it is the way out of a retired key. Any other write under a retired key is
    /// refused (`sealedUnderRetiredKey`, nothing written). A write to an older, diverged or
    /// implausible copy is refused unless `allowRollback` (`checkGeneration`).
    func willWrite(_ unlocked: UnlockedVault, path: String) throws(VaultError) {
        rotating = unlocked.fileKeyID != openedKeyID
        if let retired = openedKeyRetired, !rotating {
            refused = true
            throw .sealedUnderRetiredKey(path: path, retired: retired)
        }
        try checkGeneration(of: unlocked, path: path)
    }

    /// Once the command is over: `header` is the one of the file now at `path` (the new one after a
    /// write, else the one unlocked). Says what the user should know and raises the record.
    func finished(onDisk header: VaultHeader, path: String) {
        guard let opened = openedHeader, !refused else { return }
        openedHeader = nil
        let wrote = header != opened
        if wrote && rotating {
            // After the rename, never before: a rotation killed earlier leaves the old key current.
            do {
                try retiredKeys.retire(openedKeyID, vault: opened.vaultID)
            } catch {
                problem = problem ?? error
            }
        } else if let retired = openedKeyRetired {
            findings.append(.retiredKey(path: path, retired: retired))
        }
        finishGeneration(opened: opened, onDisk: header, wrote: wrote, path: path)
    }

    // MARK: The state folder

    /// The record of vault `vaultID`, or nil when none is (or the records cannot be read: a problem).
    func recorded(_ vaultID: [UInt8]) -> SeenGenerations.Record? {
        do {
            return try seen.record(for: vaultID)
        } catch {
            problem = problem ?? error
            return nil
        }
    }

    /// Raises the record to `header` when it is higher than the one recorded (`SeenGenerations.note`).
    func record(_ header: VaultHeader, path: String) {
        do {
            try seen.note(header, path: path)
        } catch {
            problem = problem ?? error
        }
    }
}
