// MARK: - Names as dictionary keys

/// An entry name's bytes as a key of `Vault`'s edits, hashed in one call: `[UInt8]` hashes
/// element by element, a tenth of an import's instructions.
struct NameKey: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
