// MARK: - C pointers to password bytes

/// Calls `body` with a non-null C pointer to `buffer`'s bytes, even when the
/// buffer is empty (C APIs such as OpenSSL's reject a null password pointer).
func withNonNullPointer<R>(to buffer: UnsafeRawBufferPointer, _ body: (UnsafePointer<CChar>) -> R) -> R {
    if let base = buffer.baseAddress { return body(base.assumingMemoryBound(to: CChar.self)) }
    var terminator: CChar = 0
    return withUnsafePointer(to: &terminator) { body($0) }
}
