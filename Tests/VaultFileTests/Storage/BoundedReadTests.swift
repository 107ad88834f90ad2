import Foundation
import Glibc
import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// No command reads a whole vault file into memory: the header is read alone, the payload chunk by chunk.
///
/// The measure is the bytes this process reads (`rchar` in /proc/self/io): a count, not a
/// timing, and other tests running meanwhile read a few MiB at most, far below the 1 GiB that
/// reading one of these files whole costs.
@Suite struct BoundedReadTests {
    /// Well above what other tests read meanwhile, far below the 1,056 MiB file.
    private static let readAllowance: UInt64 = 128 << 20

    /// The peak resident size of this process so far, in KiB (VmHWM).
    private func peakResidentKiB() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? ""))
    }

    /// Bytes read by this process with read(2) and its kin so far.
    private func bytesReadSoFar() throws -> UInt64 {
        let text = try String(contentsOfFile: "/proc/self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(UInt64(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// A small vault at `small.vault`, and `large.vault`: its valid header, then zeros (a hole)
    /// up to the largest size a vault may have, so that only the size check stands in the way.
    private func largestVault(in directory: TemporaryDirectory) throws -> (small: VaultStore, large: VaultStore) {
        let small = VaultStore(path: directory.path("small.vault"))
        try small.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let (_, _, headerLength) = try small.readHeader()
        let header = Array(try small.read().bytes.prefix(headerLength))
        let large = VaultStore(path: directory.path("large.vault"))
        let fd = open(large.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(write(fd, header, header.count) == header.count)
        try #require(ftruncate(fd, off_t(VaultLimits.maxFileLength)) == 0)
        return (small, large)
    }

    // MARK: - readHeader

    /// The finding: `info` on a 1,056 MiB file with a valid header read it whole (1.1 GB).
    @Test func test_readHeader_readsOnlyTheHeaderOfTheLargestVault() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (small, large) = try largestVault(in: directory)
        let before = try bytesReadSoFar()
        let (header, fileSize, headerLength) = try large.readHeader()
        let read = try bytesReadSoFar() - before
        #expect(read < Self.readAllowance, "readHeader read \(read) bytes")
        #expect(header == (try small.readHeader().header))
        #expect(fileSize == VaultLimits.maxFileLength && headerLength < VaultHeader.maxLength)
    }

    // MARK: - mergeFiles

    /// The finding: `git merge` read all three files whole (3.2 GB) before any check.
    @Test func test_mergeFiles_streamsEachSideInsteadOfReadingItWhole() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (small, large) = try largestVault(in: directory)
        let bytes = try small.read().bytes
        for name in ["ours.vault", "theirs.vault"] { try AtomicFileWriter().write(bytes, to: directory.path(name), finalLink: .follow) }
        let before = try bytesReadSoFar(), peakBefore = try peakResidentKiB()
        #expect {
            try VaultStore.mergeFiles(base: large.path, ours: directory.path("ours.vault"), theirs: directory.path("theirs.vault"),
                                      password: password("pw"), limits: testLimits)
        } throws: { error in
            if case VaultError.payloadDamaged = error { return true }
            return false
        }
        let read = try bytesReadSoFar() - before
        #expect(read < Self.readAllowance, "the merge read \(read) bytes")
        // The base fails at its first chunk: its 1 GiB buffer is wiped only as far as it was
        // decrypted. Before, the wipe faulted in every page of it (the peak grew by 1 GiB).
        let grown = try peakResidentKiB() - peakBefore
        #expect(grown < 512 * 1024, "the peak resident size grew by \(grown) KiB")
        #expect(try VaultStore(path: directory.path("ours.vault")).read().bytes == bytes, "ours is left as it was")
    }
}
