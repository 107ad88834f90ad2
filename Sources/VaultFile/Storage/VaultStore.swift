#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - A vault file on disk

/// Reads, locks and atomically replaces one vault file.
///
/// Writes go through `AtomicFileWriter`: a temporary file in the same folder, written
/// in full, synced, checked against the vault on disk, renamed over it, and a sync of
/// the folder. On any failure the vault is left byte-identical. A symlinked vault path
/// replaces the link's target. A new version keeps the vault's mode, owner and group,
/// and the lock file is given the vault's owner, so that root editing someone's vault
/// does not lock them out. The whole operations are `create` (VaultStore+Create.swift) and the
/// one pipeline of read, edit and replace-keys (VaultStore+Access.swift).
public struct VaultStore: Sendable {
    /// The path as the user gave it.
    public let path: String
    /// How long to wait for the lock, in seconds.
    public let lockTimeout: Double
    /// Writes the new versions of the vault.
    let writer: AtomicFileWriter
    /// For a reader that never looks at history (`get`): the read-only opens (`read(with:)`, never
    /// `edit`) then authenticate a format 1.2 vault's history section without keeping it, so
    /// that a large history costs its decryption only; the vault they return cannot be sealed
    /// and has no history to read.
    public var readsEntriesOnly = false
    /// Told once when a writer has waited a second for the lock, with the process holding it when
    /// the kernel lists it: the command says what it waits for (the library prints nothing).
    public var onLockWait: (@Sendable (LockHolder?) -> Void)?
    /// Told of each lock taken and each header read (tests count them: one of each per command).
    var onStep: (@Sendable (AccessStep) -> Void)?

    /// A store for the vault at `path`.
    public init(path: String, lockTimeout: Double = 10) {
        self.init(path: path, lockTimeout: lockTimeout, system: .live)
    }

    /// A store whose writes make the system calls of `system` (tests inject failures).
    init(path: String, lockTimeout: Double = 10, system: SystemCalls) {
        self.path = path
        self.lockTimeout = lockTimeout
        writer = AtomicFileWriter(system: system)
    }

    /// Whether a file exists at `path` (following symlinks).
    public var exists: Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The sidecar lock file held across read-modify-write: `<vault>.lock`, beside the symlink's target.
    var lockPath: String { destination.target + ".lock" }

    /// Where writes land: a symlinked vault path replaces the link's target.
    var destination: AtomicFileWriter.Destination { AtomicFileWriter.Destination(path: path, finalLink: .follow) }

    // MARK: Reading

    /// The bytes of the vault and the identity of the file they came from.
    struct Snapshot: Sendable {
        /// Every byte of the file.
        let bytes: [UInt8]
        /// Device, inode, size and modification time when read.
        let identity: FileIdentity
        /// The file's permission bits.
        let mode: mode_t
    }

    /// Reads the whole vault file, refusing files larger than the format allows.
    ///
    /// For tests, which compare files byte for byte: commands never hold a whole vault file in
    /// memory (they parse the header with `openHeader` and stream the payload).
    func read() throws(VaultError) -> Snapshot {
        let file = try OpenedFile(path: path)
        return Snapshot(bytes: try file.read(file.size, at: 0), identity: file.identity, mode: file.mode)
    }

    // MARK: Writing

    /// Creates the vault from what `contents` writes; never replaces an existing file.
    ///
    /// The temporary file is hard-linked into place, which fails if the name
    /// exists, so two `init`s cannot both succeed.
    func create(_ contents: (any SealedOutput) throws(VaultError) -> Void) throws(VaultError) {
        let lock = try FileLock(path: lockPath, timeout: lockTimeout, waiting: onLockWait)
        defer { lock.release() }
        if exists { throw .vaultExists(path: path) }
        try writer.write(to: destination, mode: 0o600, replacing: .none, keepingOwner: false, contents)
    }

    /// Replaces the vault with what `contents` writes, with permission bits `mode`, if it is
    /// still the file `identity` names. Call while holding the lock (see `withLock`).
    func replace(
        expecting identity: FileIdentity, mode: mode_t, _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) {
        let destination = self.destination
        writer.removeStaleTemporaries(of: destination)
        try writer.write(to: destination, mode: mode, replacing: .only(identity), keepingOwner: true, contents)
    }

    /// Runs `body` while holding the vault's lock, waiting up to `lockTimeout` seconds for it.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        let lock = try takeLock()
        defer { lock.release() }
        return try body()
    }

    /// Takes the vault's lock, waiting up to `lockTimeout` seconds for it; the caller releases it.
    func takeLock() throws(VaultError) -> FileLock {
        let target = destination.target
        let lock = try FileLock(path: target + ".lock", timeout: lockTimeout, owner: FileOwner(ofFileAt: target), waiting: onLockWait)
        onStep?(.locked)
        return lock
    }
}
