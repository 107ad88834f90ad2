import VaultModel

// MARK: - Stores that are folders of files (pass, passage)

/// One decrypted file of a store that is a folder (`import --format pass DIR`): the CLI finds the
/// files and decrypts each with the user's own tool (Sources/vaultfile/Support/Import/), then a
/// reader of the library parses them into a `ForeignImport` (it spawns nothing).
public struct ForeignStoreFile: Sendable {
    /// The file's path under the store, one part per folder, the last without its extension
    /// (`work/db.gpg` → `["work", "db"]`): the folders and title of its item.
    public var path: [String]
    /// The decrypted bytes (wiped by whoever owns them after the read).
    public var bytes: [UInt8]

    /// Creates a file of a store.
    public init(path: [String], bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }
}
