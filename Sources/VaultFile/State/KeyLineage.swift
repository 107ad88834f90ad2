#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - Which copies descend from the vault this machine knows

/// The rules that tell a copy written by the vault's members from one planted by someone who no
/// longer holds a slot (docs/SECURITY.md, "A removed member's planted copy"), over the record of
/// `RetiredKeys`.
///
/// A slot's salt and KDF settings travel in the slot, so whoever knows a slot's public key can
/// write a copy that slot opens, with any file key and any generation. What a removed member
/// cannot know is a key minted after their removal: the key a rotation run here gave the slot it
/// re-salted. So a copy is refused (a warning on read, exit 7 on every write, nothing recorded):
/// - under a file key retired here (rotated here, or superseded by a newer copy under another key);
/// - when opened through a slot whose public key was retired here (removed, re-salted, or gone
///   from a newer copy taken here);
/// - under a file key this machine has not seen, when no keyslot holds the key minted here,
///   whatever slot opened it.
/// The last two give way to `--accept-rotation` (a rotation made elsewhere by a member), which
/// makes the record adopt the copy. A copy taken is recorded: its file key seen, the keys it
/// superseded, the slot keys it no longer holds.
enum KeyLineage {
    /// What the rules see of a vault: ids and hashes, never a key.
    struct View {
        /// The vault's id.
        let vaultID: [UInt8]
        /// The file key's id, in hex.
        let fileKey: String
        /// The generation of the header.
        let generation: UInt64
        /// The slots' public keys as `slotKey` hashes (a v1 password slot has none); empty in a 1.0 vault.
        let slotKeys: [String]
        /// The slot that opened the vault and its key's hash; nil when a known or looked-up key opened
        /// it (the agent's), or when the slot has no public key (a v1 password slot).
        let opened: (index: Int, key: String)?

        /// A view of these values.
        init(vaultID: [UInt8], fileKey: String, generation: UInt64, slotKeys: [String], opened: (index: Int, key: String)?) {
            self.vaultID = vaultID
            self.fileKey = fileKey
            self.generation = generation
            self.slotKeys = slotKeys
            self.opened = opened
        }

        /// The view of `vault`, with the header it has now.
        init(_ vault: UnlockedVault) {
            let vaultID = vault.header.vaultID
            self.vaultID = vaultID
            fileKey = SeenGenerations.Record.hex(vault.fileKeyID)
            generation = vault.header.generation
            slotKeys = (vault.slotMetadata ?? []).compactMap { $0.publicKey.isEmpty ? nil : KeyLineage.slotKey($0.publicKey, vault: vaultID) }
            if let index = vault.openedSlot?.index, let key = vault.openedSlotPublicKey {
                opened = (index, KeyLineage.slotKey(key, vault: vaultID))
            } else {
                opened = nil
            }
        }
    }

    /// What the rules make of a copy.
    enum Verdict: Equatable {
        /// A copy of the vault as this machine knows it.
        case taken
        /// Under a file key retired by a rotation run here, at that time (`VaultError.sealedUnderRetiredKey`).
        case retiredHere(Int64)
        /// Refused for `LineageRefusal`'s reason (`VaultError.refusedCopy`).
        case refused(LineageRefusal)
    }

    /// The hash that stands for a slot's public key `key` of vault `vaultID` in the record: the first 16
    /// bytes of BLAKE2b-256 over `vaultfile-slot-key 1`, a zero byte, the vault id and the key, in hex.
    /// Bound to the vault, so two records never tell that two vaults share a member.
    static func slotKey(_ key: [UInt8], vault vaultID: [UInt8]) -> String {
        SeenGenerations.Record.hex(Array(Checksum.blake2b256((Array("vaultfile-slot-key 1".utf8) + [0] + vaultID + key)[...]).prefix(16)))
    }

    // MARK: Judging

    /// The verdict of `record` on `view`, in this order: a file key retired here, then one
    /// superseded, then the key of the slot that opened it, then a file key unseen here without
    /// the key minted here.
    static func verdict(_ view: View, record: RetiredKeys.Record) -> Verdict {
        if let retired = record.retired(fileKey: view.fileKey) {
            return retired.superseded ? .refused(.supersededFileKey(since: retired.at)) : .retiredHere(retired.at)
        }
        if let opened = view.opened, let retired = record.retired(slotKey: opened.key) {
            return .refused(.retiredSlotKey(slot: opened.index, retired: retired))
        }
        if !record.hasSeen(fileKey: view.fileKey), let minted = record.minted, !view.slotKeys.contains(minted.key) {
            return .refused(.unknownLineage(rotated: minted.at))
        }
        return .taken
    }

    /// The error a write to the copy at `path` judged `verdict` gets, or nil when it is let through:
    /// a copy taken; one that `accepting` (`--accept-rotation`) takes; a rotation of a copy under
    /// an old file key (the way out of it).
    static func refusal(_ verdict: Verdict, path: String, rotating: Bool, accepting: Bool) -> VaultError? {
        switch verdict {
        case .taken: return nil
        case .retiredHere(let retired): return rotating ? nil : .sealedUnderRetiredKey(path: path, retired: retired)
        case .refused(let why):
            if accepting && why.canBeAccepted || rotating && why.letsARotationThrough { return nil }
            return .refusedCopy(path: path, why: why)
        }
    }

    /// For a merge: whether the rules, over the record in `records`, refuse OURS and THEIRS (each a
    /// vault opened, and its path). When they refuse both, throws the refusal of OURS: a result must
    /// keep one side's file key and keyslots, and may keep no refused side's. A record that cannot
    /// be read refuses nothing.
    static func refusedSides(
        ours: (vault: UnlockedVault, path: String), theirs: (vault: UnlockedVault, path: String), records: RetiredKeys, accepting: Bool
    ) throws(VaultError) -> (ours: Bool, theirs: Bool) {
        let record = (try? records.record(of: ours.vault.header.vaultID)) ?? RetiredKeys.Record()
        func error(_ side: (vault: UnlockedVault, path: String)) -> VaultError? {
            refusal(verdict(View(side.vault), record: record), path: side.path, rotating: false, accepting: accepting)
        }
        let (oursError, theirsError) = (error(ours), error(theirs))
        if let oursError, theirsError != nil { throw oursError }
        return (oursError != nil, theirsError != nil)
    }

    // MARK: Recording

    /// How a copy came to be taken here, which decides what it changes in the record.
    enum Source {
        /// Opened, and taken by the rules.
        case opened
        /// Opened, refused, and taken by a person with `--accept-rotation` (after `slot list`).
        case accepted
        /// Written here over the copy `replaced` (a rotation when the file key changed).
        case wroteHere(replaced: View)
        /// The result of a merge run here, which kept neither of the file keys `dropping`.
        case merged(dropping: [String])
    }

    /// Records in `record`, at `now`, that the copy `view` was taken here from `source`:
    /// - a copy opened under a file key not seen before supersedes every key last seen at a lower
    ///   generation (writes and merges run here supersede only what they replaced): an older copy
    ///   rotated elsewhere never makes the newest one's key superseded;
    /// - the copy becomes the one taken last when it supersedes it, is accepted, is a merge run
    ///   here, or is written over it: then the slot keys of the last that it no longer holds are
    ///   retired; under the same file key its slot keys join the last's (a `slot add`);
    /// - a write here retires the slot keys of the copy it replaced that it no longer holds; when it
    ///   rotated the file key of the copy taken last and the opening slot's key changed (a re-salt,
    ///   a new password), that key is the one minted here; a key minted earlier is forgotten once
    ///   the copy taken last no longer holds it;
    /// - a copy accepted, or a slot added here, takes its slot keys off the retired ones.
    /// A generation past `Generations.ceiling`, or more than `Generations.maxJump` past the highest
    /// seen (docs/FORMAT.md §8), records nothing: such a copy never makes another one older.
    static func adopt(_ view: View, from source: Source, into record: inout RetiredKeys.Record, now: Int64) {
        // A first open applies the ceiling alone; a record past it (edited by hand) bounds nothing.
        let highest = record.seenFileKeys.map(\.generation).max()
        let plausible = highest.map { $0 > Generations.ceiling || view.generation <= $0 + Generations.maxJump } ?? true
        guard view.generation <= Generations.ceiling, plausible else { return }
        let unseen = !record.hasSeen(fileKey: view.fileKey)
        let last = record.currentFileKey
        var becomesLast = last == nil
        switch source {
        case .opened, .accepted:
            if unseen {
                for older in record.seenFileKeys where older.id != view.fileKey && older.generation < view.generation {
                    if older.id == last { becomesLast = true }
                    record.retire(fileKey: older.id, superseded: true, at: now)
                }
            }
            if case .accepted = source {
                becomesLast = true
                record.retiredSlotKeys.removeAll { view.slotKeys.contains($0.key) }
            }
        case .wroteHere(let replaced):
            if replaced.fileKey == last { becomesLast = true }
            for key in replaced.slotKeys where !view.slotKeys.contains(key) { record.retire(slotKey: key, at: now) }
            if view.fileKey != replaced.fileKey, replaced.fileKey == last || last == nil, let new = view.opened?.key, new != replaced.opened?.key {
                record.minted = (new, now)
            }
            record.retiredSlotKeys.removeAll { view.slotKeys.contains($0.key) && !replaced.slotKeys.contains($0.key) }
        case .merged(let dropping):
            becomesLast = true
            for id in dropping where id != view.fileKey { record.retire(fileKey: id, superseded: true, at: now) }
        }
        if let index = record.seenFileKeys.firstIndex(where: { $0.id == view.fileKey }) {
            record.seenFileKeys[index].generation = max(record.seenFileKeys[index].generation, view.generation)
        } else {
            record.seenFileKeys.append((view.fileKey, view.generation))
        }
        if last == view.fileKey {
            for key in view.slotKeys where !record.currentSlotKeys.contains(key) { record.currentSlotKeys.append(key) }
        } else if becomesLast {
            if last != nil {
                for key in record.currentSlotKeys where !view.slotKeys.contains(key) { record.retire(slotKey: key, at: now) }
            }
            record.currentFileKey = view.fileKey
            record.currentSlotKeys = view.slotKeys
        }
        if let minted = record.minted, record.currentFileKey == view.fileKey, !view.slotKeys.contains(minted.key) { record.minted = nil }
    }
}

// MARK: - The key of the slot that opened a vault

extension UnlockedVault {
    /// The public key, as the metadata holds it, of the slot that opened this vault: nil when a
    /// known or looked-up key opened it (the agent's), in a 1.0 vault, and for a v1 password slot.
    public var openedSlotPublicKey: [UInt8]? {
        guard let index = openedSlot?.index, let entries = slotMetadata, entries.indices.contains(index), !entries[index].publicKey.isEmpty else {
            return nil
        }
        return entries[index].publicKey
    }
}
