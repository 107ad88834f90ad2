// MARK: - Limits

/// The documented limits of a vault, enforced on read and on write.
public enum VaultLimits {
    /// The most entries one vault holds.
    public static let maxEntries = 1_000_000
    /// The longest entry name, in UTF-8 bytes.
    public static let maxNameLength = 1_024
    /// The longest field name, in bytes.
    public static let maxFieldNameLength = 64
    /// The most named fields per entry.
    public static let maxFieldsPerEntry = 64
    /// The largest value (or field value), in bytes.
    public static let maxValueLength = 256 << 20
    /// The largest encoded content of a vault, in bytes.
    public static let maxContentLength = 1 << 30
    /// The largest vault file this build reads.
    public static let maxFileLength = (1 << 30) + (1 << 25)
}
