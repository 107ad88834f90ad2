import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Reuse

/// The keyed hashes of the secrets seen so far, to group equal ones without keeping or comparing
/// the secrets themselves.
///
/// Each secret is hashed (BLAKE2b under a random key made for this audit, so the hashes are of no
/// use once the key is gone) twice: whole, and without the digits at its end (its stem, when 3
/// bytes or more are left): `hunter`, `hunter2` and `hunter2024` share a stem. Entries with equal
/// hashes form a reuse group; entries with equal stems and different secrets a near-reuse group.
/// The hashes lie in two flat arrays, sized up front and wiped by `wipeAll`.
struct ReuseIndex {
    private let key = SecureBytes(count: 32)
    private var exact: [UInt8] = []
    private var stems: [UInt8] = []
    private var hasStem: [Bool] = []
    private var entries: [Int] = []

    /// A stem shorter than this is no sign of reuse (`ab1`, `ab2`).
    static let shortestStem = 3

    /// An index with room for `capacity` secrets, so that the arrays never move (a move would leave
    /// a copy of the hashes behind, unwiped).
    init(capacity: Int = 0) {
        exact.reserveCapacity(capacity * 32)
        stems.reserveCapacity(capacity * 32)
        var random = randomBytes(count: 32)
        defer { wipe(&random) }
        key.withUnsafeMutableBytes { $0.copyBytes(from: random) }
    }

    /// Adds the secret of the finding at `entry`.
    mutating func add(_ secret: UnsafeRawBufferPointer, entry: Int) {
        var digest = KeyedHash.blake2b256(secret, key: key)
        exact += digest
        wipe(&digest)
        var end = secret.count
        while end > 0 && (0x30...0x39).contains(secret[end - 1]) { end -= 1 }
        if end >= Self.shortestStem {
            var stem = KeyedHash.blake2b256(UnsafeRawBufferPointer(rebasing: secret[..<end]), key: key)
            stems += stem
            wipe(&stem)
            hasStem.append(true)
        } else {
            stems += [UInt8](repeating: 0, count: 32)
            hasStem.append(false)
        }
        entries.append(entry)
    }

    /// Numbers the groups from 1, in the order of their first entry, and marks each member.
    func assignGroups(to findings: inout [AuditFinding]) {
        var groups: [(members: [Int], near: Bool)] = []
        for run in runs(of: exact, among: Array(entries.indices)) where run.count >= 2 { groups.append((run, false)) }
        for run in runs(of: stems, among: entries.indices.filter { hasStem[$0] }) where run.count >= 2 {
            let first = slice(exact, run[0])
            if run.contains(where: { !slice(exact, $0).elementsEqual(first) }) { groups.append((run, true)) }
        }
        groups.sort { $0.members.min()! < $1.members.min()! }
        for (number, group) in groups.enumerated() {
            let label = ReuseGroup(number: number + 1, size: group.members.count)
            for member in group.members {
                if group.near { findings[entries[member]].nearReuse = label } else { findings[entries[member]].reuse = label }
            }
        }
    }

    /// The hash of the `index`th secret in `hashes`.
    private func slice(_ hashes: [UInt8], _ index: Int) -> ArraySlice<UInt8> { hashes[index * 32..<index * 32 + 32] }

    /// The runs of equal hashes among `indices`, each sorted.
    private func runs(of hashes: [UInt8], among indices: [Int]) -> [[Int]] {
        let sorted = indices.sorted { a, b in
            let left = slice(hashes, a), right = slice(hashes, b)
            return left.lexicographicallyPrecedes(right) || (left.elementsEqual(right) && a < b)
        }
        var runs: [[Int]] = []
        for index in sorted {
            if let last = runs.last?.last, slice(hashes, last).elementsEqual(slice(hashes, index)) {
                runs[runs.count - 1].append(index)
            } else {
                runs.append([index])
            }
        }
        return runs
    }

    /// Wipes every hash kept.
    mutating func wipeAll() {
        wipe(&exact)
        wipe(&stems)
    }
}
