import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// A merge does not take their side's lower KDF settings silently.
@Suite struct MergeDowngradeTests {
    private static func argon2(_ mebibytes: UInt32, t: UInt32, p: UInt32 = 1) -> KDFParameters {
        .argon2id(.init(memoryKiB: mebibytes * 1024, iterations: t, parallelism: p))
    }
    private static func pbkdf2(_ iterations: UInt32) -> KDFParameters { .pbkdf2SHA256(.init(iterations: iterations)) }

    // MARK: - isLower: not lower

    @Test(arguments: [
        (argon2(64, t: 3), argon2(64, t: 3)),       // unchanged
        (argon2(128, t: 3), argon2(64, t: 3)),      // more memory
        (argon2(64, t: 4, p: 1), argon2(64, t: 3, p: 4)),  // more passes; fewer lanes do not count
        (pbkdf2(700_000), pbkdf2(600_000)),
        (pbkdf2(600_000), .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))),  // to the minimum from below it
        (argon2(46, t: 1), pbkdf2(1_000)),
    ])
    func test_isLower_acceptsEqualOrStrongerSettings(theirs: KDFParameters, ours: KDFParameters) {
        #expect(!theirs.isLower(than: ours))
    }

    // MARK: - isLower: lower

    @Test(arguments: [
        (argon2(32, t: 3), argon2(64, t: 3)),       // less memory
        (argon2(32, t: 8), argon2(64, t: 3)),       // less memory, more work
        (argon2(64, t: 2), argon2(64, t: 3)),       // less work
        (argon2(40, t: 1), argon2(19, t: 2)),       // more memory and work, but below the minimum ours met
        (pbkdf2(599_999), pbkdf2(600_000)),
        (pbkdf2(1), argon2(64, t: 3)),              // another KDF, below the minimum
        (pbkdf2(600_000), argon2(64, t: 3)),        // another KDF, both at the minimum: costs do not compare
        (pbkdf2(2_000), .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))),  // another KDF, both below it
    ])
    func test_isLower_refusesLowerSettings(theirs: KDFParameters, ours: KDFParameters) {
        #expect(theirs.isLower(than: ours))
    }

    // MARK: - lowerKeyDerivation

    @Test func test_lowerKeyDerivation_aSlotMustMatchOneOfOurs() {
        let slot = { (kdf: KDFParameters, salt: UInt8) in
            Keyslot.password(PasswordSlot(kdf: kdf, salt: [UInt8](repeating: salt, count: 16), nonce: [UInt8](repeating: 0, count: 24), wrappedKey: []))
        }
        let ours = [slot(Self.argon2(64, t: 3), 1), slot(Self.pbkdf2(600_000), 2)]
        #expect(VaultMerge.lowerKeyDerivation(theirs: ours, ours: ours) == nil, "unchanged slots")
        #expect(VaultMerge.lowerKeyDerivation(theirs: [slot(Self.pbkdf2(800_000), 3)], ours: ours) == nil, "no lower than one of ours")
        let lower = VaultMerge.lowerKeyDerivation(theirs: [ours[0], slot(Self.pbkdf2(1), 3)], ours: ours)
        #expect(lower?.theirs == Self.pbkdf2(1) && lower?.ours == [Self.argon2(64, t: 3), Self.pbkdf2(600_000)])
    }

    // MARK: - mergeFiles

    /// Base, ours and theirs of one vault, at `kdf`; ours adds an entry, theirs changes the KDF to `theirs`.
    private func sides(_ directory: TemporaryDirectory, kdf: KDFParameters, theirs theirKDF: KDFParameters) throws -> (base: VaultStore, ours: VaultStore, theirs: VaultStore) {
        let base = VaultStore(path: directory.path("base.vault"))
        try base.create(try sampleVault(), password: password("pw"), kdf: kdf)
        let bytes = try base.read().bytes
        for name in ["ours.vault", "theirs.vault"] { try AtomicFileWriter().write(bytes, to: directory.path(name), finalLink: .follow) }
        let ours = VaultStore(path: directory.path("ours.vault")), theirs = VaultStore(path: directory.path("theirs.vault"))
        try ours.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "ours-only") }
        try theirs.changePassword(from: password("pw"), to: password("pw"), kdf: theirKDF, limits: testLimits)
        return (base, ours, theirs)
    }

    /// The finding: theirs ran `passwd --kdf pbkdf2 --kdf-iterations 1 --allow-weak-kdf`, and the merge took it.
    @Test func test_mergeFiles_refusesTheirLowerKDFAndLeavesOursAsItWas() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (base, ours, theirs) = try sides(directory, kdf: testKDF, theirs: Self.pbkdf2(1))
        let before = try ours.read().bytes
        #expect(throws: VaultError.mergeRefused(.lowerKeyDerivation(theirs: Self.pbkdf2(1), ours: [testKDF]))) {
            try VaultStore.mergeFiles(base: base.path, ours: ours.path, theirs: theirs.path, password: password("pw"), limits: testLimits)
        }
        #expect(try ours.read().bytes == before)
    }

    @Test func test_mergeFiles_takesTheirLowerKDFWhenAllowed() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (base, ours, theirs) = try sides(directory, kdf: testKDF, theirs: Self.pbkdf2(1))
        let conflicts = try VaultStore.mergeFiles(base: base.path, ours: ours.path, theirs: theirs.path, password: password("pw"),
                                                  limits: testLimits, allowLowerKDF: true)
        #expect(conflicts.isEmpty)
        let merged = try ours.open(password: password("pw"), limits: testLimits)
        #expect(merged.passwordKDF == Self.pbkdf2(1) && merged.vault.entry("ours-only")?.value == [1])
    }
}
