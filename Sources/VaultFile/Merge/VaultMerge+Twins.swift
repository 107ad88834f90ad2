import VaultModel

// MARK: - Names a merge brings in

extension VaultMerge {
    /// Stores in NFC the names the merge brings in from their side (in neither base nor ours), as
    /// every new name is stored (EntryName+Normalization.swift), and keeps canonical twins apart.
    ///
    /// A name brought in that is the same text as another entry of the result in another Unicode
    /// form is never collapsed into it: that would lose one of the two entries. It is a conflict;
    /// when the twin is ours, theirs moves to `TWIN.conflict-theirs`, so that `resolve TWIN --ours`
    /// or `--theirs` settles it as any other conflict; otherwise both stay where they are.
    ///
    /// `incoming` are those names, in name order (the merge walk finds them: in theirs, in neither
    /// base nor ours). Only names with a byte of 0x80 or more can be another spelling of a name
    /// (an ASCII name is its own NFC), so only they are normalized and indexed; an ASCII spelling
    /// is found by its bytes. The whole vault's names were normalized here before: 47 % of a
    /// merge of two 100,000-entry sides.
    ///
    /// Returns the names moved to their NFC form (old bytes, new bytes): the merge moves their
    /// history after it, once the sides' histories are merged (`Vault.moveHistory`).
    @discardableResult
    static func separateTwins(in result: inout Vault, incoming: [String], ours: Vault,
                              conflicts: inout [Conflict]) throws(VaultError) -> [(from: [UInt8], to: [UInt8])] {
        guard !incoming.isEmpty else { return [] }
        var moved: [(from: [UInt8], to: [UInt8])] = []
        // By bytes throughout: Swift's String equality and hashing would take two spellings for one.
        // NFC bytes → the non-ASCII names of the result with that form, in name order.
        var spellings: [[UInt8]: [String]] = [:]
        result.forEachRecord { record in
            guard record.withName(Vault.hasNonASCII) else { return }
            let name = record.name
            spellings[Array(EntryName.normalized(name).utf8), default: []].append(name)
        }
        // ASCII names are looked up in the result itself; as in `separateTwinsReference` (the tests' plain reference), a name an
        // entry is parked under below does not count. (An ASCII name parked away is never looked up
        // again: every other spelling of it was in the result from the start, hence its twin then.)
        var parkedInto: Set<[UInt8]> = []
        func hasASCIISpelling(_ key: [UInt8]) -> Bool {
            guard !key.withUnsafeBytes(Vault.hasNonASCII) else { return false }
            return result.contains(key: key) && !parkedInto.contains(key)
        }
        for name in incoming {
            let normalized = EntryName.normalized(name)
            let key = Array(normalized.utf8)
            // An ASCII spelling sorts before every other spelling of the same text.
            let asciiSpelling = hasASCIISpelling(key) ? [normalized] : []
            let twins = (asciiSpelling + spellings[key, default: []]).filter { !$0.utf8.elementsEqual(name.utf8) }
            if twins.isEmpty {
                guard !key.elementsEqual(name.utf8) else { continue }
                try move(name, to: normalized, in: &result)
                moved.append((Array(name.utf8), key))
                if key.withUnsafeBytes(Vault.hasNonASCII) {
                    spellings[key] = [normalized]
                } else {
                    spellings[key] = nil
                    parkedInto.remove(key)
                }
                continue
            }
            if twins.count == 1, let twin = twins.first, ours.contains(key: Array(twin.utf8)) {
                let parked = twin + conflictSuffix
                if !result.contains(key: Array(parked.utf8)) {
                    try move(name, to: parked, in: &result)
                    parkedInto.insert(Array(parked.utf8))
                    conflicts.append(Conflict(name: twin, reason: "their side added \(EntryName.spelledOut(name)), the same name in another "
                                              + "Unicode form (\(EntryName.spelledOut(twin)) here); theirs is in '\(parked)'"))
                    continue
                }
            }
            let others = twins.map(EntryName.spelledOut).joined(separator: ", ")
            conflicts.append(Conflict(name: name, reason: "the same name as \(others) in another Unicode form; both entries are kept, "
                                      + "rename one with 'vaultfile mv'"))
        }
        return moved
    }

    /// Moves the entry `name` (exact bytes) to `target` (exact bytes).
    static func move(_ name: String, to target: String, in vault: inout Vault) throws(VaultError) {
        guard let entry = vault.entry(forKey: Array(name.utf8)) else { return }
        try vault.remove(name)
        try vault.put(entry, as: target)
    }
}
