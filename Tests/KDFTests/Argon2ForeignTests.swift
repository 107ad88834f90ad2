import KDF
import SecureMemory
import TestSupport
import Testing

/// Argon2 of another tool's file (a KDBX 4 database): the bounds are Argon2's own, not those
/// vaultfile chooses for its vaults; the caps (checked by the caller) bound memory and work.
@Suite struct Argon2ForeignTests {
    private static func derive(_ parameters: Argon2idParameters, variant: Argon2Variant) throws -> [UInt8] {
        try Array("password".utf8).withUnsafeBytes { password in
            try Argon2id.deriveForeign(password: password, salt: Array("saltsaltsaltsalt".utf8), parameters: parameters, variant: variant, version: 0x13)
        }.withUnsafeBytes { Array($0) }
    }

    // MARK: - deriveForeign: success

    /// 65 lanes (over vaultfile's own 64) on at most 64 threads: the answer of argon2-cffi
    /// (`hash_secret_raw(b"password", b"saltsaltsaltsalt", time_cost=1, memory_cost=1040,
    /// parallelism=65, hash_len=32, type=ID)`), which runs libargon2 with as many threads as lanes.
    @Test func test_deriveForeign_moreThan64LanesMatchesReference() throws {
        let key = try Self.derive(Argon2idParameters(memoryKiB: 1040, iterations: 1, parallelism: 65), variant: .argon2id)
        #expect(key == Hex.decode("7a84e5033c572566bac2e2a6a60b1683984f65b614cff8802fb383b824677ddf"))
    }

    /// 4,097 passes (over vaultfile's own 4,096), Argon2d: argon2-cffi's answer (memory_cost=8, type=D).
    @Test func test_deriveForeign_moreThan4096PassesMatchesReference() throws {
        let key = try Self.derive(Argon2idParameters(memoryKiB: 8, iterations: 4_097, parallelism: 1), variant: .argon2d)
        #expect(key == Hex.decode("55564fdef0439ba069c549e5c6af50e42b533c05e54b51c788b34218e7a1a4a1"))
    }

    // MARK: - deriveForeign: failure

    /// Fewer than 8 KiB per lane, no pass, or no lane: outside Argon2's own bounds, refused before any allocation.
    @Test(arguments: [(8, 1, 2), (64, 0, 1), (64, 1, 0), (8 << 20, 1, 0x100_0000)] as [(UInt32, UInt32, UInt32)])
    func test_deriveForeign_outsideArgon2BoundsRefused(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
        #expect(throws: KDFError.self) {
            _ = try Self.derive(Argon2idParameters(memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism), variant: .argon2id)
        }
    }
}
