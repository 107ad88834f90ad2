#if canImport(Glibc)
import Glibc
#endif

// MARK: - Entry

/// One secret: a value, optional named fields, and its times.
public struct Entry: Equatable, Sendable {
    /// The main value: arbitrary bytes.
    public var value: [UInt8]
    /// Named fields (username, url, notes, totp, …): arbitrary bytes each.
    public var fields: [String: [UInt8]]
    /// When the entry was created, in milliseconds since the Unix epoch.
    public var created: Int64
    /// When the entry last changed, in milliseconds since the Unix epoch.
    public var modified: Int64

    /// Creates an entry.
    public init(value: [UInt8], fields: [String: [UInt8]] = [:], created: Int64, modified: Int64) {
        self.value = value
        self.fields = fields
        self.created = created
        self.modified = modified
    }
}

// MARK: - Time

/// The wall-clock time in milliseconds since the Unix epoch.
public func currentTimeMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
