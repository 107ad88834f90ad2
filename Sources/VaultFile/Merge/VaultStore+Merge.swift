import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Merging three vault files (git's merge driver)

extension VaultStore {
    /// How the sides of a merge are named in messages.
    struct MergeRoles: Sendable {
        let base: String, ours: String, theirs: String

        /// The three files git hands a merge driver.
        static let git = MergeRoles(
            base: "BASE (the common ancestor)", ours: "OURS (this branch)", theirs: "THEIRS (the branch being merged)")
        /// Two copies of a vault (and maybe their ancestor) merged by `vaultfile merge`.
        static let copies = MergeRoles(base: "BASE (the common ancestor)", ours: "OURS (the copy written)", theirs: "THEIRS (the other copy)")
    }

    /// Merges `base`, `ours` and `theirs` (paths of one vault) and writes the result over `ours`.
    ///
    /// All three must be the same vault (same id). The result is sealed with our file key and
    /// keyslots, or with theirs when only their side changed the password or KDF settings;
    /// unless `allowLowerKDF`, their keyslots are refused (`MergeRefusal.lowerKeyDerivation`,
    /// nothing written) when one derives its key at a lower cost than ours
    /// (`VaultMerge.lowerKeyDerivation`). Its generation is one more than the larger of ours and
    /// theirs, so the result is newer than both (a side above 2^63 is left out: `Generations`).
    /// Returns the conflicts, which the result holds side by side (see `VaultMerge`).
    ///
    /// Each side is opened with `unlocker`: a side whose file key it knows or looks up (the agent
    /// keeps the keys of every version of a vault id) with that key, the others with its
    /// credentials, asked for at most once, and only when a side needs them. A side whose keyslots
    /// changed (`slot rm`, `rekey`: a new file key) is opened with its own slots, so a merge of a
    /// removal with an edit is sealed under the new key and the removed secret does not open the
    /// result. With `retiredKeys`, a side the key lineage of this machine refuses (a superseded file
    /// key, a retired slot key, another lineage: KeyLineage.swift) refuses the whole merge
    /// (`refusedCopy`, nothing written) unless `acceptRotation`; a side under a file key retired here
    /// gives way to the other, its generation does not count, and `refusedSide` is told the entries it
    /// brought (only read: nothing is recorded). With `memberTrust`, a side this machine does not trust
    /// as its members' refuses the merge (`untrustedCopy`, exit 7) unless `allowUntrusted`
    /// (`MemberTrust.refuseUntrustedSides`).
    public static func mergeFiles(
        base: String, ours: String, theirs: String, with unlocker: Unlocker, allowLowerKDF: Bool = false, retiredKeys: RetiredKeys? = nil,
        acceptRotation: Bool = false, memberTrust: MemberTrust? = nil, allowUntrusted: Bool = false,
        refusedSide: ((RefusedMergeSide) -> Void)? = nil
    ) throws -> [VaultMerge.Conflict] {
        let merge = try PreparedMerge(
            base: base, ours: ours, theirs: theirs, roles: .git, with: unlocker, allowLowerKDF: allowLowerKDF, retiredKeys: retiredKeys,
            acceptRotation: acceptRotation, memberTrust: memberTrust, allowUntrusted: allowUntrusted)
        if let side = merge.refusedSide { refusedSide?(side) }
        // A side above the ceiling (a crafted copy) or refused by the key lineage is left out: nothing could be sealed past it.
        merge.sealer.rebaseGeneration(on: Generations.successorBase(of: merge.keptGenerations, record: nil))
        let destination = AtomicFileWriter.Destination(path: ours, finalLink: .follow)
        try AtomicFileWriter().write(to: destination, mode: merge.oursFile.mode, replacing: .any, keepingOwner: true) { output throws(VaultError) in
            try merge.sealer.seal(to: output)
        }
        return merge.conflicts
    }
}

// MARK: - The merge before it is written

/// A side of a merge whose keys the key lineage left out (KeyLineage.swift: under a file key retired
/// here, or superseded and taken with `--accept-rotation`): the result keeps the other side's file
/// key and keyslots, the side's generation does not count, and its entries, merged in, are named.
public struct RefusedMergeSide: Equatable, Sendable, CustomStringConvertible {
    /// The side's role ("OURS", "THEIRS", or git's names) and path.
    public let role: String, path: String
    /// The role of the side whose keys the result keeps.
    public let kept: String
    /// Why the side is refused.
    public let why: VaultError
    /// The names of the entries the side added or changed (against BASE, else the other side), which the result took.
    public var entries: [String] = []

    /// The most entry names the warning lists.
    static let namesShown = 20

    public var description: String {
        let reason: String
        switch why {
        case .refusedCopy(let path, let refusal): reason = refusal.describing(path)
        case .sealedUnderRetiredKey(let path, let retired):
            reason = "\(path) is sealed under a file key that was retired here on \(utcText(seconds: retired)), which whoever lost access then holds"
        default: reason = "\(why)"
        }
        let names = entries.prefix(Self.namesShown).joined(separator: ", ")
            + (entries.count > Self.namesShown ? " and \(entries.count - Self.namesShown) more" : "")
        let taken = entries.isEmpty ? "it added or changed no entry" : "the entries it added or changed were merged in: \(names)"
        return "the merge left out the keyslots, file key and generation of \(role) (\(path)) and kept those of \(kept): \(reason); "
            + "its entries come from a copy that a removed member could have written, so check them (\(taken))"
    }
}

/// Two or three files of one vault opened and merged, ready to be sealed over OURS.
struct PreparedMerge {
    /// The vault that seals the result: ours, or theirs when only their side changed the keyslots
    /// or only ours is sealed under a retired file key.
    let sealer: UnlockedVault
    /// The conflicts the merged contents hold side by side.
    let conflicts: [VaultMerge.Conflict]
    /// OURS and THEIRS as opened (their identity and mode, for the writes).
    let oursFile: OpenedFile, theirsFile: OpenedFile
    /// The generations of OURS and THEIRS that a new generation must pass: a side the key lineage
    /// refuses never raises it (KeyLineage.swift).
    let keptGenerations: [UInt64]
    /// The ids (hex) of the file keys of OURS and THEIRS that the result is not sealed under, but of a refused side.
    let droppedKeys: [String]
    /// The headers of OURS and THEIRS as read.
    let oursHeader: VaultHeader, theirsHeader: VaultHeader
    /// The side the key lineage refused, whose file key, keyslots and generation the result left out.
    let refusedSide: RefusedMergeSide?

    /// Opens `ours`, `theirs` and, when given, `base`, each with `unlocker` (its credentials read
    /// once, only for a side no key of it opens), and merges their contents: three-way with a
    /// base, else two-way (`VaultMerge.merge(ours:theirs:)`, our keyslots kept). A side the key
    /// lineage in `retiredKeys` refuses refuses the merge (`KeyLineage.refusedSides`); whatever the
    /// keyslots, a side under a file key retired here gives way to the other (so the result is sealed
    /// under the newest key), and its changed entries are named; when both are, nothing is merged.
    /// With `acceptRotation`, a refused side is taken as `--accept-rotation` takes a copy.
    init(
        base: String?, ours: String, theirs: String, roles: VaultStore.MergeRoles, with unlocker: Unlocker, allowLowerKDF: Bool,
        retiredKeys: RetiredKeys? = nil, acceptRotation: Bool = false, memberTrust: MemberTrust? = nil, allowUntrusted: Bool = false
    ) throws {
        // BASE first, as git's driver always opened them: the files are opened, and a failing side named, in this order.
        var paths: [(role: String, path: String)] = base.map { [(roles.base, $0)] } ?? []
        paths += [(roles.ours, ours), (roles.theirs, theirs)]
        let (o, t) = base == nil ? (0, 1) : (1, 2)
        // Each side is opened as `get` opens a vault: its size checked before a byte is read,
        // its header parsed from at most 64 KiB, its payload decrypted chunk by chunk; no file
        // is held whole in memory. The headers come first, so unrelated files run no KDF.
        let files = try paths.map { side throws(VaultError) in try VaultStore(path: side.path).openHeader() }
        let headers = files.map(\.header)
        guard headers.allSatisfy({ $0.vaultID == headers[0].vaultID }) else {
            throw VaultError.mergeRefused(.unrelatedVaults)
        }
        var opened: [UnlockedVault] = []
        var failing: [Int] = []
        // Read once, for the first side that needs them, and named in the refusal.
        var credentials: Unlocker.Credentials?
        var eachSide = unlocker
        eachSide.credentials = {
            if let credentials { return credentials }
            let read = try unlocker.credentials?() ?? Unlocker.Credentials([], limits: .defaults)
            credentials = read
            return read
        }
        for (index, file) in files.enumerated() {
            do {
                var payload = FileCiphertext(file.file, from: file.headerLength)
                opened.append(try VaultCodec.open(header: file.header, payload: &payload, with: eachSide))
            } catch let error as VaultError {
                switch error {
                case .wrongPassword, .noKeyslotOpens: failing.append(index)
                default: throw error
                }
            }
        }
        guard failing.isEmpty else {
            throw VaultError.mergeRefused(Self.passwordRefusal(failing: failing, paths: paths, headers: headers, hasBase: base != nil,
                                                               tried: (credentials?.list ?? []).map(\.source)))
        }
        let merged: (vault: Vault, conflicts: [VaultMerge.Conflict])
        var takeTheirKeys = false
        if base != nil {
            merged = try VaultMerge.merge(base: opened[0].vault, ours: opened[o].vault, theirs: opened[t].vault)
            let oursChangedKeys = headers[o].keyslots != headers[0].keyslots
            let theirsChangedKeys = headers[t].keyslots != headers[0].keyslots
            takeTheirKeys = theirsChangedKeys && !oursChangedKeys
        } else {
            // Without the ancestor nothing says which side changed the keyslots: ours stay.
            merged = try VaultMerge.merge(ours: opened[o].vault, theirs: opened[t].vault)
        }
        // The members first (as a write): a side no member wrote refuses the whole merge, whatever its keys.
        try memberTrust?.refuseUntrustedSides(ours: (opened[o], ours, roles.ours), theirs: (opened[t], theirs, roles.theirs),
                                              allowUntrusted: allowUntrusted)
        // Only read here: the merge records nothing (`vaultfile merge` records its result after the rename).
        var refused: (ours: Bool, theirs: Bool) = (false, false)
        var refusedSide: RefusedMergeSide?
        if let retiredKeys {
            let errors = try KeyLineage.refusedSides(ours: (opened[o], ours, roles.ours), theirs: (opened[t], theirs, roles.theirs),
                                                     records: retiredKeys, accepting: acceptRotation)
            refused = (errors.ours != nil, errors.theirs != nil)
            // Its entries merge in: name those it added or changed (against BASE, else the other side).
            func changed(_ side: Int, other: Int) -> [String] {
                let reference = base == nil ? opened[other].vault : opened[0].vault
                return opened[side].vault.sortedEntries.filter { reference.entry($0.name) != $0.entry }.map(\.name)
            }
            refusedSide = errors.ours.map { RefusedMergeSide(role: roles.ours, path: ours, kept: roles.theirs, why: $0, entries: changed(o, other: t)) }
                ?? errors.theirs.map { RefusedMergeSide(role: roles.theirs, path: theirs, kept: roles.ours, why: $0, entries: changed(t, other: o)) }
        }
        self.refusedSide = refusedSide
        if refused.ours != refused.theirs { takeTheirKeys = refused.ours }
        // Their side may have lowered the KDF (`passwd --kdf pbkdf2 --kdf-iterations 1
        // --allow-weak-kdf`): a merge does not take that silently.
        if takeTheirKeys && !allowLowerKDF,
           let lower = VaultMerge.lowerKeyDerivation(theirs: headers[t].keyslots, ours: headers[o].keyslots) {
            throw VaultError.mergeRefused(.lowerKeyDerivation(theirs: lower.theirs, ours: lower.ours))
        }
        sealer = takeTheirKeys ? opened[t] : opened[o]
        sealer.vault = merged.vault
        // A signed result lists both sides as its parents and keeps both sides' tombstones (a refused side's are not taken).
        if !(takeTheirKeys ? refused.ours : refused.theirs) {
            sealer.recordMergeParent(takeTheirKeys ? opened[o] : opened[t])
            // The kept slots hold a key the other side removed: the merge would undo the removal.
            if let (slot, tombstone) = sealer.removedKeyHeld() {
                let label = sealer.slotMetadata?[slot].label ?? ""
                let (keeper, remover) = takeTheirKeys ? ("THEIRS", "OURS") : ("OURS", "THEIRS")
                throw VaultError.mergeRefused(.removedKeyKept(slot: slot, label: label, keptBy: keeper, removedBy: remover,
                                                               generation: tombstone.generation))
            }
        }
        conflicts = merged.conflicts
        oursFile = files[o].file
        theirsFile = files[t].file
        keptGenerations = (refused.ours ? [] : [headers[o].generation]) + (refused.theirs ? [] : [headers[t].generation])
        // A refused side's key is left as the rules found it: a merge never vouches for it.
        let kept = SeenGenerations.Record.hex(sealer.fileKeyID)
        droppedKeys = [(opened[o], refused.ours), (opened[t], refused.theirs)].filter { !$0.1 }
            .map { SeenGenerations.Record.hex($0.0.fileKeyID) }.filter { $0 != kept }
        oursHeader = headers[o]
        theirsHeader = headers[t]
    }

    /// Why the password fails on the sides at `failing` (indices into base, ours, theirs).
    ///
    /// "Changed on that side" only when it is known: the password opens every other side, BASE
    /// among them, and each failing side's keyslots differ from BASE's. (Keyslots equal to BASE's
    /// would open with the password that opens BASE: a slot's key depends on nothing else.) When it
    /// opens none, it is a wrong password. When it fails on BASE but opens another side, that
    /// side's keyslots differ from BASE's for the same reason: the password was changed there.
    private static func passwordRefusal(
        failing: [Int], paths: [(role: String, path: String)], headers: [VaultHeader], hasBase: Bool, tried: [String]
    ) -> VaultError.MergeRefusal {
        func side(_ index: Int) -> String { "\(paths[index].role) at \(paths[index].path)" }
        let opening = paths.indices.filter { !failing.contains($0) }
        if opening.isEmpty { return .passwordOpensNone(sides: failing.map(side), tried: tried) }
        // Without BASE nothing tells which side changed the password.
        if hasBase && !failing.contains(0) && failing.allSatisfy({ headers[$0].keyslots != headers[0].keyslots }) {
            return .passwordFails(sides: failing.map(side), tried: tried)
        }
        return .passwordOpensOnly(opens: opening.map(side), fails: failing.map(side), tried: tried)
    }
}
