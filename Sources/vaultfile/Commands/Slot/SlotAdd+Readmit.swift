import VaultFile
import VaultFormat
import VaultModel

// MARK: - A removed key added back only on purpose

/// `slot add --readmit`: a key the vault's signed copy records as removed, or whose removal this
/// machine learned (`MemberTrust`), is added back only with the flag; then the copy's tombstone of
/// it is dropped (its next seal no longer says it was removed) and, once written, this machine
/// forgets the removal too. Other machines that learned the removal refuse the copy until their
/// `vaultfile trust`.
final class Readmission {
    /// Whether `--readmit` was given.
    let allowed: Bool
    /// The vault and the member key ids readmitted, once a slot was checked.
    private var vaultID: [UInt8] = []
    private var readmitted: [[UInt8]] = []

    init(allowed: Bool) {
        self.allowed = allowed
    }

    /// After a slot was added to `unlocked` (the last one): refuses it (exit 2) when its key was
    /// removed and `--readmit` was not given; with it, drops the copy's tombstone of the key.
    func check(_ unlocked: UnlockedVault, path: String) throws {
        guard let key = unlocked.slotMetadata?.last?.publicKey, !key.isEmpty else { return }
        let id = MemberKey.id(of: key)
        let carried = unlocked.carriedTombstones.first { $0.removed == id }?.generation
        let learned = Self.learnedRemoval(of: id, vault: unlocked.header.vaultID)
        guard let generation = carried ?? learned else { return }
        guard allowed else {
            throw VaultError.slotChangeRefused("that key (\(MemberKey(type: unlocked.slotMetadata?.last?.type ?? 0, bytes: key).fingerprint)) "
                + "was removed from \(path) at generation \(generation); add it back on purpose with --readmit")
        }
        unlocked.dropTombstones(of: id)
        vaultID = unlocked.header.vaultID
        readmitted.append(id)
    }

    /// Once the slots are written: this machine forgets the removals of the keys readmitted.
    func forgetRemovals() {
        guard !readmitted.isEmpty, let state = try? StateFolder.usable(writing: false) else { return }
        do {
            try MemberTrust(state: state).update(vaultID) { record in
                for id in readmitted { record.readmit(id) }
            }
        } catch {
            StateWarning.show(error)
        }
    }

    /// The generation at which this machine learned that `id` was removed from vault `vaultID`, or nil.
    private static func learnedRemoval(of id: [UInt8], vault vaultID: [UInt8]) -> UInt64? {
        guard let state = try? StateFolder.usable(writing: false), let record = (try? MemberTrust(state: state).record(of: vaultID)) ?? nil else { return nil }
        return record.removed.first { $0.id == id }?.generation
    }
}

