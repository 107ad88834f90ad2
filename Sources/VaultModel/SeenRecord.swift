// MARK: - What this machine recorded about one vault

/// What was recorded about one vault (`SeenGenerations.Record`, read and written by State): declared
/// here, beside `VaultError`, whose `staleCopy` names the newer copy that was seen.
public struct SeenRecord: Equatable, Sendable {
    /// The highest generation seen.
    public var generation: UInt64
    /// BLAKE2b-256 of the whole header of that generation (`headerHash(_:)`).
    public var headerHash: [UInt8]
    /// When it was first seen, in seconds since 1970 (UTC).
    public var seen: Int64
    /// The absolute path it was seen at.
    public var path: String

    /// A record of these values.
    public init(generation: UInt64, headerHash: [UInt8], seen: Int64, path: String) {
        self.generation = generation
        self.headerHash = headerHash
        self.seen = seen
        self.path = path
    }

    /// `seen` as people read it: `2026-05-01 12:00:00 UTC`.
    public var seenText: String { utcText(seconds: seen) }
}
