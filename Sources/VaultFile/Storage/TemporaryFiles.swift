#if canImport(Glibc)
import Glibc
#endif
import Synchronization

// MARK: - Temporary files a signal handler may remove

/// The temporary files of the atomic writes in progress (`AtomicFileWriter`), kept where a signal
/// handler can reach them: `removeAll()` unlinks every one with async-signal-safe calls only
/// (atomic loads and stores, `unlinkat(2)`), so the executable's handler for SIGINT, SIGTERM,
/// SIGHUP… can remove them before the process ends. Without it a killed `export --out` leaves
/// its `.NAME.vaultfile-tmp-*` file (plain text for most formats) beside the target.
///
/// A name is registered before its file is created and withdrawn once it was renamed into place
/// or removed, so at every instant a file that exists under a temporary name is registered. A
/// fixed number of slots, allocated once (`prepare`, before any handler is installed): a write
/// that finds none free simply goes unregistered, as every write did before. The library never
/// installs a handler itself.
package enum TemporaryFiles {
    /// One registered name: the folder descriptor it is relative to and the name, NUL-terminated.
    private final class Slot: @unchecked Sendable {
        /// 0 free, 1 being filled, 2 registered, 3 taken by `removeAll`.
        let state = Atomic<Int>(0)
        let folder = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        let name = UnsafeMutablePointer<CChar>.allocate(capacity: TemporaryFiles.nameCapacity)
    }

    /// The longest name (with its NUL) a slot holds: a whole path, for writes made by path.
    static let nameCapacity = Int(PATH_MAX)
    private static let slots: [Slot] = (0..<16).map { _ in Slot() }
    /// Set by `removeAll`: a registration made after it never creates its file.
    private static let cleaning = Atomic<Bool>(false)

    /// Allocates the slots now, so that a signal handler never runs Swift's lazy initialisation.
    package static func prepare() {
        _ = slots.count
        _ = cleaning.load(ordering: .relaxed)
    }

    /// Registers the file `name` of the folder open as `folder` (`AT_FDCWD` for a path); call
    /// before creating it. Returns the slot to `withdraw`, or nil when none was free or the name is
    /// too long. When a removal has begun, never returns: the process is about to exit.
    static func register(folder: Int32, name: String) -> Int? {
        let bytes = Array(name.utf8)
        guard bytes.count < nameCapacity, !bytes.contains(0) else { return nil }
        for (index, slot) in slots.enumerated() where slot.state.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            slot.folder.pointee = folder
            bytes.withUnsafeBytes { raw in
                for (offset, byte) in raw.enumerated() { slot.name[offset] = CChar(bitPattern: byte) }
            }
            slot.name[bytes.count] = 0
            slot.state.store(2, ordering: .sequentiallyConsistent)
            // A removal that began before the store may have looked at this slot already: the file
            // is not made, and the removal ends the process.
            if cleaning.load(ordering: .sequentiallyConsistent) { while true { pause() } }
            return index
        }
        return nil
    }

    /// Withdraws the registration `slot` (the file was renamed into place or removed).
    static func withdraw(_ slot: Int?) {
        guard let slot else { return }
        // Fails only when `removeAll` took the slot: the process is ending, the slot stays taken.
        _ = slots[slot].state.compareExchange(expected: 2, desired: 0, ordering: .releasing)
    }

    /// Unlinks every registered file; returns how many were registered. Async-signal-safe: for a
    /// signal handler, which then ends the process (no registration succeeds afterwards).
    package static func removeAll() -> Int {
        cleaning.store(true, ordering: .sequentiallyConsistent)
        var removed = 0
        for slot in slots where slot.state.compareExchange(expected: 2, desired: 3, ordering: .sequentiallyConsistent).exchanged {
            _ = unlinkat(slot.folder.pointee, slot.name, 0)
            removed += 1
        }
        return removed
    }
}
