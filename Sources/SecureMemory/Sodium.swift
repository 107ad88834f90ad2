import CSodium

// MARK: - libsodium initialisation

/// Whether `sodium_init()` succeeded. A global `let` is initialised once, thread-safely.
private let sodiumInitialised: Bool = sodium_init() >= 0

/// Makes sure libsodium is initialised before any of its functions are called.
///
/// `sodium_init()` fails only when the system's random source is unusable;
/// nothing secure can be done then, so the process stops.
public func ensureSodiumInitialised() {
    precondition(sodiumInitialised, "libsodium could not be initialised (no usable random source)")
}

// MARK: - Random bytes and wiping

/// Fills a new array with bytes from libsodium's CSPRNG (`randombytes_buf`).
public func randomBytes(count: Int) -> [UInt8] {
    ensureSodiumInitialised()
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
    return bytes
}

/// Zeroes an array's storage in place (`sodium_memzero`), so the bytes do not
/// linger on the heap after the value is released.
public func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
    }
}

/// Zeroes the storage of `bytes` in place, as every array that shares it sees it: `wipe(_:)` of
/// an array whose storage another holds zeroes a copy of its own (copy on write) and leaves the
/// shared storage as it was. For values several holders share, once every one of them is done
/// with them (an import's earlier versions: the imported entries, the plan's copy of them, the
/// vault they were put into). `bytes` must have been made at run time (an array literal of
/// constants may lie in read-only memory).
public func wipeShared(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(UnsafeMutableRawPointer(mutating: base), buffer.count) }
    }
}

/// Zeroes raw memory in place (`sodium_memzero`): a reused output buffer between writes.
public func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
    if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
}
