#if canImport(Glibc)
import Glibc
#endif
import Foundation

// MARK: - Finding a secret left in this process's memory

/// A secret that is never written whole by the test that holds it (only masked, byte by byte), and
/// a scan of this process's writable memory for it: the heap, the allocator's other arenas, the
/// stacks. What the scan finds after the code under test wiped its copies is a copy left in memory
/// freed without a wipe (or still held).
public struct ScannedSecret: Sendable {
    private static let mask: UInt8 = 0x5A
    /// The secret's bytes, each XORed with `mask`: this array is not a copy of the secret.
    private let masked: [UInt8]

    /// A random secret of `count` letters and digits (bytes JSON and CSV keep as they are).
    public init(count: Int = 32) {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789".utf8)
        var generator = SystemRandomNumberGenerator()
        masked = (0..<count).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] ^ Self.mask }
    }

    /// A secret the code under test holds (a prime of a key, as libcrypto would lay it out), given
    /// as a view that is not itself a copy in memory (`buffer.reversed()`): only its masked form is kept.
    public init(masking bytes: some Sequence<UInt8>) {
        masked = bytes.map { $0 ^ Self.mask }
    }

    /// The number of bytes of the secret.
    public var count: Int { masked.count }

    /// Appends the secret to `bytes`, which must have the room (a growing array would leave a copy
    /// in the block it left).
    public func append(to bytes: inout [UInt8]) {
        precondition(bytes.capacity - bytes.count >= masked.count, "reserve the room first")
        for byte in masked { bytes.append(byte ^ Self.mask) }
    }

    /// Whether a scan can run: not in a sanitized build (`make check-sanitizers`), whose shadow
    /// memory and allocator reserve terabytes of writable mappings that a scan would read for hours.
    public static let canScan = ProcessInfo.processInfo.environment["VAULTFILE_TEST_SANITIZER"] == nil

    /// One scan at a time in the process: a scan reads other memory into its chunk (another test's
    /// input, holding that test's secret), and a scan running beside it would find the copy there.
    private static let scanning = NSLock()

    /// How many copies of the secret lie in this process's private writable memory.
    public func copiesInMemory() -> Int {
        let found = scan()
        return found.map(\.count) ?? -1
    }

    /// Where each copy of the secret lies: its address, its offset in the mapping that holds it,
    /// and that mapping (its line of /proc/self/maps: `[heap]`, `[stack]`, or an anonymous one, a
    /// thread's stack or a large allocation), for a failure's message; nil when no scan could run.
    public func copiesInMemoryDescribed() -> [String]? {
        scan()?.map { "0x\(String($0.address, radix: 16)) (+0x\(String($0.address - $0.mappingStart, radix: 16)) in \($0.mapping))" }
    }

    /// Every copy of the secret in this process's private writable memory, with its mapping.
    private func scan() -> [(address: UInt, mappingStart: UInt, mapping: Substring)]? {
        Self.scanning.lock()
        defer { Self.scanning.unlock() }
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        let memory = open("/proc/self/mem", O_RDONLY)
        guard memory >= 0 else { return nil }
        defer { close(memory) }
        let chunkSize = 1 << 20
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize + masked.count)
        // Zeroed with explicit_bzero, which an optimizer may not drop as a store before a free: a
        // chunk freed holding another test's secret (read from that test's live memory) is a copy
        // that test's own scan would then find.
        defer {
            explicit_bzero(chunk, chunkSize + masked.count)
            chunk.deallocate()
        }
        var copies: [(address: UInt, mappingStart: UInt, mapping: Substring)] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw"), fields.count == 5 || fields[5].hasPrefix("[heap]") || fields[5].hasPrefix("[stack") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
            guard bounds.count == 2 else { continue }
            var address = bounds[0]
            while address < bounds[1] {
                // Overlapping reads by the secret's length: a copy across two chunks is found once.
                let length = Int(min(UInt(chunkSize + masked.count), bounds[1] - address))
                let result = pread(memory, chunk, length, off_t(Int64(bitPattern: UInt64(address))))
                if result <= 0 { break }
                let read = Int(result)
                for offset in offsets(in: UnsafeBufferPointer(start: chunk, count: read), startingBelow: chunkSize) {
                    copies.append((address + UInt(offset), bounds[0], line))
                }
                explicit_bzero(chunk, read)
                address += UInt(chunkSize)
            }
        }
        return copies
    }

    /// The offsets of the copies in `bytes` that start before `limit` (one that starts later is the next chunk's).
    private func offsets(in bytes: UnsafeBufferPointer<UInt8>, startingBelow limit: Int) -> [Int] {
        guard bytes.count >= masked.count else { return [] }
        let first = masked[0] ^ Self.mask
        var found: [Int] = [], index = 0
        while index <= bytes.count - masked.count && index < limit {
            if bytes[index] == first {
                var offset = 1
                while offset < masked.count, bytes[index + offset] == masked[offset] ^ Self.mask { offset += 1 }
                if offset == masked.count { found.append(index) }
            }
            index += 1
        }
        return found
    }
}
