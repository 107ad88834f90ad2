import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import SecureMemory
import Synchronization
import TestSupport
import Testing

/// The region small secrets share (`SecretArena`): runs of slots handed out first-fit, zeroed
/// when released, safe across threads; and the memory behind it locked and left out of core dumps.
@Suite struct SecretArenaTests {
    /// The bytes at `pointer`, `count` of them.
    private func bytes(at pointer: UnsafeMutableRawPointer, _ count: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    // MARK: - allocate

    @Test func test_allocate_givesAlignedDisjointZeroedRuns() throws {
        let arena = SecretArena(slotCount: 64)
        let sizes = [1, 64, 65, 200, 0, 1_024, 32]
        var runs: [(start: UInt, end: UInt)] = []
        for size in sizes {
            let pointer = try #require(arena.allocate(size), "\(size) bytes")
            let start = UInt(bitPattern: pointer)
            #expect(start % UInt(SecretArena.slotLength) == 0, "\(size) bytes: a run starts on a slot")
            #expect(bytes(at: pointer, max(size, 1)).allSatisfy { $0 == 0 }, "\(size) bytes: a new run is zero")
            #expect(arena.contains(pointer))
            let end = start + UInt(SecretArena.slotsNeeded(for: size) * SecretArena.slotLength)
            #expect(runs.allSatisfy { end <= $0.start || start >= $0.end }, "\(size) bytes: overlaps an earlier run")
            runs.append((start, end))
            pointer.initializeMemory(as: UInt8.self, repeating: 0xEE, count: max(size, 1))
        }
        #expect(SecretArena.slotsNeeded(for: 0) == 1 && SecretArena.slotsNeeded(for: 64) == 1)
        #expect(SecretArena.slotsNeeded(for: 65) == 2 && SecretArena.slotsNeeded(for: 1_024) == 16)
    }

    @Test func test_allocate_refusesWhatIsTooLargeOrDoesNotFit() throws {
        let arena = SecretArena(slotCount: 64)
        #expect(arena.allocate(SecretArena.largestAllocation + 1) == nil, "over the largest size: the caller's own sodium_malloc")
        var pointers: [UnsafeMutableRawPointer] = []
        for _ in 0..<64 { pointers.append(try #require(arena.allocate(40))) }
        #expect(arena.allocate(1) == nil, "a full region")
        // Every other slot freed: room for one slot, not for a run of two.
        for index in stride(from: 0, to: 64, by: 2) { arena.release(pointers[index], count: 40) }
        #expect(arena.allocate(100) == nil, "no two free slots side by side")
        #expect(arena.allocate(10) != nil)
    }

    // MARK: - release

    @Test func test_release_zeroesTheRunAndFreesItForReuse() throws {
        let arena = SecretArena(slotCount: 64)
        let pointer = try #require(arena.allocate(100))
        pointer.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 128)
        arena.release(pointer, count: 100)
        // The region is never unmapped, and this arena is the test's own: the run can be read.
        #expect(bytes(at: pointer, 128).allSatisfy { $0 == 0 }, "both slots of the run, past the secret's end too")
        #expect(arena.allocate(128) == pointer, "first fit gives the freed run again")
    }

    // MARK: - Against a plain first-fit model

    @Test func test_allocate_matchesAFirstFitReference() throws {
        var generator = SplitMix(seed: 2026)
        for round in 0..<20 {
            let slotCount = [64, 128, 256][round % 3]
            let arena = SecretArena(slotCount: slotCount)
            var model = [Bool](repeating: false, count: slotCount)
            var live: [(pointer: UnsafeMutableRawPointer, count: Int, start: Int)] = []
            var base: UInt?
            for step in 0..<600 {
                if !live.isEmpty && generator.next(upTo: 5) < 2 {
                    let run = live.remove(at: generator.next(upTo: live.count))
                    arena.release(run.pointer, count: run.count)
                    for slot in run.start..<run.start + SecretArena.slotsNeeded(for: run.count) { model[slot] = false }
                    continue
                }
                let count = [0, 1, 32, 63, 64, 65, 128, 256, 700, 1_024, 1_025][generator.next(upTo: 11)]
                let length = SecretArena.slotsNeeded(for: count)
                let expected = count > SecretArena.largestAllocation ? nil
                    : (0...(slotCount - length)).first { start in model[start..<start + length].allSatisfy { !$0 } }
                let pointer = arena.allocate(count)
                guard let pointer, let expected else {
                    #expect(pointer == nil && expected == nil, "round \(round) step \(step): \(count) bytes, model \(String(describing: expected))")
                    continue
                }
                if base == nil { base = UInt(bitPattern: pointer) - UInt(expected * SecretArena.slotLength) }
                let start = Int(UInt(bitPattern: pointer) - base!) / SecretArena.slotLength
                #expect(start == expected, "round \(round) step \(step): \(count) bytes at slot \(start), first fit is \(expected)")
                for slot in expected..<expected + length { model[slot] = true }
                live.append((pointer, count, expected))
            }
        }
    }

    // MARK: - Threads

    @Test func test_allocate_givesNoRunToTwoThreadsAtOnce() {
        let arena = SecretArena(slotCount: 64)
        let clashes = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var generator = SplitMix(seed: UInt64(thread))
            let mark = UInt8(thread + 1)
            for _ in 0..<2_000 {
                let count = 1 + generator.next(upTo: 256)
                guard let pointer = arena.allocate(count) else { continue }  // full for the moment: fine
                pointer.initializeMemory(as: UInt8.self, repeating: mark, count: count)
                let buffer = UnsafeRawBufferPointer(start: pointer, count: count)
                if !buffer.allSatisfy({ $0 == mark }) { clashes.add(1, ordering: .relaxed) }
                arena.release(pointer, count: count)
            }
        }
        #expect(clashes.load(ordering: .relaxed) == 0, "another thread wrote into a run while it was taken")
    }

    /// Eight threads on a region of 64 slots, so that they wait for one another's lock. Under
    /// `make check-sanitizers` this is the test that counts: Synchronization's `Mutex` waits in raw
    /// `futex` calls ThreadSanitizer does not see, and it reported every contended access to the
    /// slot map as a race (exit 66), as it did for the agent's keyring (`LockedValue`).
    @Test func test_allocate_contendedByEightThreadsIsOrderedForThreadSanitizer() {
        let arena = SecretArena(slotCount: 64)
        let clashes = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var generator = SplitMix(seed: UInt64(100 + thread))
            let mark = UInt8(thread + 1)
            for _ in 0..<3_000 {
                let count = 1 + generator.next(upTo: 64)
                guard let pointer = arena.allocate(count) else { continue }
                let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: count)
                if !buffer.allSatisfy({ $0 == 0 }) { clashes.add(1, ordering: .relaxed) }
                buffer.initializeMemory(as: UInt8.self, repeating: mark)
                if !buffer.allSatisfy({ $0 == mark }) { clashes.add(1, ordering: .relaxed) }
                arena.release(pointer, count: count)
            }
        }
        #expect(clashes.load(ordering: .relaxed) == 0, "a run handed out non-zero, or written by two threads at once")
    }

    // MARK: - SecureBytes and the memory itself

    /// Against a region of the test's own: other tests of the process (AgentKeyringTests holds 257
    /// keys at once) can fill the shared one at any moment.
    @Test func test_secureBytes_smallShareTheRegionLargeDoNot() {
        let arena = SecretArena(slotCount: 64)
        let key = SecureBytes(count: 32, arena: arena)
        let frame = SecureBytes(count: SecretArena.largestAllocation, arena: arena)
        let large = SecureBytes(count: SecretArena.largestAllocation + 1, arena: arena)
        #expect(key.isInRegion(of: arena) && frame.isInRegion(of: arena))
        #expect(!large.isInRegion(of: arena))
        #expect(key.withUnsafeBytes { $0.allSatisfy { $0 == 0 } } && large.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        let copied = SecureBytes(copying: [1, 2, 3])
        #expect(copied.withUnsafeBytes { Array($0) } == [1, 2, 3])
    }

    @Test func test_secureBytes_fullSharedRegionFallsBackToAnAllocationOfItsOwn() {
        // 300 one-slot secrets: more than the shared region's 256 slots, whatever else the process holds.
        let held = (0..<300).map { index in SecureBytes(copying: [UInt8](repeating: UInt8(index % 251 + 1), count: 64)) }
        let outside = held.filter { !$0.isInRegion(of: .shared) }
        #expect(outside.count >= 300 - SecretArena.shared.slotCount, "the shared region holds at most its slots")
        #expect(held.enumerated().allSatisfy { index, bytes in bytes.withUnsafeBytes { $0.allSatisfy { $0 == UInt8(index % 251 + 1) } } },
                "every secret keeps its own bytes, in the region or out of it")
        #expect(outside.allSatisfy { $0.slice(0..<64).withUnsafeBytes { Array($0) } == $0.withUnsafeBytes { Array($0) } })
        // Meanwhile a region of one's own still has room: what the other tests here allocate from.
        let arena = SecretArena(slotCount: 64)
        #expect(SecureBytes(count: 32, arena: arena).isInRegion(of: arena))
    }

    /// A region of the test's own, mapped as the shared one is (one `sodium_malloc` at its first allocation).
    @Test func test_sharedRegion_isLeftOutOfCoreDumpsAndLocked() throws {
        let arena = SecretArena(slotCount: 64)
        let key = SecureBytes(count: 32, arena: arena)
        #expect(key.isInRegion(of: arena))
        let address = key.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!) }
        // Read to the end: a /proc file's size is 0, so a read by size gets nothing.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        // Each mapping starts with a line "start-end perms ..." and lists "Locked:" and "VmFlags:" after it.
        var inside = false, locked: Int?, flags: [Substring]?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && (bounds[0]..<bounds[1]).contains(address)
            } else if inside, fields.first == "Locked:", fields.count >= 2 {
                locked = Int(fields[1])
            } else if inside, fields.first == "VmFlags:" {
                flags = Array(fields.dropFirst())
            }
        }
        let vmFlags = try #require(flags, "no mapping holds the shared region")
        #expect(vmFlags.contains("dd"), "MADV_DONTDUMP: the region stays out of core dumps")
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit)
        // Locking needs room under RLIMIT_MEMLOCK (root has it whatever the limit). The sanitizers'
        // mlock does nothing (make check-sanitizers sets these variables; AgentSecurityCLITests skips the same).
        let environment = ProcessInfo.processInfo.environment
        let sanitized = environment["VAULTFILE_SANITIZER"] != nil || environment["ASAN_OPTIONS"] != nil
        if !sanitized && (geteuid() == 0 || limit.rlim_cur == rlim_t.max || limit.rlim_cur >= 8 << 20) {
            #expect(vmFlags.contains("lo") && (locked ?? 0) > 0, "mlock: the region is never swapped out")
        }
    }
}
