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

    public var description: String {
        let words = was.words ?? "post-quantum"
        let slots = Self.named(classical)
        let harvest = "whoever keeps a copy written from now on (a git remote, a backup, a sync service) and one day has a quantum "
            + "computer can open it through \(classical.count == 1 ? "that slot" : "those slots")"
        if let previousVaultID {
            return "\(path) held a \(words) vault (id \(previousVaultID.prefix(16))…) when last opened here (\(utcText(seconds: since))); the "
                + "vault there now is another one (id \(vaultID.prefix(16))…), which is not post-quantum: \(slots); \(harvest); if you did "
                + "not put it there, it may be a copy planted to collect what you write into it"
        }
        return "\(path) was \(words) when last opened here (\(utcText(seconds: since))) and no longer is: \(slots); \(harvest), and with "
            + "the file key every copy sealed under it, the earlier post-quantum ones included, until a rotation replaces the key"
    }

    /// "keyslot 2 (recipient, bob) is classical", "keyslots 2 (…) and 3 (…) are classical".
    static func named(_ slots: [SlotDescription]) -> String {
        let each = slots.map { "\($0.index) (\($0.label.isEmpty ? $0.kind : "\($0.kind), \($0.label)"))" }
        guard let last = each.last else { return "a keyslot is classical" }
        if each.count == 1 { return "keyslot \(last) is classical" }
        return "keyslots \(each.dropLast().joined(separator: ", ")) and \(last) are classical"
    }
}

extension RollbackCheck {
    /// Once the command is over (`finished`), before the trust and lineage steps: compares the
    /// status of `header` (the file on disk) with the record of its vault, and finds a loss of
    /// post-quantum when the vault was post-quantum at a generation no higher than this copy's;
    /// for a vault id with no record (or a classical one taken at another path), when another
    /// post-quantum vault was last seen at `path`. A copy the rollback check found older is its to
    /// report, and nothing is found of it; one at an implausible generation is never recorded (it
    /// would make every genuine copy older, and so silence the check); `wrote` says a write made
    /// the copy on disk the newest.
    /// `unlocked` (the vault whose header is on disk) names the classical slots. With `acceptClassical` the loss is accepted instead
    /// (recorded by `quantumRecord`). Returns the record to write once the copy is taken, if any,
    /// and whether writing it accepts a loss.
    func quantumFinished(onDisk header: VaultHeader, unlocked: UnlockedVault, path: String, wrote: Bool) -> (record: QuantumRecords.Record, accepting: Bool)? {
        if !wrote, case .older = comparison { return nil }
        var recordable = true
        if !wrote, case .implausible = comparison { recordable = false }
        let status = PostQuantumStatus(header.keyslots)
        let here = seen.absolute(path)
        let now = Int64(time(nil))
        let taken = QuantumRecords.Record(status: status, generation: header.generation, seen: now, path: here)
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
            return header.generation >= record.generation && (record.status != status || record.path != here) ? (taken, false) : nil
        }
        var loss: (was: PostQuantumStatus, since: Int64, previous: String?)?
        if let record, record.status != .classical {
            guard header.generation >= record.generation else { return nil }
            loss = (record.status, record.seen, nil)
        } else if record?.path != here {
            do {
                if let other = try quantumRecords.otherPostQuantumVault(lastSeenAt: here, than: header.vaultID) {
                    loss = (other.record.status, other.record.seen, other.id)
                }
            } catch {
                problem = problem ?? error
            }
        }
        guard let loss else { return nil }
        if acceptClassical { return recordable ? (taken, true) : nil }
        let classical = Set(PostQuantumStatus.classicalSlots(header.keyslots))
        findings.append(.noLongerPostQuantum(QuantumLoss(path: path, was: loss.was, since: loss.since, classical: unlocked.slots.filter { classical.contains($0.index) },
                                                         previousVaultID: loss.previous, vaultID: SeenGenerations.Record.hex(header.vaultID))))
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
