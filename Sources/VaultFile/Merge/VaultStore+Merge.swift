import KDF
import SecureMemory

// MARK: - Merging three vault files (git's merge driver)

extension VaultStore {
    /// The roles of the three files git hands a merge driver.
    enum MergeRole: String, Sendable {
        case base = "BASE (the common ancestor)"
        case ours = "OURS (this branch)"
        case theirs = "THEIRS (the branch being merged)"
    }

    /// Merges `base`, `ours` and `theirs` (paths of one vault) and writes the result over `ours`.
    ///
    /// All three must be the same vault (same id). The result is sealed with our file key and
    /// keyslots, or with theirs when only their side changed the password or KDF settings;
    /// unless `allowLowerKDF`, their keyslots are refused (`MergeRefusal.lowerKeyDerivation`,
    /// nothing written) when one derives its key at a lower cost than ours
    /// (`VaultMerge.lowerKeyDerivation`). Returns the conflicts, which the result holds side by
    /// side (see `VaultMerge`).
    public static func mergeFiles(
        base: String, ours: String, theirs: String, password: SecureBytes, limits: KDFLimits, allowLowerKDF: Bool = false
    ) throws -> [VaultMerge.Conflict] {
        try mergeFiles(base: base, ours: ours, theirs: theirs, credentials: [UnlockCredential(.password(password), source: "the password")],
                       limits: limits, allowLowerKDF: allowLowerKDF)
    }

    /// Merges as above, opening each side with the first of `credentials` that opens one of its
    /// slots (an identity, a keyfile, a recovery code, a password). A side whose keyslots changed
    /// (`slot rm`, `rekey`: a new file key) is opened with its own slots, so a merge of a removal
    /// with an edit is sealed under the new key and the removed secret does not open the result.
    public static func mergeFiles(
        base: String, ours: String, theirs: String, credentials: [UnlockCredential], limits: KDFLimits, allowLowerKDF: Bool = false
    ) throws -> [VaultMerge.Conflict] {
        let paths: [(MergeRole, String)] = [(.base, base), (.ours, ours), (.theirs, theirs)]
        // Each side is opened as `get` opens a vault: its size checked before a byte is read,
        // its header parsed from at most 64 KiB, its payload decrypted chunk by chunk; no file
        // is held whole in memory. The headers come first, so unrelated files run no KDF.
        let files = try paths.map { _, path throws(VaultError) in try VaultStore(path: path).openHeader() }
        let headers = files.map(\.header)
        guard headers[1].vaultID == headers[0].vaultID, headers[2].vaultID == headers[0].vaultID else {
            throw VaultError.mergeRefused(.unrelatedVaults)
        }
        var opened: [UnlockedVault] = []
        var failing: [String] = []
        for ((role, path), file) in zip(paths, files) {
            do {
                var payload = FileCiphertext(file.file, from: file.headerLength)
                opened.append(try VaultCodec.open(header: file.header, payload: &payload, credentials: credentials, limits: limits, willDeriveKey: nil))
            } catch let error as VaultError {
                switch error {
                case .wrongPassword, .noKeyslotOpens: failing.append("\(role.rawValue) at \(path)")
                default: throw error
                }
            }
        }
        guard failing.isEmpty else {
            throw VaultError.mergeRefused(.passwordFails(sides: failing))
        }
        let (merged, conflicts) = try VaultMerge.merge(base: opened[0].vault, ours: opened[1].vault, theirs: opened[2].vault)
        let oursChangedKeys = headers[1].keyslots != headers[0].keyslots
        let theirsChangedKeys = headers[2].keyslots != headers[0].keyslots
        let takeTheirKeys = theirsChangedKeys && !oursChangedKeys
        // Their side may have lowered the KDF (`passwd --kdf pbkdf2 --kdf-iterations 1
        // --allow-weak-kdf`): a merge does not take that silently.
        if takeTheirKeys && !allowLowerKDF,
           let lower = VaultMerge.lowerKeyDerivation(theirs: headers[2].keyslots, ours: headers[1].keyslots) {
            throw VaultError.mergeRefused(.lowerKeyDerivation(theirs: lower.theirs, ours: lower.ours))
        }
        let sealer = takeTheirKeys ? opened[2] : opened[1]
        sealer.vault = merged
        sealer.advanceGeneration(past: max(headers[1].generation, headers[2].generation))
        let destination = AtomicFileWriter.Destination(path: ours, finalLink: .follow)
        try AtomicFileWriter().write(to: destination, mode: files[1].file.mode, replacing: .any, keepingOwner: true) { output throws(VaultError) in
            try sealer.seal(to: output)
        }
        return conflicts
    }
}
