#if canImport(Glibc)
import Glibc
#endif
import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The one unlock-and-seal pipeline

/// Every command that opens a vault comes through here: read (no lock), edit (under the lock,
/// sealed when anything changed) and replace-keys (under the lock, always sealed: a rotation).
/// Each takes the lock at most once, reads the header once, unlocks it with an `Unlocker` (a
/// known key, the agent's, then the unlock sources), and runs the rollback check's steps in one
/// order: `opened` after the unlock, `willWrite` before a new version is written, `finished`
/// once the lock is released, with the header then on disk.
extension VaultStore {
    /// A step of the pipeline, for tests that count them (`onStep`).
    enum AccessStep: Sendable {
        /// The vault's lock was taken.
        case locked
        /// The vault's header was read from the file.
        case readHeader
    }

    /// Reads and unlocks the vault without taking the lock (a reader sees the old or the new file,
    /// never a mix: writers rename whole files), honouring `readsEntriesOnly`.
    ///
    /// With `rollback`, the vault is compared with what this machine has seen of it and the record raised.
    public func read(with unlocker: Unlocker, rollback: RollbackCheck? = nil) throws -> UnlockedVault {
        try access(locked: false, entriesOnly: readsEntriesOnly, unlocker, rollback) { unlocked in (unlocked, nil) }
    }

    /// Locks, opens, runs `edit`, and re-seals the vault if anything changed (its entries, or its
    /// keyslots: `addSlot`).
    ///
    /// An unchanged vault is not rewritten (no churn in git). Concurrent writers wait on the lock,
    /// so none loses an update. The unlocker runs under the lock, on the header that will be
    /// replaced, so a key rotated by a `passwd` that finished just before is never used on the new
    /// file. With `rollback`, a write to a copy older than one seen here (or sealed under a retired
    /// file key) is refused before anything is written, and the new generation is recorded after the rename.
    public func edit<R>(with unlocker: Unlocker, rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R) throws -> R {
        try access(locked: true, entriesOnly: false, unlocker, rollback) { unlocked in
            let result = try edit(unlocked)
            return (result, unlocked.hasChanges ? unlocked : nil)
        }
    }

    /// Locks, opens, and writes the vault `change` makes of it (a rotation: `UnlockedVault.rotated`,
    /// `changePassword`), all under the lock. Returns what `change` returns beside the vault.
    ///
    /// `rotated` receives the written header, its file key and the key it replaced once the new
    /// file is in place, when the key changed (`passwd`, `slot rm`, `rekey`): an agent that holds
    /// the old key is handed the new one beside it, with the old one as proof (docs/AGENT.md).
    public func replaceKeys<R>(
        with unlocker: Unlocker, rollback: RollbackCheck? = nil, rotated: ((VaultHeader, SecureBytes, SecureBytes) -> Void)? = nil,
        _ change: (UnlockedVault) throws -> (vault: UnlockedVault, result: R)
    ) throws -> R {
        var keys: (old: SecureBytes, new: UnlockedVault)?
        let result = try access(locked: true, entriesOnly: false, unlocker, rollback) { unlocked in
            let (next, result) = try change(unlocked)
            keys = (unlocked.fileKey, next)
            return (result, next)
        }
        if let keys, !keys.new.fileKey.constantTimeEquals(keys.old) { rotated?(keys.new.header, keys.new.fileKey, keys.old) }
        return result
    }

    /// Unwraps the file key with `unlocker` and checks the header MAC under it, reading only the
    /// header (`vaultfile unlock`: the key goes to the agent, nothing is decrypted). Returns the
    /// header too, for its vault id and KDF settings, and the slot that opened (nil for a key
    /// the unlocker knew or looked up). `preferringSigner`: in a signed vault the slots that can sign
    /// are tried first, as a write tries them, so that the agent can sign writes (`Unlocker.unlock`).
    public func unlockFileKey(with unlocker: Unlocker, preferringSigner: Bool = false)
        throws -> (header: VaultHeader, fileKey: SecureBytes, opened: OpenedSlot?) {
        var opened = try openHeader()
        var noLock: FileLock?
        let (fileKey, slot) = try unlock(&opened, with: unlocker, lock: &noLock, preferringSigner: preferringSigner)
        return (opened.header, fileKey, slot)
    }

    // MARK: Reading the header

    /// Reads only the header (no secret needed) and the file size.
    public func readHeader() throws -> (header: VaultHeader, fileSize: Int, headerLength: Int) {
        let opened = try openHeader()
        return (opened.header, opened.file.size, opened.headerLength)
    }

    /// Opens the vault file (its type and size checked before a byte is read) and parses its
    /// header from at most `VaultHeader.maxLength` bytes: nothing reads a whole vault file.
    func openHeader() throws(VaultError) -> (file: OpenedFile, header: VaultHeader, headerLength: Int) {
        onStep?(.readHeader)
        let file = try OpenedFile(path: path)
        // The header is at most `VaultHeader.maxLength` bytes: parsed from the file's first bytes,
        // it gives the same verdicts and messages as when parsed from the whole file.
        let head = try file.read(min(file.size, VaultHeader.maxLength), at: 0)
        let (header, headerLength) = try VaultHeader.parse(head, path: path)
        return (file, header, headerLength)
    }

    // MARK: Private

    /// A vault file opened and its header parsed (`openHeader`).
    private typealias OpenedHeader = (file: OpenedFile, header: VaultHeader, headerLength: Int)

    /// The pipeline: (lock,) header, unlock, the payload read chunk by chunk as it is decrypted
    /// (never held whole beside the plaintext), `rollback.opened`, `body`; when `body` returns a
    /// vault to write, `rollback.willWrite` and the atomic replace of the file that was read;
    /// `rollback.finished` with the header on disk once the lock is released.
    private func access<R>(
        locked: Bool, entriesOnly: Bool, _ unlocker: Unlocker, _ rollback: RollbackCheck?,
        _ body: (UnlockedVault) throws -> (result: R, write: UnlockedVault?)
    ) throws -> R {
        // The header of the file on disk: the one unlocked, until a rename puts the new one there.
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        var lock = locked ? try takeLock() : nil
        defer { lock?.release() }
        var opened = try openHeader()
        var resolved = unlocker
        // A write (under the lock) to a signed vault tries first the slots that can sign its seal.
        resolved.unlocked = try unlock(&opened, with: unlocker, lock: &lock, preferringSigner: locked)
        var payload = FileCiphertext(opened.file, from: opened.headerLength, entriesOnly: entriesOnly)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, with: resolved)
        onDisk = unlocked.header
        rollback?.opened(unlocked)
        let (result, next) = try body(unlocked)
        if let next {
            try rollback?.willWrite(next, path: path)
            try replace(opened.file, with: next)
            onDisk = next.header
        }
        return result
    }

    /// Seals `next` over `file`, the vault read. An import's records in runs on disk beside the
    /// vault (`RecordRuns`) take room in its folder while the new vault is written: when the write
    /// finds no room (ENOSPC, EDQUOT), the records are brought into memory, their file freed, and
    /// the vault sealed once more (the failed temporary file is gone: `AtomicFileWriter`), so an
    /// import never needs more room than the new vault, as before runs. A second failure says so.
    private func replace(_ file: OpenedFile, with next: UnlockedVault) throws(VaultError) {
        let seal = { () throws(VaultError) in
            try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try next.seal(to: output) }
        }
        do {
            try seal()
        } catch {
            guard error.isOutOfSpace, try next.vault.moveIncomingIntoMemory() else { throw error }
            do throws(VaultError) { try seal() } catch {
                guard error.isOutOfSpace, case .io(_, _, let code) = error else { throw error }
                throw .io(operation: "writing the new vault (the import's records already brought into memory to make room) in",
                          path: destination.directory, errno: code)
            }
        }
    }

    /// Unlocks the header just read: a known key or the agent's, else the unlock sources.
    ///
    /// Sources read only now (the agent had no key) may prompt or run a command, which takes as
    /// long as a person or the command takes: they are read without the vault's lock (other
    /// writers do not wait on someone typing; the lock is taken again after), and a file that
    /// changed meanwhile is read again, so that what opens is the vault as it is once they are in
    /// hand, never a copy a writer replaced or a `passwd` rotated away meanwhile. When the file did
    /// not change, its header is not read twice.
    ///
    /// A later step of the sources (`Unlocker.Credentials.next`: the command line's password prompt
    /// after its default identity) is asked the same way: without the lock, the file read again
    /// when it changed meanwhile, the step's sources tried on the header read then.
    ///
    /// `preferringSigner` for a write: a signed vault's slots that can sign are tried first (`Unlocker.unlock`).
    private func unlock(_ opened: inout OpenedHeader, with unlocker: Unlocker, lock: inout FileLock?,
                        preferringSigner: Bool = false) throws -> Unlocker.Unlocked {
        if let key = try unlocker.verifiedKey(for: opened.header) { return (key, nil) }
        let sources = unlocker.credentialsInHand ? try unlocker.readCredentials() : try withoutLock(&opened, &lock) { try unlocker.readCredentials() }
        var current = opened
        var held = lock
        defer { opened = current; lock = held }
        return try Unlocker.unlock(opened.header, with: sources, preferringSigner: preferringSigner) { _, step in
            let more = try withoutLock(&current, &held, step)
            return (current.header, more)
        }
    }

    /// Runs `body` (which may prompt or run a command) without the vault's lock when it is held,
    /// taking it again after; reads the file again when it changed meanwhile.
    private func withoutLock<T>(_ opened: inout OpenedHeader, _ lock: inout FileLock?, _ body: () throws -> T) throws -> T {
        let relock = lock != nil
        lock?.release()
        lock = nil
        let result = try body()
        if relock { lock = try takeLock() }
        if !isStill(opened.file) { opened = try openHeader() }
        return result
    }

    /// Whether the vault's path still names `file`, unchanged (device, inode, size, modification time).
    private func isStill(_ file: OpenedFile) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && FileIdentity(info) == file.identity
    }
}
