#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - The key lineage in the rollback check

/// What the key lineage found of the vault a command unlocked (`RollbackCheck.lineage`).
struct LineageState {
    /// The copy unlocked, as the rules see it (nil before `opened`, or when the record could not be read).
    var opened: KeyLineage.View?
    /// Their verdict on it.
    var verdict: KeyLineage.Verdict = .taken
    /// The record that judged it.
    var record = RetiredKeys.Record()
    /// The keyslots of the copy unlocked, as `slot list` describes them (named in a refusal).
    var slots: [SlotDescription] = []
    /// The vault written over it, once `willWrite` let it through (its header is the new one after the seal).
    var written: UnlockedVault?
}

extension RollbackCheck {
    /// After the unlock (`opened`): judges `unlocked` by the record of its vault (KeyLineage.swift).
    /// A record that cannot be read judges nothing: the problem is reported, the copy is taken.
    func lineageOpened(_ unlocked: UnlockedVault) {
        lineage = LineageState()
        let view = KeyLineage.View(unlocked)
        do {
            let record = try retiredKeys.record(of: unlocked.header.vaultID)
            lineage.opened = view
            lineage.record = record
            lineage.slots = unlocked.slots
            lineage.verdict = KeyLineage.verdict(view, record: record)
        } catch {
            problem = problem ?? error
        }
    }

    /// Before `unlocked` is sealed over the file at `path` (`willWrite`): the error that refuses the
    /// write (nothing is written), or nil to let it through. A rotation is let through under an old
    /// file key (the way out of it); a copy of another lineage only with `acceptRotation`. A write
    /// whose result would still hold a slot key retired here that the copy held (a `rekey` of a copy
    /// from before a removal) is refused unless `acceptRotation`; a slot added by the write is not. A
    /// rotation out of an old file key whose result would keep a slot of the copy that the copy taken
    /// last does not hold (one added to it under the old key) is refused so too (`KeyLineage.unseenKept`).
    func lineageRefusal(writing unlocked: UnlockedVault, rotating: Bool, path: String) -> VaultError? {
        guard let opened = lineage.opened else { return nil }
        if let refusal = KeyLineage.refusal(lineage.verdict, path: path, rotating: rotating, accepting: acceptRotation) { return refusal }
        let written = KeyLineage.View(unlocked)
        if !acceptRotation, let kept = written.retiredKeys(in: lineage.record, among: opened.slotKeys) {
            return .refusedCopy(path: path, why: .wouldKeepRetiredSlotKey(slots: kept.slots, retired: kept.retired, fingerprints: kept.fingerprints))
        }
        // The way out of an old file key gives the new one only to slots of the members' newest copy seen here.
        let unseen = KeyLineage.unseenKept(written, opened: opened, verdict: lineage.verdict, record: lineage.record)
        if !acceptRotation, !unseen.isEmpty {
            let named = unseen.compactMap { opened.details[$0]?.index }.map { index in
                lineage.slots.first { $0.index == index }.map { LineageRefusal.NamedSlot(index: index, kind: $0.kind, label: $0.label, fingerprint: $0.fingerprint) }
                    ?? LineageRefusal.NamedSlot(index: index, kind: "keyslot", label: "", fingerprint: nil)
            }
            return .refusedCopy(path: path, why: .wouldKeepUnseenSlots(slots: named))
        }
        lineage.written = unlocked
        return nil
    }

    /// Once the command is over (`finished`), `wrote` saying whether a new version is at `path`:
    /// records what the rules take, and returns false for a copy they refuse, which is reported and
    /// records nothing else (its generation neither).
    func lineageFinished(wrote: Bool, path: String) -> Bool {
        defer { lineage = LineageState() }
        guard let opened = lineage.opened else { return true }
        // Taken by a person (`--accept-rotation`); a write under a refused verdict was let through
        // otherwise only as a rotation out of an old file key.
        let accepted: Bool
        switch lineage.verdict {
        case .taken:
            accepted = false
        case .retiredHere(let retired):
            if !wrote {
                findings.append(.retiredKey(path: path, retired: retired))
                return false
            }
            accepted = false
        case .refused(let why):
            accepted = acceptRotation && why.canBeAccepted
            if !wrote && !accepted {
                findings.append(.refusedCopy(path: path, why: why))
                return false
            }
            if accepted { findings.append(.acceptedCopy(path: path, why: why)) }
        }
        let written = wrote ? lineage.written.map(KeyLineage.View.init) : nil
        let taken = lineage.verdict == .taken
        recordLineage(vaultID: opened.vaultID) { record, now in
            // The copy opened first, as it was found (a copy let through only to be rotated is not taken), then what was written over it.
            if taken { KeyLineage.adopt(opened, from: .opened, into: &record, now: now) }
            if accepted { KeyLineage.adopt(opened, from: .accepted, into: &record, now: now) }
            if let written {
                if written.fileKey != opened.fileKey { record.retire(fileKey: opened.fileKey, superseded: false, at: now) }
                KeyLineage.adopt(written, from: .wroteHere(replaced: opened), into: &record, now: now)
            }
        }
        return true
    }

    /// After a merge run here wrote `result` (`VaultStore.mergeCopy`), which kept neither of the file
    /// keys `dropping` (ids in hex): records it as a copy taken here.
    func lineageMerged(_ result: UnlockedVault, dropping: [String]) {
        let view = KeyLineage.View(result)
        recordLineage(vaultID: result.header.vaultID) { record, now in
            KeyLineage.adopt(view, from: .merged(dropping: dropping), into: &record, now: now)
        }
    }

    /// Updates the record of `vaultID` with `change`, reporting a problem rather than failing.
    private func recordLineage(vaultID: [UInt8], _ change: (inout RetiredKeys.Record, Int64) -> Void) {
        let now = Int64(time(nil))
        do {
            try retiredKeys.update(vaultID) { change(&$0, now) }
        } catch {
            problem = problem ?? error
        }
    }
}
