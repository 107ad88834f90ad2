import KDF
import SecureMemory
import TestSupport
import Testing

/// Argon2id against RFC 9106 and across both implementations.
@Suite struct Argon2idTests {
    // MARK: - deriveKey: success

    /// RFC 9106 §5.3: m = 32 KiB, t = 3, p = 4, password 32 × 0x01, salt 16 × 0x02,
    /// secret 8 × 0x03, associated data 12 × 0x04.
    @Test func test_deriveKey_matchesRFC9106KnownAnswer() throws {
        let password = [UInt8](repeating: 0x01, count: 32)
        let key = try password.withUnsafeBytes { bytes in
            try Argon2id.deriveKey(
                password: bytes, salt: [UInt8](repeating: 0x02, count: 16),
                parameters: Argon2idParameters(memoryKiB: 32, iterations: 3, parallelism: 4),
                secret: [UInt8](repeating: 0x03, count: 8),
                associatedData: [UInt8](repeating: 0x04, count: 12))
        }
        let expected = Hex.decode("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
        #expect(key.withUnsafeBytes { Array($0) } == expected)
    }

    /// libsodium's SIMD code and libargon2 must agree wherever both apply (p = 1, 16-byte salt).
    @Test(arguments: [(8, 1), (64, 3), (1024, 2), (19 * 1024, 2)] as [(UInt32, UInt32)])
    func test_deriveKey_libsodiumAndLibargon2Agree(memoryKiB: UInt32, iterations: UInt32) throws {
        let parameters = Argon2idParameters(memoryKiB: memoryKiB, iterations: iterations, parallelism: 1)
        let salt = randomBytes(count: 16)
        for password in [[], Array("correct horse battery staple".utf8), randomBytes(count: 200)] {
            let (sodium, argon2) = try password.withUnsafeBytes { bytes in
                (try Argon2id.deriveKey(password: bytes, salt: salt, parameters: parameters, backend: .libsodium),
                 try Argon2id.deriveKey(password: bytes, salt: salt, parameters: parameters, backend: .libargon2))
            }
            let equal = sodium.constantTimeEquals(argon2)
            #expect(equal)
        }
    }

    @Test func test_deriveKey_parallelismChangesOutput() throws {
        let salt = [UInt8](repeating: 7, count: 16)
        let one = try [UInt8](repeating: 1, count: 8).withUnsafeBytes {
            try Argon2id.deriveKey(password: $0, salt: salt, parameters: .init(memoryKiB: 256, iterations: 1, parallelism: 1))
        }
        let four = try [UInt8](repeating: 1, count: 8).withUnsafeBytes {
            try Argon2id.deriveKey(password: $0, salt: salt, parameters: .init(memoryKiB: 256, iterations: 1, parallelism: 4))
        }
        let equal = one.constantTimeEquals(four)
        #expect(!equal)
    }

    // MARK: - deriveKey: failure

    @Test func test_deriveKey_libsodiumRefusesWhatItCannotCompute() {
        #expect(throws: KDFError.self) {
            try [UInt8]().withUnsafeBytes {
                try Argon2id.deriveKey(password: $0, salt: [UInt8](repeating: 0, count: 16),
                                       parameters: .init(memoryKiB: 64, iterations: 1, parallelism: 2), backend: .libsodium)
            }
        }
    }

    @Test func test_deriveKey_rejectsMemoryBelowEightKiBPerLane() {
        #expect(throws: KDFError.self) {
            try [UInt8]().withUnsafeBytes {
                try Argon2id.deriveKey(password: $0, salt: [UInt8](repeating: 0, count: 16),
                                       parameters: .init(memoryKiB: 16, iterations: 1, parallelism: 4))
            }
        }
    }
}
