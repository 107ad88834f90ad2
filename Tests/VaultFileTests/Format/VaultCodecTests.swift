import Glibc
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Sealing and opening format-v1 vaults in memory.
@Suite struct VaultCodecTests {
    // MARK: - open: success (round trips)

    @Test func test_open_roundTripsEmptyVault() throws {
        let bytes = try sealedBytes(Vault())
        let opened = try VaultCodec.open(bytes, path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == Vault())
        #expect(opened.header.generation == 1)
    }

    @Test func test_open_roundTripsEntriesFieldsAndBinaryValues() throws {
        let vault = try sampleVault()
        let opened = try VaultCodec.open(try sealedBytes(vault), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == vault)
        #expect(opened.vault.entry("binary/blob")?.value == [0, 1, 2, 255, 254, 0, 10, 13])
        #expect(opened.vault.entry("db/password")?.fields["username"] == Array("admin".utf8))
    }

    @Test func test_open_roundTripsThousandsOfEntries() throws {
        var vault = Vault()
        for index in 0..<5_000 { try vault.setValue(randomBytes(count: index % 97), for: "group\(index % 13)/item\(index)") }
        let opened = try VaultCodec.open(try sealedBytes(vault), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == vault)
        #expect(opened.vault.names == vault.names)
    }

    @Test func test_open_roundTripsAValueSpanningManyChunks() throws {
        var vault = Vault()
        let large = randomBytes(count: 3 * 65_536 + 12_345)
        try vault.setValue(large, for: "large")
        let bytes = try sealedBytes(vault)
        #expect(bytes.count > large.count)
        let opened = try VaultCodec.open(bytes, path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault.entry("large")?.value == large)
    }

    /// One entry "v" encodes as 5 + 24 + value bytes of content, 8 more with the length prefix: these
    /// values put the padded plaintext exactly on, just past and just short of chunk boundaries.
    @Test(arguments: [65_498, 65_499, 65_500, 131_034, 131_035, 131_036])
    func test_seal_chunkBoundariesRoundTripThroughAReseal(valueLength: Int) throws {
        var vault = Vault()
        let value = randomBytes(count: valueLength)
        try vault.setValue(value, for: "v", now: 1)
        #expect(Payload.paddedLength(8 + 5 + 24 + valueLength) % 65_536 <= 4_096, "PADMÉ steps are 2 or 4 KiB here")
        let opened = try VaultCodec.open(try sealedBytes(vault), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault.entry("v")?.value == value)
        // Seal again from the stored records alone: at 131,035 the run ends the plaintext exactly
        // on a chunk boundary with no padding, and that last chunk must still be tagged FINAL.
        let resealed = try VaultCodec.open(try opened.seal(), path: "t", password: password("pw"), limits: testLimits)
        #expect(resealed.vault.entry("v")?.value == value)
        // Seal again from the stored records (copied as a run into the chunk stream) plus one edit.
        try opened.vault.setValue([1], for: "w", now: 2)
        let reopened = try VaultCodec.open(try opened.seal(), path: "t", password: password("pw"), limits: testLimits)
        #expect(reopened.vault.entry("v")?.value == value && reopened.vault.entry("w")?.value == [1])
    }

    @Test func test_seal_keepsIDAndKeyslotsAndAdvancesGeneration() throws {
        let unlocked = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let first = try unlocked.seal()
        try unlocked.vault.setValue([1], for: "new")
        let second = try unlocked.seal()
        let a = try VaultHeader.parse(first, path: "t").header, b = try VaultHeader.parse(second, path: "t").header
        #expect(a.vaultID == b.vaultID && a.keyslots == b.keyslots)
        #expect(b.generation == a.generation + 1)
        #expect(a.streamHeader != b.streamHeader, "every seal starts a fresh stream")
    }

    @Test func test_seal_streamsWhatTheBytesPathSeals() throws {
        let unlocked = try VaultCodec.create(Vault(), password: password("pw"), kdf: testKDF)
        try unlocked.vault.setValue(randomBytes(count: 200_000), for: "bulk", now: 1)
        let output = ChunkRecorder()
        try unlocked.seal(to: output)
        #expect(output.writes.count == 1 + 4, "the header, then each of the four chunks as it is encrypted")
        #expect(output.writes.dropFirst().dropLast().allSatisfy { $0.count == 65_536 + 17 })
        let opened = try VaultCodec.open(Array(output.writes.joined()), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == unlocked.vault)
        #expect(!unlocked.hasChanges && unlocked.header.generation == 1)
    }

    @Test func test_seal_failedWriteIsThrownAndLeavesTheVaultUnsealed() throws {
        let unlocked = try VaultCodec.create(Vault(), password: password("pw"), kdf: testKDF)
        try unlocked.vault.setValue(randomBytes(count: 200_000), for: "bulk", now: 1)
        let output = ChunkRecorder(failingFrom: 2)
        #expect(throws: VaultError.io(operation: "writing", path: "recorder", errno: ENOSPC)) { try unlocked.seal(to: output) }
        #expect(output.writes.count == 2, "nothing is written after the first failure")
        #expect(unlocked.hasChanges && unlocked.header.generation == 0, "a failed seal changes nothing")
        let opened = try VaultCodec.open(try unlocked.seal(), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == unlocked.vault && opened.header.generation == 1)
    }

    @Test func test_open_worksWithPBKDF2() throws {
        let unlocked = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: .pbkdf2SHA256(.init(iterations: 1_000)))
        let opened = try VaultCodec.open(try unlocked.seal(), path: "t", password: password("pw"), limits: testLimits)
        #expect(opened.vault == (try sampleVault()))
    }

    // MARK: - open: failure

    /// The payload's size comes from the file: memory the system refuses is an error (over a limit), not a trap.
    @Test func test_forVault_refusedMappingIsOverTheLimit() {
        let absurd = 1 << 62
        do {
            _ = try PlaintextBuffer.forVault(uninitializedCount: absurd)
            Issue.record("a mapping of 2^62 bytes succeeded")
        } catch {
            guard case .limitExceeded(let why) = error else { Issue.record("unexpected \(error)"); return }
            #expect(why.hasPrefix("the system refused \(absurd) bytes of memory for the vault's plaintext ("))
            #expect(error.category == .overLimit)
        }
    }

    @Test func test_open_wrongPasswordIsItsOwnError() throws {
        let error = openError(try sealedBytes(try sampleVault()), pass: "not it")
        #expect(error as? VaultError == .wrongPassword)
    }

    @Test func test_open_notAVault() {
        #expect(openError(Array("hello, world\n".utf8)) as? VaultError == .notAVault(path: "test.vault"))
        #expect(openError([]) as? VaultError == .notAVault(path: "test.vault"))
    }

    @Test func test_open_unknownMajorVersionIsRefused() throws {
        var bytes = try sealedBytes(Vault())
        bytes[8] = 2
        #expect(openError(bytes) as? VaultError == .unsupportedVersion(major: 2, minor: 0))
    }

    @Test func test_open_tamperedHeaderFailsTheMAC() throws {
        var bytes = try sealedBytes(try sampleVault())
        bytes[40] ^= 0x01  // inside the stream header
        fixChecksum(&bytes)  // an attacker can recompute an unkeyed checksum
        #expect(openError(bytes) as? VaultError == .headerTampered)
    }

    @Test func test_open_tamperedVaultIDOpensNoSlot() throws {
        var bytes = try sealedBytes(try sampleVault())
        bytes[20] ^= 0x01  // the keyslot is bound to the vault id through its associated data
        fixChecksum(&bytes)
        #expect(openError(bytes) as? VaultError == .wrongPassword)
    }

    @Test func test_open_tamperedGenerationFailsTheMAC() throws {
        var bytes = try sealedBytes(try sampleVault())
        bytes[28] &+= 1
        fixChecksum(&bytes)
        #expect(openError(bytes) as? VaultError == .headerTampered)
    }

    @Test func test_open_tamperedKDFParametersOpenNoSlot() throws {
        var bytes = try sealedBytes(try sampleVault())
        // Keyslot 0 starts at 63: type (1), length (2), then the KDF encoding; byte 67 is memory KiB's 2nd byte.
        #expect(bytes[63] == Keyslot.passwordType && bytes[66] == KDFParameters.argon2idID)
        bytes[71] = 2  // iterations 1 → 2
        fixChecksum(&bytes)
        #expect(openError(bytes) as? VaultError == .wrongPassword, "the parameters are bound to the wrapped key")
    }

    @Test func test_open_headerOverTheMemoryCapIsRefusedBeforeDeriving() throws {
        var bytes = try sealedBytes(try sampleVault())
        bytes.replaceSubrange(67..<71, with: UInt32(4 << 20).littleEndianBytes)  // 4 GiB
        fixChecksum(&bytes)
        let limits = KDFLimits(maxMemoryBytes: 1 << 30, maxArgon2WorkKiB: .max, maxPBKDF2Iterations: .max)
        #expect(throws: KDFError.memoryOverCap(asked: 4 << 30, cap: 1 << 30)) {
            try VaultCodec.open(bytes, path: "t", password: password("pw"), limits: limits)
        }
    }

    @Test func test_open_everySingleBitFlipIsCaughtWithoutPlaintext() throws {
        var vault = Vault()
        try vault.setValue(Array("s3cr3t-value".utf8), for: "k")
        let bytes = try sealedBytes(vault)
        var kinds: [String: Int] = [:]
        for index in 0..<bytes.count {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1 << bit)
                guard let error = openError(flipped) else {
                    Issue.record("a flip of bit \(bit) of byte \(index) went unnoticed")
                    continue
                }
                let vaultError = try #require(error as? VaultError, "byte \(index): \(error)")
                #expect(vaultError != .wrongPassword, "byte \(index): damage must not look like a wrong password")
                #expect(!vaultError.description.contains("s3cr3t"))
                kinds[Mirror(reflecting: vaultError).children.first?.label ?? "\(vaultError)", default: 0] += 1
            }
        }
        #expect(kinds["payloadDamaged"] ?? 0 > 0 && kinds["headerDamaged"] ?? 0 > 0 && kinds["notAVault"] ?? 0 > 0)
    }

    @Test func test_open_everyTruncationIsCaught() throws {
        let bytes = try sealedBytes(try sampleVault())
        for length in 0..<bytes.count {
            let error = openError(Array(bytes[0..<length]))
            #expect(error is VaultError, "truncated to \(length) bytes")
            #expect(error as? VaultError != .wrongPassword)
        }
    }

    @Test func test_open_appendedBytesAreCaught() throws {
        let bytes = try sealedBytes(try sampleVault())
        for extra in [[UInt8](repeating: 0, count: 1), randomBytes(count: 17), randomBytes(count: 18), randomBytes(count: 65_553)] {
            guard case .payloadDamaged? = openError(bytes + extra) as? VaultError else {
                Issue.record("\(extra.count) appended bytes went unnoticed")
                continue
            }
        }
    }

    @Test func test_open_swappedAndDuplicatedChunksAreCaught() throws {
        var vault = Vault()
        try vault.setValue(randomBytes(count: 3 * 65_536), for: "large")
        let bytes = try sealedBytes(vault)
        let headerLength = try VaultHeader.parse(bytes, path: "t").length
        let chunk = 65_536 + 17
        let c0 = Array(bytes[headerLength..<headerLength + chunk]), c1 = Array(bytes[headerLength + chunk..<headerLength + 2 * chunk])
        var swapped = bytes
        swapped.replaceSubrange(headerLength..<headerLength + 2 * chunk, with: c1 + c0)
        #expect(openError(swapped) as? VaultError == .payloadDamaged(chunk: 0, reason: "authentication failed (modified, reordered or truncated data)"))
        var duplicated = bytes
        duplicated.replaceSubrange(headerLength + chunk..<headerLength + 2 * chunk, with: c0)
        #expect(openError(duplicated) as? VaultError == .payloadDamaged(chunk: 1, reason: "authentication failed (modified, reordered or truncated data)"))
        // Dropping a whole middle chunk: the stream no longer authenticates.
        var dropped = bytes
        dropped.removeSubrange(headerLength + chunk..<headerLength + 2 * chunk)
        guard case .payloadDamaged? = openError(dropped) as? VaultError else { Issue.record("dropped chunk unnoticed"); return }
    }

    @Test func test_open_payloadFromAnotherSealIsRefused() throws {
        let unlocked = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let first = try unlocked.seal(), second = try unlocked.seal()
        let length = try VaultHeader.parse(first, path: "t").length
        let spliced = Array(first[0..<length]) + Array(second[length...])
        guard case .payloadDamaged? = openError(spliced) as? VaultError else { Issue.record("splice unnoticed"); return }
    }

    // MARK: - changePassword

    @Test func test_changePassword_rotatesTheFileKey() throws {
        let unlocked = try VaultCodec.create(try sampleVault(), password: password("old"), kdf: testKDF)
        let oldBytes = try unlocked.seal()
        let rotated = try unlocked.changePassword(to: password("new"), kdf: testKDF)
        #expect(rotated.hasChanges)
        let newBytes = try rotated.seal()
        #expect(openError(newBytes, pass: "old") as? VaultError == .wrongPassword)
        #expect(openError(oldBytes, pass: "new") as? VaultError == .wrongPassword)
        let oldOpened = try VaultCodec.open(oldBytes, path: "t", password: password("old"), limits: testLimits)
        let newOpened = try VaultCodec.open(newBytes, path: "t", password: password("new"), limits: testLimits)
        #expect(newOpened.vault == (try sampleVault()))
        let sameKey = oldOpened.fileKey.constantTimeEquals(newOpened.fileKey)
        #expect(!sameKey, "the old file with the old password must not yield the new key")
        #expect(oldOpened.header.vaultID == newOpened.header.vaultID)
    }

    // MARK: - Edge cases

    @Test func test_seal_neverWritesPlaintextToTheFile() throws {
        let vault = try sampleVault()
        let bytes = try sealedBytes(vault)
        for needle in ["hunter2", "db/password", "username", "admin", "binary/blob"] {
            #expect(!contains(bytes, Array(needle.utf8)), "'\(needle)' appears in the file")
        }
    }

    @Test func test_seal_sizeRevealsOnlyThePaddedClass() throws {
        var small = Vault(), smaller = Vault()
        try small.setValue([UInt8](repeating: 1, count: 300), for: "a")
        try smaller.setValue([UInt8](repeating: 1, count: 3), for: "a")
        #expect(try sealedBytes(small).count == (try sealedBytes(smaller)).count)
    }
}

/// Records each write of a seal; from write number `failingFrom` on, fails with ENOSPC.
private final class ChunkRecorder: SealedOutput {
    private(set) var writes: [[UInt8]] = []
    private var attempts = 0
    private let failingFrom: Int

    init(failingFrom: Int = .max) { self.failingFrom = failingFrom }

    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        defer { attempts += 1 }
        guard attempts < failingFrom else { throw .io(operation: "writing", path: "recorder", errno: ENOSPC) }
        writes.append(Array(bytes))
    }

    /// A signed seal's header, over the room its first write kept.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(VaultError) {
        guard offset == 0, writes.first?.count == bytes.count else { throw .io(operation: "writing", path: "recorder", errno: EINVAL) }
        writes[0] = Array(bytes)
    }
}
