@testable import VaultFile
@testable import VaultModel

// MARK: - The plain reference of separateTwins

// Test-only: `VaultMergeTests.test_separateTwins_agreesWithTheReference` ties `separateTwins`
// (Merge/VaultMerge+Twins.swift) to this.

extension VaultMerge {
    /// The plain reference of `separateTwins`: every name of the result normalized and indexed,
    /// the incoming ones found by looking each name up in the three sides. Kept for
    /// `VaultMergeTests.test_separateTwins_agreesWithTheReference`.
    static func separateTwinsReference(in result: inout Vault, base: Vault, ours: Vault, theirs: Vault,
                              conflicts: inout [Conflict]) throws(VaultError) {
        let incoming = result.names.filter { name in
            let key = Array(name.utf8)
            return theirs.contains(key: key) && !ours.contains(key: key) && !base.contains(key: key)
        }
        guard !incoming.isEmpty else { return }
        // By bytes throughout: Swift's String equality and hashing would take two spellings for one.
        var spellings: [[UInt8]: [String]] = [:]  // NFC bytes → the names of the result with that form
        for name in result.names { spellings[Array(EntryName.normalized(name).utf8), default: []].append(name) }
        for name in incoming {
            let normalized = EntryName.normalized(name)
            let key = Array(normalized.utf8)
            let twins = spellings[key, default: []].filter { !$0.utf8.elementsEqual(name.utf8) }
            if twins.isEmpty {
                guard !key.elementsEqual(name.utf8) else { continue }
                try move(name, to: normalized, in: &result)
                spellings[key] = [normalized]
                continue
            }
            if twins.count == 1, let twin = twins.first, ours.contains(key: Array(twin.utf8)) {
                let parked = twin + conflictSuffix
                if !result.contains(key: Array(parked.utf8)) {
                    try move(name, to: parked, in: &result)
                    conflicts.append(Conflict(name: twin, reason: "their side added \(EntryName.spelledOut(name)), the same name in another "
                                              + "Unicode form (\(EntryName.spelledOut(twin)) here); theirs is in '\(parked)'"))
                    continue
                }
            }
            let others = twins.map(EntryName.spelledOut).joined(separator: ", ")
            conflicts.append(Conflict(name: name, reason: "the same name as \(others) in another Unicode form; both entries are kept, "
                                      + "rename one with 'vaultfile mv'"))
        }
    }
}
