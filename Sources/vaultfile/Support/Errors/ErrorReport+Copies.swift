import VaultFile
import VaultModel

// MARK: - Hints for a copy of the vault this machine does not take as it is

extension ErrorReport {
    /// The command that merges the copy at `ours` with the one at `theirs` and writes the result
    /// to both (`vaultfile merge --both`), each path a `shellWord`, for the end of a hint; with
    /// placeholders when one path names both.
    static func mergeCommand(_ ours: String, _ theirs: String) -> String {
        ours == theirs ? "vaultfile merge --both OURS THEIRS" : "vaultfile merge --both \(shellPath(ours)) \(shellPath(theirs))"
    }

    /// What to do with a copy this machine does not trust (`TrustFinding`), after a refused write or
    /// beside the warning of a read: the merge for a diverged one, else `vaultfile trust` after checking
    /// the fingerprints with a member, or `--allow-untrusted` for one command. The command to paste
    /// comes last, each path a `shellWord`.
    static func trustHint(path named: String, why: [TrustFinding]) -> String {
        // A merge names a side as "ROLE at PATH": 'vaultfile trust' takes the path.
        let path = shellPath(trustPath(named))
        let allow = "run the command again with --allow-untrusted (for this command only, nothing is pinned)"
        if why.contains(where: { if case .unsignedAfterSigned = $0 { return true } else { return false } }) {
            // `vaultfile trust` cannot pin an unsigned copy: the way back is the members' signed copy.
            return "this machine has seen the vault signed, and an unsigned copy cannot be pinned: take the members' signed copy back "
                + "(the copy you trust; or \(allow)); in git: git checkout HEAD -- \(path)"
        }
        if why.contains(where: \.namesAnOutsider) {
            // The safe way back is the command to paste; pinning is for a member's word only.
            return "this copy may have been planted by someone who was removed, whose key was replaced, or who is no member: take the "
                + "genuine copy back (the copy you trust); only if a member confirms that it is theirs, \(allow), or pin it with "
                + "'vaultfile trust --vault' and its path after comparing its fingerprints with theirs; in git, this takes the genuine copy "
                + "back: git checkout HEAD -- \(path)"
        }
        if why.allSatisfy({ if case .diverged = $0 { return true } else { return false } }) {
            return "combine it with the copy seen here (or \(allow)): \(mergeCommand(named, named))"
        }
        return "if a member confirms the fingerprints, pin this copy (or \(allow)); this shows them and asks: vaultfile trust --vault \(path)"
    }

    /// The path `vaultfile trust --vault` takes, from a path as the user gave it or a merge side named
    /// "ROLE (…) at PATH" (`VaultStore.MergeRoles`): the path as given, relative or not.
    static func trustPath(_ named: String) -> String {
        let parts = named.split(separator: ") at ", maxSplits: 1, omittingEmptySubsequences: false)
        guard ["BASE ", "OURS ", "THEIRS "].contains(where: { named.hasPrefix($0) }), parts.count == 2 else { return named }
        return String(parts[1])
    }

    /// What to do with a copy the key lineage refuses (`LineageRefusal`), after a refused write or
    /// beside the warning of a read; `listing` when the command is `slot list` itself (no hint to run it).
    static func hint(for why: LineageRefusal, listing: Bool = false) -> String {
        let check = listing ? "compare the keyslots listed with those of your own copy" : "check who can open it with 'vaultfile slot list'"
        switch why {
        case .supersededFileKey:
            return "write to the newer copy instead; if this one is to be kept, \(check) and run 'vaultfile rekey' on it (a merge "
                + "refuses it unless --accept-rotation, since its entries may be someone else's)"
        case .retiredSlotKey, .holdsRetiredSlotKey, .unknownLineage:
            let compare: String
            if case .unknownLineage(_, let expected) = why {
                compare = expected.isEmpty ? "" : " (the x25519: fingerprint above is in the FINGERPRINT column of your own copy's list)"
            } else {
                compare = " (an x25519: fingerprint above is in its FINGERPRINT column, an age1… or SHA256: one in its RECIPIENT column)"
            }
            return "write no secret into it before you know where it came from: \(check)\(compare); if it is a rotation you or another "
                + "member made on another machine, or a member removed and then given a slot again on purpose, run the command again with "
                + "--accept-rotation (this machine then takes it); else put your own copy back (a backup, 'git checkout') and do not "
                + "merge this one: 'vaultfile merge' refuses it, since its entries may be someone else's"
        case .wouldKeepRetiredSlotKey(let slots, _, _):
            let command = "'vaultfile slot rm \(slots.first ?? 0)" + slots.dropFirst().map { " --drop-slot \($0)" }.joined() + "'"
            return "remove \(slots.count == 1 ? "that slot" : "those slots") in one rotation with \(command) (for a password or keyfile slot "
                + "of your own, open the copy with it instead: "
                + "a rotation gives the slot that opens it a new key); if the slot was given back on purpose, run the command again "
                + "with --accept-rotation"
        case .wouldKeepUnseenSlots(let slots):
            let command = "'vaultfile slot rm \(slots.first?.index ?? 0)" + slots.dropFirst().map { " --drop-slot \($0.index)" }.joined() + "'"
            return "drop \(slots.count == 1 ? "that slot" : "those slots") in the same rotation: \(command), with --drop-slot N for "
                + "any other slot to remove (the one this command was removing included); \(check) first; if a member added the "
                + "slot on purpose, run the command again with --accept-rotation"
        }
    }
}
