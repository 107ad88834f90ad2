import VaultFormat
import VaultModel

// MARK: - The rollback check of one command

/// Compares the vault a command opens with what this machine has seen of it, refuses a write
/// to an older, diverged or implausible copy, and records the newest plausible generation seen
/// (docs/SECURITY.md, "Rollback"; the generation steps are in RollbackCheck+Generations.swift);
/// recognises a copy sealed under a file key retired here, or that a removed member may have
/// planted (the key lineage: KeyLineage.swift, RollbackCheck+Lineage.swift), refuses a write to
/// it, and records the keys a rotation retires and a copy taken brings (docs/SECURITY.md, "What
/// recipients cannot promise").
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
        /// A copy the key lineage refuses (KeyLineage.swift), read, and nothing was written to it or recorded of it.
        case refusedCopy(path: String, why: LineageRefusal)
        /// A side of a merge run here that the key lineage refused: the result left its keys out.
        case mergeLeftOut(RefusedMergeSide)
        /// A copy the key lineage refused for `why`, taken with `--accept-rotation`: this machine now takes it for the vault's.
        case acceptedCopy(path: String, why: LineageRefusal)
        /// A copy this machine does not trust as its members' (`TrustFinding`), read, and nothing was written to it or recorded of it.
        case untrustedCopy(path: String, why: [TrustFinding])
        /// An untrusted copy taken for this command with `--allow-untrusted`: nothing of it was pinned.
        case untrustedTaken(path: String, why: [TrustFinding])
        /// A signed vault seen here for the first time: its members are pinned, the signer's fingerprint shown once.
        case pinnedOnFirstOpen(path: String, signer: String)
        /// A vault post-quantum when last opened here that no longer is (or another vault, not post-quantum, where one
        /// was seen): nothing of it is recorded, so it is found again on every open until accepted (`acceptClassical`).
        case noLongerPostQuantum(QuantumLoss)
        /// Such a loss accepted (`acceptClassical`): this machine now takes the vault as not post-quantum.
        case classicalAccepted(path: String)

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
            case .refusedCopy(let path, let why):
                return why.describing(path)
            case .mergeLeftOut(let side):
                return side.description
            case .acceptedCopy(let path, let why):
                return "--accept-rotation: this machine now takes \(path) for the vault's copy, and the keys it holds for its lineage; "
                    + "it was refused because " + why.describing(path)
            case .untrustedCopy(let path, let why):
                return "\(path) is not trusted as a copy written by the vault's members: " + TrustFinding.joined(why)
            case .untrustedTaken(let path, let why):
                return "--allow-untrusted: \(path) was used though it is not trusted (nothing of it was pinned): " + TrustFinding.joined(why)
            case .pinnedOnFirstOpen(let path, let signer):
                return "\(path) is a signed vault seen here for the first time: its members are now pinned on this machine; it was signed by "
                    + "\(signer) (compare this fingerprint with a member's 'vaultfile slot list')"
            case .noLongerPostQuantum(let loss):
                return loss.description
            case .classicalAccepted(let path):
                return "this machine now takes \(path) as not post-quantum: its classical slots are no longer warned about (until it is "
                    + "post-quantum again and then loses it once more)"
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
    public internal(set) var problem: StateFolder.Problem?
    /// Whether a copy refused only as of another lineage than the one seen here is taken, and adopted
    /// (`--accept-rotation`, after `slot list`; KeyLineage.swift).
    public var acceptRotation = false
    /// What the key lineage found of the vault unlocked (RollbackCheck+Lineage.swift).
    var lineage = LineageState()
    /// The members trusted per vault, in the state folder of `seen` (MemberTrust.swift).
    public let memberTrust: MemberTrust
    /// Whether an untrusted copy is used anyway, for this command only (`--allow-untrusted`): nothing of it is pinned.
    public var allowUntrusted = false
    /// What the judgement of the members found of the vault unlocked (RollbackCheck+Trust.swift).
    var trust = TrustState()
    /// The judgement of the members on the copy the last command step unlocked, nil for none (kept after `finished`).
    public internal(set) var lastJudgement: MemberTrust.Judgement?
    /// The post-quantum status taken per vault, in the state folder of `seen` (QuantumRecords.swift).
    public let quantumRecords: QuantumRecords
    /// Whether a vault that was post-quantum here and no longer is is taken as it is (`slot list --accept-classical`
    /// any loss, `slot add --allow-classical` only the one its own write makes): the loss is recorded instead of warned
    /// about (RollbackCheck+Quantum.swift).
    public var acceptClassical = ClassicalAcceptance.nobody
    /// The vault unlocked, and the one written over it: the one whose header is on disk names the slots of a `QuantumLoss`.
    private var openedVault: UnlockedVault?
    private var writtenVault: UnlockedVault?

    /// The header as unlocked, and how it compared with the record (RollbackCheck+Generations.swift).
    private var openedHeader: VaultHeader?
    var comparison: SeenGenerations.Comparison = .unseen
    /// Whether a write was refused: its error says it all, and the record stays above the file.
    var refused = false
    /// The id of the file key unlocked.
    private var openedKeyID: [UInt8] = []
    /// Whether the write under way seals a new file key (a rotation), which retires the one unlocked.
    private var rotating = false

    /// A check against the records in `seen`; with `comparesGenerations` false (a vault inside a
    /// git work tree) only the retired file keys are checked.
    public init(seen: SeenGenerations, allowRollback: Bool = false, comparesGenerations: Bool = true) {
        self.seen = seen
        self.allowRollback = allowRollback
        self.comparesGenerations = comparesGenerations
        self.retiredKeys = RetiredKeys(state: seen.state)
        self.memberTrust = MemberTrust(state: seen.state)
        self.quantumRecords = QuantumRecords(state: seen.state)
    }

    // MARK: The steps of one command

    /// After a successful unlock: compares `unlocked`'s header with the record of its vault, and
    /// judges its keys by the key lineage (retired and superseded file keys, retired slot keys,
    /// the key minted here: KeyLineage.swift).
    func opened(_ unlocked: UnlockedVault) {
        let header = unlocked.header
        openedHeader = header
        openedVault = unlocked
        writtenVault = nil
        compareGeneration(of: header)
        openedKeyID = unlocked.fileKeyID
        lineageOpened(unlocked)
        trustOpened(unlocked)
    }

    /// Before `unlocked` is sealed over the file at `path`. A new file key (a rotation) is let
    /// through under a retired or superseded file key: it is the way out of one. Any other write
    /// under a retired key is refused (`sealedUnderRetiredKey`, nothing written), and every write
    /// to a copy the key lineage refuses otherwise (`refusedCopy`), unless `acceptRotation` takes
    /// it. A write to an older, diverged or implausible copy is refused unless `allowRollback`
    /// (`checkGeneration`).
    func willWrite(_ unlocked: UnlockedVault, path: String) throws(VaultError) {
        rotating = unlocked.fileKeyID != openedKeyID
        // The members first: who wrote a copy says more than its keys (a removed member's planted copy is
        // also under a superseded file key, and rekey or --accept-rotation would be wrong steps for it).
        if let refusal = trustRefusal(writing: unlocked, path: path) ?? lineageRefusal(writing: unlocked, rotating: rotating, path: path) {
            refused = true
            throw refusal
        }
        try checkGeneration(of: unlocked, path: path)
        writtenVault = unlocked
    }

    /// Once the command is over: `header` is the one of the file now at `path` (the new one after a
    /// write, else the one unlocked). Says what the user should know and raises the record.
    func finished(onDisk header: VaultHeader, path: String) {
        guard let opened = openedHeader, let openedVault, !refused else { return }
        let vault = writtenVault.flatMap { $0.header == header ? $0 : nil } ?? openedVault
        openedHeader = nil
        (self.openedVault, writtenVault) = (nil, nil)
        let wrote = header != opened
        // Whether it is still post-quantum, found of every copy; recorded only of a copy taken (below).
        let quantum = quantumFinished(onDisk: header, opened: opened, unlocked: vault, path: path, wrote: wrote)
        // The members first: a copy not trusted is reported and records nothing (the lineage and its generation neither).
        guard trustFinished(wrote: wrote, path: path) else {
            lineage = LineageState()
            return
        }
        // The key lineage, after the rename (never before: a rotation killed earlier leaves the old
        // key current). A copy it refuses is reported and records nothing, its generation neither.
        guard lineageFinished(wrote: wrote, path: path) else { return }
        finishGeneration(opened: opened, onDisk: header, wrote: wrote, path: path)
        quantumRecord(quantum, vault: header.vaultID, path: path)
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
