import SecureMemory

// MARK: - Plaintext buffers for a vault

extension PlaintextBuffer {
    /// Maps `count` bytes for a vault's plaintext (the decrypted payload, or the seal's chunk buffer).
    ///
    /// The size may come from a file, so a mapping the system refuses is thrown, not trapped:
    /// as `VaultError.limitExceeded` (exit 6), naming the size.
    package static func forVault(uninitializedCount count: Int) throws(VaultError) -> PlaintextBuffer {
        do {
            return try PlaintextBuffer(uninitializedCount: count)
        } catch {
            throw refused(error)
        }
    }

    /// Copies `source` into a new buffer mapped as `forVault(uninitializedCount:)` maps it.
    package static func forVault(copying source: [UInt8]) throws(VaultError) -> PlaintextBuffer {
        do {
            return try PlaintextBuffer(copying: source)
        } catch {
            throw refused(error)
        }
    }

    private static func refused(_ error: SecureMemoryError) -> VaultError {
        switch error {
        case .mappingFailed(let byteCount, let code):
            return .limitExceeded("the system refused \(byteCount) bytes of memory for the vault's plaintext (\(errnoText(code)))")
        }
    }
}
