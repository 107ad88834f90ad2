import SecureMemory
import Testing

/// Guarded buffers, random bytes, wiping, and the mapping for large secrets.
@Suite struct SecureMemoryTests {
    // MARK: - SecureBytes

    @Test func test_secureBytes_copiesAndSlices() {
        let bytes = SecureBytes(copying: [1, 2, 3, 4, 5])
        #expect(bytes.count == 5)
        #expect(bytes.withUnsafeBytes { Array($0) } == [1, 2, 3, 4, 5])
        #expect(bytes.slice(1..<4).withUnsafeBytes { Array($0) } == [2, 3, 4])
        #expect(SecureBytes(count: 3).withUnsafeBytes { Array($0) } == [0, 0, 0], "a new buffer is zeroed")
    }

    @Test func test_constantTimeEquals_comparesLengthAndBytes() {
        let a = SecureBytes(copying: [1, 2, 3])
        #expect(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2, 4])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2])))
        #expect(SecureBytes(count: 0).constantTimeEquals(SecureBytes(copying: [UInt8]())))
    }

    // MARK: - randomBytes and wipe

    @Test func test_randomBytes_hasTheLengthAskedForAndVaries() {
        #expect(randomBytes(count: 0).isEmpty)
        let a = randomBytes(count: 32), b = randomBytes(count: 32)
        #expect(a.count == 32 && a != b)
    }

    @Test func test_wipe_zeroesInPlace() {
        var bytes: [UInt8] = [9, 8, 7]
        wipe(&bytes)
        #expect(bytes == [0, 0, 0])
    }

    /// `wipe` of a shared array zeroes its own copy only (copy on write); `wipeShared` zeroes the
    /// storage every holder shares, and leaves an empty array alone.
    @Test func test_wipeShared_zeroesTheStorageEveryHolderSees() {
        let made = randomBytes(count: 16).map { $0 | 1 }  // made at run time, no byte zero
        var own = made
        wipe(&own)
        #expect(own == [UInt8](repeating: 0, count: 16) && !made.contains(0), "wipe: the holder's own copy only")
        let holder = made
        wipeShared(holder)
        #expect(made == [UInt8](repeating: 0, count: 16) && holder == made, "wipeShared: the one storage both hold")
        wipeShared([UInt8]())
    }

    // MARK: - SecretMapping and PlaintextBuffer

    @Test(arguments: [0, 1, 4_096, 3 << 20])
    func test_plaintextBuffer_mapsTheSizeAskedFor(count: Int) throws {
        let buffer = try PlaintextBuffer(uninitializedCount: count)
        #expect(buffer.count == count)
        if count > 0 {
            buffer.bytes[count - 1] = 0xA5
            #expect(buffer.bytes[count - 1] == 0xA5)
        }
        let copy = try PlaintextBuffer(copying: [1, 2, 3])
        #expect(Array(copy.bytes) == [1, 2, 3])
    }

    @Test func test_plaintextBuffer_throwsWhenTheMappingIsRefused() {
        // No system maps 2^62 bytes: the size may come from a file, so this must throw, not trap.
        let absurd = 1 << 62
        #expect(throws: SecureMemoryError.self) { try PlaintextBuffer(uninitializedCount: absurd) }
        do {
            _ = try SecretMapping.map(byteCount: absurd)
            Issue.record("a mapping of 2^62 bytes succeeded")
        } catch {
            switch error {
            case .mappingFailed(let byteCount, let code):
                #expect(byteCount == absurd && code != 0)
            }
            #expect(error.description.hasPrefix("mapping \(absurd) bytes of memory failed: "))
        }
    }
}
