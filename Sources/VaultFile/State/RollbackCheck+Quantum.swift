#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - A vault that stops being post-quantum

/// A vault that was post-quantum (fully or against outsiders) when last opened here and is no
/// longer, or another vault that is not, found where a post-quantum one was seen
/// (`RollbackCheck.Finding.noLongerPostQuantum`).
public struct QuantumLoss: Equatable, Sendable, CustomStringConvertible {
    /// The vault's path.
    public let path: String
    /// Its status when last opened here.
    public let was: PostQuantumStatus
    /// When that status was taken here (seconds since 1970).
    public let since: Int64
    /// The slots that make it classical now.
    public let classical: [SlotDescription]
    /// For another vault at the path: the id (hex) of the post-quantum vault last seen there; nil for the same vault.
    public let previousVaultID: String?
    /// This vault's id (hex).
    public let vaultID: String
    /// For a copy of a lower generation than the post-quantum one recorded (inside git, where the
    /// rollback check does not compare generations: a branch forked earlier, an old copy): this
    /// copy's generation and the recorded one; nil otherwise.
    public var older: (copy: UInt64, recorded: UInt64)? = nil

    public static func == (lhs: QuantumLoss, rhs: QuantumLoss) -> Bool {
        lhs.path == rhs.path && lhs.was == rhs.was && lhs.since == rhs.since && lhs.classical == rhs.classical
            && lhs.previousVaultID == rhs.previousVaultID && lhs.vaultID == rhs.vaultID && lhs.older?.copy == rhs.older?.copy
            && lhs.older?.recorded == rhs.older?.recorded
    }

    public var description: String {
        let words = was.words ?? "post-quantum"
        let slots = Self.named(classical)
        // Slots wrapped to a classical public key open for any harvester; with none, only password, keyfile or
        // recovery slots are left, whose public keys only members and former members know.
        let harvest = classical.isEmpty
            ? "a member or former member (who knows those slots' public keys) who keeps a copy written from now on and one day has "
                + "a quantum computer can open it"
            : "whoever keeps a copy written from now on (a git remote, a backup, a sync service) and one day has a quantum "
                + "computer can open it through \(classical.count == 1 ? "that slot" : "those slots")"
        if let previousVaultID {
            return "\(path) held a \(words) vault (id \(previousVaultID.prefix(16))…) when last opened here (\(utcText(seconds: since))); the "
                + "vault there now is another one (id \(vaultID.prefix(16))…), which is not post-quantum: \(slots); \(harvest); if you did "
                + "not put it there, it may be a copy planted to collect what you write into it"
        }
        let copy = older.map { " (this copy, generation \($0.copy), is older than the post-quantum one seen here, generation \($0.recorded): a "
            + "branch forked before it or an old copy)" } ?? ""
        // Derived slots alone: their public keys are in the encrypted metadata, so only what this copy's slots wrap is open to a member.
        let key = classical.isEmpty ? "" : ", and with the file key every copy sealed under it, the earlier post-quantum ones included, until a "
            + "rotation replaces the key"
        return "\(path) was \(words) when last opened here (\(utcText(seconds: since))) and no longer is\(copy): \(slots); \(harvest)\(key)"
    }

    /// "keyslot 2 (recipient, bob) is classical", "keyslots 2 (…) and 3 (…) are classical"; with
    /// no such slot, that no post-quantum slot is left.
    static func named(_ slots: [SlotDescription]) -> String {
        let each = slots.map { "\($0.index) (\($0.label.isEmpty ? $0.kind : "\($0.kind), \($0.label)"))" }
        guard let last = each.last else { return "it has no post-quantum slot left, only password, keyfile or recovery slots" }
        if each.count == 1 { return "keyslot \(last) is classical" }
        return "keyslots \(each.dropLast().joined(separator: ", ")) and \(last) are classical"
    }
}

extension RollbackCheck {
    /// Who takes a vault that stopped being post-quantum as it is (`acceptClassical`).
    public enum ClassicalAcceptance: Sendable {
        /// Nobody: every loss is warned about.
        case nobody
        /// Any loss found (`slot list --accept-classical`).
        case anyLoss
        /// Only a loss this command's own write made (`slot add --allow-classical`): the copy
        /// opened was post-quantum, the one written is not, and the write succeeded. A loss
        /// already in the copy opened (another member's) is warned about as on any command.
        case ownWrite
    }

    /// Once the command is over (`finished`), before the trust and lineage steps: compares the
    /// status of `header` (the file on disk) with the record of its vault, and finds a loss of
    /// post-quantum when the vault was post-quantum at a generation no higher than this copy's
    /// (at any generation when generations are not compared, inside git: there an older copy is
    /// no rollback check's to report); for a vault id with no post-quantum record, when another
    /// post-quantum vault was last taken at `path`. A copy the rollback check found older is its to
    /// report, and nothing is found of it; one at an implausible generation is never recorded (it
    /// would make every genuine copy older, and so silence the check); `wrote` says a write made
    /// the copy on disk the newest, over `opened`.
    /// `unlocked` (the vault whose header is on disk) names the classical slots. A loss `acceptClassical`
    /// takes is accepted instead (recorded by `quantumRecord`). Returns the record to write once the copy is taken, if any,
    /// and whether writing it accepts a loss.
    func quantumFinished(onDisk header: VaultHeader, opened: VaultHeader, unlocked: UnlockedVault, path: String,
                         wrote: Bool) -> (record: QuantumRecords.Record, accepting: Bool)? {
        if !wrote, case .older = comparison { return nil }
        var recordable = true
        if !wrote, case .implausible = comparison { recordable = false }
        let status = PostQuantumStatus(header.keyslots)
        let here = seen.absolute(path)
        let now = Int64(time(nil))
        let id = SeenGenerations.Record.hex(header.vaultID)
        var taken = QuantumRecords.Record(status: status, generation: header.generation, seen: now, path: here)
        let record: QuantumRecords.Record?
        do {
            record = try quantumRecords.record(of: header.vaultID)
        } catch {
            problem = problem ?? error
            return nil
        }
        guard status == .classical else {
            // Post-quantum (again): taken as it is, unless an older copy than the one the record was taken from.
            guard recordable else { return nil }
            guard let record else { return (taken, false) }
            return header.generation >= record.generation && (record.status != status || quantumRecords.vaultTaken(at: here) != id) ? (taken, false) : nil
        }
        var loss: (was: PostQuantumStatus, since: Int64, previous: String?)?
        var older: (copy: UInt64, recorded: UInt64)?
        if let record, record.status != .classical {
            if header.generation < record.generation {
                guard !comparesGenerations else { return nil }
                older = (header.generation, record.generation)
                // Accepted, it is taken at the recorded generation: a lower one would not replace the record.
                taken.generation = record.generation
            }
            loss = (record.status, record.seen, nil)
        } else if let other = quantumRecords.otherPostQuantumVault(lastSeenAt: here, than: header.vaultID) {
            loss = (other.record.status, other.record.seen, other.id)
        }
        guard let loss else { return nil }
        let accepting = acceptClassical == .anyLoss
            || (acceptClassical == .ownWrite && wrote && loss.previous == nil && PostQuantumStatus(opened.keyslots) != .classical)
        if accepting { return recordable ? (taken, true) : nil }
        let classical = Set(PostQuantumStatus.classicalSlots(header.keyslots))
        var found = QuantumLoss(path: path, was: loss.was, since: loss.since, classical: unlocked.slots.filter { classical.contains($0.index) },
                                previousVaultID: loss.previous, vaultID: id)
        found.older = older
        findings.append(.noLongerPostQuantum(found))
        return nil
    }

    /// Writes what `quantumFinished` found for vault `vaultID` at `path` (after the trust and lineage
    /// steps took the copy); an accepted loss is then said (`classicalAccepted`).
    func quantumRecord(_ found: (record: QuantumRecords.Record, accepting: Bool)?, vault vaultID: [UInt8], path: String) {
        guard let found else { return }
        do {
            try quantumRecords.write(found.record, vault: vaultID)
            if found.accepting { findings.append(.classicalAccepted(path: path)) }
        } catch {
            problem = problem ?? error
        }
    }
}
