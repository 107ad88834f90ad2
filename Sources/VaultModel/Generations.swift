// MARK: - Which generations are plausible

/// The bounds on a vault's generation counter (docs/FORMAT.md §2.1), so that no copy, made by
/// anyone, can leave a vault its members cannot write.
///
/// A genuine vault climbs by one per seal and never comes near 2^63. A member who crafts a copy
/// at 2^64 − 1 (by raising their own record and writing with `--allow-rollback`, or with the
/// library) would otherwise make every later seal of it impossible and every genuine copy look
/// older. So: no writer seals above `ceiling`; a reader never records a generation above it, nor
/// one more than `maxJump` past its record; such a copy makes no other copy older, a write to it
/// is refused, and a merge or `--allow-rollback` that chooses a new generation ignores it.
public enum Generations {
    /// The largest generation a writer seals: 2^63.
    public static let ceiling: UInt64 = 1 << 63
    /// The most a generation may rise past the one recorded on this machine: 2^32.
    public static let maxJump: UInt64 = 1 << 32

    /// Whether `generation` is a plausible successor of `record` (of anything, without one): at
    /// most `ceiling`, and at most `maxJump` past the generation recorded.
    public static func isPlausible(_ generation: UInt64, after record: SeenRecord?) -> Bool {
        isPlausible(generation, afterGeneration: record?.generation)
    }

    /// The same rule against a generation seen (`highest`; nil: none was).
    public static func isPlausible(_ generation: UInt64, afterGeneration highest: UInt64?) -> Bool {
        guard generation <= ceiling else { return false }
        guard let highest else { return true }
        let (limit, overflow) = highest.addingReportingOverflow(maxJump)
        return overflow || generation <= limit
    }

    /// The generation a merge or `--allow-rollback` seals one past: the largest of `generations`
    /// (the sides') that is plausible after `record` and below the ceiling, and of the generation
    /// recorded when it is below the ceiling; 0 when none is (the seal then writes 1).
    ///
    /// A generation at the ceiling is left out too: no seal can pass it. A record there was made
    /// by a crafted copy opened first on this machine, and the write that ignores it replaces it
    /// (`SeenGenerations.note`).
    public static func successorBase(of generations: [UInt64], record: SeenRecord?) -> UInt64 {
        var base: UInt64 = 0
        for generation in generations where generation < ceiling && isPlausible(generation, after: record) {
            base = max(base, generation)
        }
        if let record, record.generation < ceiling { base = max(base, record.generation) }
        return base
    }

    /// Why `generation` is no plausible successor of `seen` (a clause of a message).
    public static func implausibility(of generation: UInt64, seen: SeenRecord?) -> String {
        guard generation <= ceiling, let seen else { return "above 2^63, the largest generation a writer seals" }
        return "more than 2^32 past generation \(seen.generation), which was seen here on \(seen.seenText) (at \(seen.path))"
    }
}
