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
        var failing: [Int] = []
        for (index, file) in files.enumerated() {
            do {
                var payload = FileCiphertext(file.file, from: file.headerLength)
                opened.append(try VaultCodec.open(header: file.header, payload: &payload, password: password, limits: limits, willDeriveKey: nil))
            } catch VaultError.wrongPassword {
                failing.append(index)
            }
        }
        guard failing.isEmpty else {
            throw VaultError.mergeRefused(passwordRefusal(failing: failing, paths: paths, headers: headers))
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

    /// Why the password fails on the sides at `failing` (indices into base, ours, theirs).
    ///
    /// "Changed on that side" only when it is known: the password opens every other side, BASE
    /// among them, and each failing side's keyslots differ from BASE's. (Keyslots equal to BASE's
    /// would open with the password that opens BASE: a slot's key depends on nothing else.) When it
    /// opens none, it is a wrong password. When it fails on BASE but opens another side, that
    /// side's keyslots differ from BASE's for the same reason: the password was changed there.
    private static func passwordRefusal(
        failing: [Int], paths: [(MergeRole, String)], headers: [VaultHeader]
    ) -> VaultError.MergeRefusal {
        func side(_ index: Int) -> String { "\(paths[index].0.rawValue) at \(paths[index].1)" }
        let opening = paths.indices.filter { !failing.contains($0) }
        if opening.isEmpty { return .passwordOpensNone(sides: failing.map(side)) }
        if !failing.contains(0) && failing.allSatisfy({ headers[$0].keyslots != headers[0].keyslots }) {
            return .passwordFails(sides: failing.map(side))
        }
        return .passwordOpensOnly(opens: opening.map(side), fails: failing.map(side))
    }
}
