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
        /// Of each slot key: the slot's id, the 16 hex digits of its `x25519:` fingerprint, and whether a
        /// secret (password, keyfile, recovery code: never published, unlike a recipient) derives it.
        let details: [String: (index: Int, fingerprint: String, secret: Bool)]
        /// Of each slot key of a recipient or ssh-ed25519 slot: the fingerprint `slot list` shows for it
        /// (`age1…`, `SHA256:…`), which messages name instead of an `x25519:` one shown nowhere else.
        var published: [String: String] = [:]

        /// A view of these values; `secret` lists the secret-derived slot keys (all of them when nil).
        init(vaultID: [UInt8], fileKey: String, generation: UInt64, slotKeys: [String], opened: (index: Int, key: String)?,
             secret: [String]? = nil) {
            self.vaultID = vaultID
            self.fileKey = fileKey
            self.generation = generation
            self.slotKeys = slotKeys
            self.opened = opened
            var details: [String: (index: Int, fingerprint: String, secret: Bool)] = [:]
            for (index, key) in slotKeys.enumerated() where details[key] == nil {
                details[key] = (index, String(key.prefix(16)), secret?.contains(key) ?? true)
            }
            self.details = details
        }

        /// The view of `vault`, with the header it has now.
        init(_ vault: UnlockedVault) {
            let vaultID = vault.header.vaultID
            self.vaultID = vaultID
            fileKey = SeenGenerations.Record.hex(vault.fileKeyID)
            generation = vault.header.generation
            var keys: [String] = []
            var details: [String: (index: Int, fingerprint: String, secret: Bool)] = [:]
            for (index, entry) in (vault.slotMetadata ?? []).enumerated() where !entry.publicKey.isEmpty {
                let key = KeyLineage.slotKey(entry.publicKey, vault: vaultID)
                keys.append(key)
                let fingerprint = SlotMetadata.fingerprintDigits(of: entry.publicKey)
                if details[key] == nil { details[key] = (index, fingerprint, KeyLineage.secretTypes.contains(entry.type)) }
                if [3, 6, 7, HybridSlot.type].contains(entry.type), published[key] == nil {
                    published[key] = MemberKey(type: entry.type, bytes: entry.publicKey).fingerprint
                }
            }
            slotKeys = keys
            self.details = details
            if let index = vault.openedSlot?.index, let key = vault.openedSlotPublicKey {
                opened = (index, KeyLineage.slotKey(key, vault: vaultID))
            } else {
                opened = nil
            }
        }

        /// The `x25519:` fingerprint of the slot key `key`, as `slot list` shows it, or nil.
        func fingerprint(_ key: String) -> String? { published[key] ?? details[key].map { "x25519:" + $0.fingerprint } }

        /// The slot keys this copy holds that `record` lists as retired, with their slot ids and
        /// fingerprints, and the earliest time; nil when it holds none. Only the keys in `among` count, when given.
        func retiredKeys(in record: RetiredKeys.Record, among: [String]? = nil) -> (slots: [Int], retired: Int64, fingerprints: [String])? {
            let held = slotKeys.filter { among?.contains($0) ?? true }.compactMap { key in record.retired(slotKey: key).map { (key, $0) } }
            guard let first = held.map(\.1).min() else { return nil }
            return (held.compactMap { details[$0.0]?.index }, first, held.compactMap { fingerprint($0.0) })
        }
    }

    /// The slot types whose public key a secret derives: password (2), keyfile (4), recovery code (5)
    /// (docs/FORMAT.md §3). Only those can be keys of the lineage: a recipient's key is published.
    static let secretTypes: Set<UInt8> = [2, 4, 5]

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
    /// superseded, then the key of the slot that opened it, then any other slot key retired here
    /// that it holds, then a file key unseen here without a key of the lineage taken here.
    static func verdict(_ view: View, record: RetiredKeys.Record) -> Verdict {
        if let retired = record.retired(fileKey: view.fileKey) {
            return retired.superseded ? .refused(.supersededFileKey(since: retired.at)) : .retiredHere(retired.at)
        }
        if let opened = view.opened, let retired = record.retired(slotKey: opened.key) {
            return .refused(.retiredSlotKey(slot: opened.index, retired: retired, fingerprint: view.fingerprint(opened.key)))
        }
        if let held = view.retiredKeys(in: record) {
            return .refused(.holdsRetiredSlotKey(slots: held.slots, retired: held.retired, fingerprints: held.fingerprints))
        }
        if !record.hasSeen(fileKey: view.fileKey), let newest = record.lineageKeys.last,
           !record.lineageKeys.contains(where: { view.slotKeys.contains($0.key) }) {
            return .refused(.unknownLineage(rotated: newest.at, expected: record.lineageKeys.compactMap { $0.fingerprint.map { "x25519:" + $0 } }))
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

    /// For a rotation out of an old file key (`verdict` retired here or superseded), the way out of
    /// it: the slot keys the result `written` keeps from the copy `opened` (a key the rotation minted,
    /// or a slot the command added, is new to it) that the copy taken last here does not hold. Such a
    /// slot may have been added to the copy by whoever still held the old key, a removed member among
    /// them. Empty for any other write, and when the record holds no slot keys of the copy taken last
    /// (a version 1 record: nothing to compare with).
    static func unseenKept(_ written: View, opened: View, verdict: Verdict, record: RetiredKeys.Record) -> [String] {
        switch verdict {
        case .retiredHere, .refused(.supersededFileKey): break
        default: return []
        }
        guard !record.currentSlotKeys.isEmpty else { return [] }
        var unseen: [String] = []
        for key in written.slotKeys where opened.slotKeys.contains(key) && !record.currentSlotKeys.contains(key) && !unseen.contains(key) {
            unseen.append(key)
        }
        return unseen
    }

    /// For a merge: the errors by which the rules, over the record in `records`, leave out the keys of
    /// OURS and THEIRS (each a vault opened, its path, and its role in messages), nil for a side taken.
    /// A side the rules refuse (`.refused`: a superseded file key, a retired slot key, another lineage)
    /// refuses the whole merge: its entries may be someone else's, so it throws `refusedCopy`, the
    /// side named by role and path, unless `accepting` (`--accept-rotation`), which takes it as a
    /// write takes it (a superseded key, which no accept takes, is then left out as below). A side
    /// under a file key retired by a rotation run here (a genuine old branch, typically) gives its
    /// entries but not its keys. When the keys of both are left out, throws the error of OURS: a
    /// result must keep one side's file key and keyslots. A record that cannot be read refuses nothing.
    static func refusedSides(
        ours: (vault: UnlockedVault, path: String, role: String), theirs: (vault: UnlockedVault, path: String, role: String),
        records: RetiredKeys, accepting: Bool
    ) throws(VaultError) -> (ours: VaultError?, theirs: VaultError?) {
        let record = (try? records.record(of: ours.vault.header.vaultID)) ?? RetiredKeys.Record()
        let verdicts = (verdict(View(ours.vault), record: record), verdict(View(theirs.vault), record: record))
        for (side, judged) in [(ours, verdicts.0), (theirs, verdicts.1)] {
            if case .refused(let why) = judged, !accepting { throw .refusedCopy(path: "\(side.role) at \(side.path)", why: why) }
        }
        let oursError = refusal(verdicts.0, path: ours.path, rotating: false, accepting: accepting)
        let theirsError = refusal(verdicts.1, path: theirs.path, rotating: false, accepting: accepting)
        if let oursError, theirsError != nil { throw oursError }
        return (oursError, theirsError)
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
    ///   generation: an older copy rotated elsewhere never makes the newest one's key superseded; a
    ///   rotation run here supersedes every other file key seen here (a copy under one of them may
    ///   hold a slot it removed), a merge run here the keys it dropped;
    /// - the copy becomes the one taken last when it supersedes it, is accepted, is a merge or a
    ///   rotation run here, or is written over it: then the slot keys of the last that it no longer
    ///   holds are retired; under the same file key its slot keys join the last's (a `slot add`);
    /// - a write here retires the slot keys of the copy it replaced that it no longer holds;
    /// - the keys of the lineage: a rotation run here that gave the slot that opened it a new key
    ///   makes that key the only one; once a rotation ran here, the secret-derived slot keys (a
    ///   password's, a keyfile's, a recovery code's) that a copy taken last under a new file key, a
    ///   copy accepted or a write here brings, not held by the copy taken last before, join them (a
    ///   removed member never saw them); a key the copy taken last no longer holds is forgotten,
    ///   unless none would be left (the lineage is never emptied, so an accept never leaves the
    ///   machine taking any copy);
    /// - a copy accepted, or a slot added here, takes its slot keys off the retired ones.
    /// A generation past `Generations.ceiling`, or more than `Generations.maxJump` past the highest
    /// seen (docs/FORMAT.md §8), records nothing: such a copy never makes another one older.
    static func adopt(_ view: View, from source: Source, into record: inout RetiredKeys.Record, now: Int64) {
        // The rule of the rollback check (`Generations.isPlausible`): a first open applies the ceiling
        // alone, and a generation recorded past it (edited by hand) bounds nothing.
        let highest = record.seenFileKeys.map(\.generation).max()
        guard Generations.isPlausible(view.generation, afterGeneration: highest) else { return }
        let unseen = !record.hasSeen(fileKey: view.fileKey)
        let last = record.currentFileKey
        let lastSlotKeys = record.currentSlotKeys
        var becomesLast = last == nil
        // Secret-derived keys this copy brings, which join the lineage if it becomes the one taken last.
        var bringing: [String] = []
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
            if unseen || becomesLast { bringing = view.slotKeys.filter { !lastSlotKeys.contains($0) } }
        case .wroteHere(let replaced):
            if replaced.fileKey == last { becomesLast = true }
            for key in replaced.slotKeys where !view.slotKeys.contains(key) { record.retire(slotKey: key, at: now) }
            if view.fileKey != replaced.fileKey {
                becomesLast = true
                for other in record.seenFileKeys where other.id != view.fileKey { record.retire(fileKey: other.id, superseded: true, at: now) }
                if let new = view.opened?.key, new != replaced.opened?.key {
                    record.lineageKeys = [.init(key: new, at: now, fingerprint: view.details[new]?.fingerprint)]
                }
            }
            bringing = view.slotKeys.filter { !replaced.slotKeys.contains($0) && !lastSlotKeys.contains($0) }
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
        guard record.currentFileKey == view.fileKey, !record.lineageKeys.isEmpty else { return }
        for key in bringing where view.details[key]?.secret == true && !record.lineageKeys.contains(where: { $0.key == key }) {
            record.lineageKeys.append(.init(key: key, at: now, fingerprint: view.details[key]?.fingerprint))
        }
        let held = record.lineageKeys.filter { view.slotKeys.contains($0.key) }
        if !held.isEmpty { record.lineageKeys = held }
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
