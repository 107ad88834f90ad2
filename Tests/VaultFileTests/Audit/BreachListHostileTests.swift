import Foundation
import TestSupport
import Testing
@testable import VaultFile

/// Hostile or damaged Pwned Passwords lists: errors that name nothing derived from a password's
/// hash, counts past 64 bits, range files that are not regular files.
@Suite struct BreachListHostileTests {
    private func occurrences(_ list: PwnedPasswords, _ password: String) throws -> Int? {
        try Array(password.utf8).withUnsafeBytes { bytes throws(BreachListError) in try list.occurrences(of: bytes) }
    }

    /// A range folder holding 00000.txt and, for hunter2's prefix, `text` (or what `make` makes).
    private func folder(_ directory: TemporaryDirectory, _ text: String? = nil, make: ((String) throws -> Void)? = nil) throws -> (PwnedPasswords, String) {
        let ranges = directory.url.appendingPathComponent("ranges")
        try PwnedPasswordsFixture.writeRangeFolder(PwnedPasswordsTests.lines(50), to: ranges, prefixes: ["00000"])
        let prefix = String(PwnedPasswordsTests.hex("hunter2").prefix(5))
        let file = ranges.appendingPathComponent("\(prefix).txt").path
        if let text { try Data(text.utf8).write(to: URL(fileURLWithPath: file)) }
        try make?(file)
        return (try PwnedPasswords(path: ranges.path), prefix)
    }

    /// The error of looking hunter2 up, after checking it names no part of its hash.
    private func error(_ list: PwnedPasswords, prefix: String) -> BreachListError? {
        do { _ = try occurrences(list, "hunter2"); return nil } catch let error as BreachListError {
            let text = "\(error)"
            #expect(!text.contains(prefix) && !text.contains(prefix.lowercased()) && !text.contains("at byte"), "\(text)")
            return error
        } catch { Issue.record("\(error)"); return nil }
    }

    // MARK: - Errors

    @Test func test_occurrences_rangeFileErrorsNameTheFolderNotTheFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let suffix = String(PwnedPasswordsTests.hex("hunter2").dropFirst(5))
        let (malformed, prefix) = try folder(directory, "\(suffix):many\r\n")
        let ranges = directory.path("ranges")
        #expect(error(malformed, prefix: prefix) == .malformedLine(path: ranges, inRangeFolder: true))
        let big = String(repeating: "\(suffix):1\r\n", count: RangeFolder.largestRangeFile / 30)
        let (tooLarge, _) = try folder(directory, big)
        #expect(error(tooLarge, prefix: prefix) == .rangeFileTooLarge(folder: ranges, limit: RangeFolder.largestRangeFile))
        try FileManager.default.removeItem(atPath: directory.path("ranges/\(prefix).txt"))
        #expect(error(tooLarge, prefix: prefix) == .rangeFileMissing(folder: ranges))
    }

    @Test func test_occurrences_sortedFileErrorsGiveNoOffset() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        var lines = PwnedPasswordsFixture.randomLines(3_000).sorted { $0.hash < $1.hash }.map { "\($0.hash):\($0.count)\r\n" }
        for index in stride(from: 1, to: lines.count, by: 2) { lines[index] = String(repeating: "Z", count: 40) + ":1\r\n" }
        try Data(lines.joined().utf8).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        let prefix = String(PwnedPasswordsTests.hex("hunter2").prefix(5))
        #expect(error(list, prefix: prefix) == .malformedLine(path: directory.path("list.txt"), inRangeFolder: false))
        let reversed = PwnedPasswordsFixture.randomLines(20_000).sorted { $0.hash > $1.hash }.map { "\($0.hash):\($0.count)\r\n" }
        try Data(reversed.joined().utf8).write(to: directory.url.appendingPathComponent("reversed.txt"))
        let unsorted = try PwnedPasswords(path: directory.path("reversed.txt"))
        var refused = 0
        for index in 0..<10 {
            do { _ = try occurrences(unsorted, "probe-\(index)") } catch {
                #expect(error as? BreachListError == .notSorted(path: directory.path("reversed.txt")) && !"\(error)".contains("byte"), "\(error)")
                refused += 1
            }
        }
        #expect(refused > 0)
    }

    // MARK: - Counts

    @Test func test_readLine_refusesACountPast64BitsAsMalformed() throws {
        let key = Array(String(repeating: "A", count: 35).utf8)
        func read(_ count: String) -> Int? {
            let line = Array((String(repeating: "A", count: 35) + ":" + count + "\r\n").utf8)
            return line.withUnsafeBytes { PwnedPasswords.readLine($0, comparingWith: key, atEnd: true)?.count }
        }
        #expect(read("9223372036854775807") == Int.max)
        #expect(read("42") == 42)
        #expect(read("9999999999999999999") == nil)
        #expect(read("9223372036854775808") == nil)
        #expect(read("99999999999999999999") == nil)
        let suffix = String(PwnedPasswordsTests.hex("hunter2").dropFirst(5))
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (list, prefix) = try folder(directory, "\(suffix):9999999999999999999\r\n")
        #expect(error(list, prefix: prefix) == .malformedLine(path: directory.path("ranges"), inRangeFolder: true))
    }

    // MARK: - Not a regular file

    @Test func test_occurrences_refusesAFIFOOrSymbolicLinkAsRangeFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        // Before the fix, opening the FIFO blocked for ever (no writer).
        let (fifo, prefix) = try folder(directory) { #expect(mkfifo($0, 0o600) == 0) }
        #expect(error(fifo, prefix: prefix) == .rangeFileNotRegular(folder: directory.path("ranges")))
        let other = try TemporaryDirectory(); defer { other.remove() }
        try Data("x".utf8).write(to: other.url.appendingPathComponent("target"))
        let (link, _) = try folder(other) { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: other.path("target")) }
        #expect(error(link, prefix: prefix) == .rangeFileNotRegular(folder: other.path("ranges")))
    }
}
