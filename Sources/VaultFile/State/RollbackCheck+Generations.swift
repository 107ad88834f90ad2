import VaultFormat
import VaultModel

// MARK: - The generation steps of the rollback check

/// The generation parts of `opened`, `willWrite` and `finished` (docs/SECURITY.md, "Rollback";
/// docs/FORMAT.md §2.1): older copies, diverged copies, and generations that are no plausible
/// successor of what was seen here.
extension RollbackCheck {
    /// After the unlock: how `header` compares with the record of its vault. Without the
    /// comparison (inside git) the ceiling still holds: a copy above 2^63 is implausible there too.
    func compareGeneration(of header: VaultHeader) {
        if comparesGenerations {
            comparison = SeenGenerations.compare(header, with: recorded(header.vaultID))
        } else if !Generations.isPlausible(header.generation, after: nil) {
            comparison = .implausible(nil)
        }
    }

    /// Before a write of `unlocked` over `path`. Without `allowRollback`, a write to an older copy
    /// (`staleCopy`), to a copy that diverged from the one seen here (`divergedCopy`) or to an
    /// implausible one (`implausibleGeneration`) is refused, and nothing is written.
    ///
    /// With `allowRollback` the copy written becomes the newest: past the record of an older copy,
    /// and past a diverged one (deliberately: the other copy's changes are then left behind, as
    /// the manual page says); an implausible generation, or one at the ceiling, is ignored and the
    /// seal writes one past the record (`Generations.successorBase`). A record at the ceiling, which
    /// nothing can pass, is ignored as well, and replaced after the write.
    func checkGeneration(of unlocked: UnlockedVault, path: String) throws(VaultError) {
        let generation = unlocked.header.generation
        switch comparison {
        case .older(let newer):
            guard allowRollback else { throw refusing(.staleCopy(path: path, generation: generation, newer: newer)) }
            if newer.generation < Generations.ceiling { unlocked.advanceGeneration(past: newer.generation) }
        case .diverged(let other):
            guard allowRollback else { throw refusing(.divergedCopy(path: path, generation: generation, other: other)) }
        case .implausible(let seen):
            guard allowRollback else { throw refusing(.implausibleGeneration(path: path, generation: generation, seen: seen)) }
            unlocked.rebaseGeneration(on: Generations.successorBase(of: [], record: seen))
        case .unseen, .same, .newer:
            break
        }
        // Exactly at the ceiling (or a copy whose record is): the seal cannot pass it, and refuses.
        if allowRollback, unlocked.header.generation >= Generations.ceiling {
            unlocked.rebaseGeneration(on: Generations.successorBase(of: [], record: comparison.record))
        }
    }

    /// Once the command is over: what the user should know, and the record raised to `header`
    /// (the file on disk) when that is plausible. A refused write returns before (`finished`).
    func finishGeneration(opened: VaultHeader, onDisk header: VaultHeader, wrote: Bool, path: String) {
        if case .implausible(let seen) = comparison, !wrote {
            findings.append(.implausible(path: path, generation: opened.generation, seen: seen))
        }
        guard comparesGenerations else { return }
        switch comparison {
        case .older(let newer) where !wrote:
            findings.append(.olderCopy(path: path, generation: opened.generation, newer: newer))
        case .diverged(let other):
            // Also after a write (--allow-rollback): this copy is now the newest, and the other copy's changes are not in it.
            findings.append(.diverged(path: path, generation: opened.generation, other: other))
        default:
            break
        }
        // Most opens find the generation recorded and write nothing; a write always rises above it
        // (or replaces a record at the ceiling). An implausible copy is recorded only once rewritten.
        switch comparison {
        case .unseen, .newer: record(header, path: path)
        case .same, .older, .diverged, .implausible: if wrote { record(header, path: path) }
        }
    }

    // MARK: Merges

    /// The generation a merge of copies of vault `vaultID` at `generations` (the sides it keeps)
    /// seals one past: the largest plausible one of them and the record (`Generations.successorBase`).
    func mergeBase(of generations: [UInt64], vaultID: [UInt8]) -> UInt64 {
        Generations.successorBase(of: generations, record: comparesGenerations ? recorded(vaultID) : nil)
    }

    /// Records `header`, the result of a merge written to `path`: no comparison, no finding.
    func merged(_ header: VaultHeader, path: String) {
        guard comparesGenerations else { return }
        record(header, path: path)
    }

    // MARK: Private

    /// `error`, after noting that the write was refused (the record then stays as it is).
    private func refusing(_ error: VaultError) -> VaultError {
        refused = true
        return error
    }
}

extension SeenGenerations.Comparison {
    /// The record compared with, if there was one.
    var record: SeenGenerations.Record? {
        switch self {
        case .unseen: return nil
        case .same(let record), .newer(let record), .older(let record), .diverged(let record): return record
        case .implausible(let record): return record
        }
    }
}
