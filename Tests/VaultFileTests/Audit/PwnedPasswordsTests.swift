import Foundation
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat

/// The offline Pwned Passwords search: the sorted file by interpolation and bisection, the folder
/// of range files, and every way a list can be wrong.
@Suite struct PwnedPasswordsTests {
    /// The upper-case hexadecimal hash of `password` of `kind`.
    static func hex(_ password: String, _ kind: BreachHash = .sha1) -> String {
        var digest = [UInt8](repeating: 0, count: kind.digestLength)
        _ = Array(password.utf8).withUnsafeBytes { bytes in digest.withUnsafeMutableBytes { kind.digest(of: bytes, into: $0) } }
        return String(decoding: PwnedPasswords.upperHex(digest), as: UTF8.self)
    }

    static let planted: [(password: String, count: Int)] = [("password1", 2_418_984), ("hunter2", 17_043), ("Tr0ub4dor&3", 1)]

    /// `count` random lines with the planted passwords among them.
    static func lines(_ count: Int, kind: BreachHash = .sha1) -> [(hash: String, count: Int)] {
        PwnedPasswordsFixture.randomLines(count, digits: kind.digestLength * 2) + planted.map { (hex($0.password, kind), $0.count) }
    }

    private func occurrences(_ list: PwnedPasswords, _ password: String) throws -> Int? {
        try Array(password.utf8).withUnsafeBytes { bytes throws(BreachListError) in try list.occurrences(of: bytes) }
    }

    // MARK: - The sorted file

    @Test func test_occurrences_findsEveryPlantedPasswordAndNoOther() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        try PwnedPasswordsFixture.sortedFile(Self.lines(20_000)).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        #expect(list.hash == .sha1 && !list.isRangeFolder)
        for (password, count) in Self.planted { #expect(try occurrences(list, password) == count, "\(password)") }
        for password in ["not-in-the-list", "correct horse battery staple", ""] { #expect(try occurrences(list, password) == 0) }
    }

    @Test func test_occurrences_everyLineOfAFileIsFoundWhereverItLies() throws {
        // Every line of a file of a few hundred KiB, the first and the last included, by its own hash.
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let lines = PwnedPasswordsFixture.randomLines(5_000).sorted { $0.hash < $1.hash }
        try PwnedPasswordsFixture.sortedFile(lines, crlf: false).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        for line in lines { #expect(try list.occurrences(ofDigest: Self.bytes(line.hash)) == line.count) }
        #expect(try list.occurrences(ofDigest: [UInt8](repeating: 0, count: 20)) == 0)
        #expect(try list.occurrences(ofDigest: [UInt8](repeating: 0xFF, count: 20)) == 0)
    }

    @Test func test_occurrences_readsAFewHundredBytesOfALargeFileNotTheWholeFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        try PwnedPasswordsFixture.sortedFile(Self.lines(300_000)).write(to: directory.url.appendingPathComponent("list.txt"))
        let size = try FileManager.default.attributesOfItem(atPath: directory.path("list.txt"))[.size] as! Int
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        let before = list.bytesRead
        for index in 0..<100 { _ = try occurrences(list, "absent-\(index)") }
        #expect(try occurrences(list, "hunter2") == 17_043)
        // About 13 MB searched 101 times: each lookup reads a few probes and one window of 4 KiB.
        let perLookup = (list.bytesRead - before) / 101
        #expect(perLookup < 8 * 1024, "\(perLookup) bytes a lookup in a file of \(size)")
        #expect((list.reads - 1) / 101 < 2 * 23, "no more probes than twice a bisection's")
    }

    @Test func test_init_readsTheHashKindFromTheList() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        try PwnedPasswordsFixture.sortedFile(Self.lines(1_000, kind: .ntlm)).write(to: directory.url.appendingPathComponent("ntlm.txt"))
        let list = try PwnedPasswords(path: directory.path("ntlm.txt"))
        #expect(list.hash == .ntlm)
        #expect(try occurrences(list, "hunter2") == 17_043)
        #expect(try occurrences(list, "absent") == 0)
        #expect(throws: BreachListError.hashMismatch(path: directory.path("ntlm.txt"), found: .ntlm, asked: .sha1)) {
            try PwnedPasswords(path: directory.path("ntlm.txt"), asking: .sha1)
        }
    }

    @Test func test_occurrences_readsLowerCaseHexAndAFileWithoutAFinalNewline() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        var text = String(decoding: PwnedPasswordsFixture.sortedFile(Self.lines(200)), as: UTF8.self).lowercased()
        text.removeLast(2)
        try Data(text.utf8).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        for (password, count) in Self.planted { #expect(try occurrences(list, password) == count) }
    }

    // MARK: Failures

    @Test func test_occurrences_refusesAFileNotSortedByHash() throws {
        // The file ordered by prevalence, as HIBP also publishes it: the bisection would be wrong.
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let lines = Self.lines(50_000).sorted { $0.count > $1.count }
        try Data(lines.map { "\($0.hash):\($0.count)\r\n" }.joined().utf8).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        var refused = 0
        for index in 0..<20 {
            do { _ = try occurrences(list, "probe-\(index)") } catch let error as BreachListError {
                if case .notSorted(let path) = error, path == directory.path("list.txt") { refused += 1 }
            }
        }
        #expect(refused >= 15, "only \(refused) of 20 lookups noticed the order")
    }

    @Test func test_init_refusesWhatIsNoList() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        try Data("hello world\n".utf8).write(to: directory.url.appendingPathComponent("text.txt"))
        try Data("ABCDEF:12\r\n".utf8).write(to: directory.url.appendingPathComponent("short.txt"))
        #expect(throws: BreachListError.self) { try PwnedPasswords(path: directory.path("text.txt")) }
        do { _ = try PwnedPasswords(path: directory.path("short.txt")); Issue.record("accepted") } catch {
            #expect("\(error)".contains("6 digits, not 40 (SHA-1) or 32 (NTLM)"))
        }
        #expect(throws: BreachListError.unreadable(path: directory.path("none"), operation: "opening", errno: ENOENT)) {
            try PwnedPasswords(path: directory.path("none"))
        }
        #expect(throws: BreachListError.notAFileOrFolder(path: "/dev/null")) { try PwnedPasswords(path: "/dev/null") }
    }

    @Test func test_occurrences_refusesAMalformedLineItMeets() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        var lines = PwnedPasswordsFixture.randomLines(300).sorted { $0.hash < $1.hash }.map { "\($0.hash):\($0.count)\r\n" }
        lines[150] = String(repeating: "Z", count: 40) + ":1\r\n"
        try Data(lines.joined().utf8).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        #expect(throws: BreachListError.self) { for index in 0..<50 { _ = try occurrences(list, "probe-\(index)") } }
    }

    // MARK: - The range folder

    @Test func test_occurrences_rangeFolderGivesTheAnswersOfTheSortedFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let lines = Self.lines(30_000)
        try PwnedPasswordsFixture.sortedFile(lines).write(to: directory.url.appendingPathComponent("list.txt"))
        let probes = Self.planted.map(\.password) + (0..<30).map { "absent-\($0)" }
        // The folder holds the range files the probes need (and 00000.txt): all 1,048,576 would be 1 GB.
        let prefixes = Set(probes.map { String(Self.hex($0).prefix(5)) } + ["00000"])
        try PwnedPasswordsFixture.writeRangeFolder(lines, to: directory.url.appendingPathComponent("ranges"), prefixes: prefixes)
        let file = try PwnedPasswords(path: directory.path("list.txt"))
        let folder = try PwnedPasswords(path: directory.path("ranges"))
        #expect(folder.isRangeFolder && folder.hash == .sha1)
        for probe in probes { #expect(try occurrences(folder, probe) == occurrences(file, probe), "\(probe)") }
        #expect(try occurrences(folder, "hunter2") == 17_043)
    }

    @Test func test_occurrences_rangeFolderMissingAFileSaysTheDownloadIsIncomplete() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let ranges = directory.url.appendingPathComponent("ranges")
        try PwnedPasswordsFixture.writeRangeFolder(Self.lines(100), to: ranges, prefixes: ["00000"])
        let folder = try PwnedPasswords(path: ranges.path)
        let prefix = String(Self.hex("hunter2").prefix(5))
        #expect(throws: BreachListError.rangeFileMissing(folder: ranges.path)) { try occurrences(folder, "hunter2") }
        // The error names the folder only: the missing file's 5 digits are the first 5 of the hash looked up.
        do { _ = try occurrences(folder, "hunter2") } catch { #expect(!"\(error)".contains(prefix), "\(error)") }
        #expect(throws: BreachListError.rangeFileMissing(folder: directory.path("list.txt"))) {
            try FileManager.default.createDirectory(atPath: directory.path("list.txt"), withIntermediateDirectories: true)
            _ = try PwnedPasswords(path: directory.path("list.txt"))
        }
    }

    @Test func test_occurrences_rangeFolderOfNTLMHashes() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let lines = Self.lines(500, kind: .ntlm)
        let prefixes = Set(["00000", String(Self.hex("hunter2", .ntlm).prefix(5))])
        try PwnedPasswordsFixture.writeRangeFolder(lines, to: directory.url.appendingPathComponent("ranges"), prefixes: prefixes)
        let folder = try PwnedPasswords(path: directory.path("ranges"))
        #expect(folder.hash == .ntlm)
        #expect(try occurrences(folder, "hunter2") == 17_043)
    }

    /// `hex` (upper case) as bytes.
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
