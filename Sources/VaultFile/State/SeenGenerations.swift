#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - The generations this machine has seen

/// The highest generation of each vault this machine has seen, kept in the state folder so that
/// an older copy (an old USB stick, a backup, a sync tool's stale file) is recognised
/// (docs/SECURITY.md, "Rollback").
///
/// One record per vault id, `<vault id in hex>.generation`, a few lines of text:
///
///     vaultfile-seen 1
///     generation 42
///     header-blake2b <64 hex digits: BLAKE2b-256 of that generation's whole header>
///     seen <seconds since 1970, UTC>
///     path <the absolute path it was seen at, to the end of the file>
///
/// A record only ever rises: it is rewritten when a higher generation is seen, never for an
/// equal or a lower one, so records written by processes racing each other end at the highest.
/// It never holds a generation that is no plausible successor (`Generations`): above 2^63, or more
/// than 2^32 past the record. The one exception to rising: a record at the ceiling, which no seal
/// can pass, is replaced by the next generation written (docs/FORMAT.md §2.1).
public struct SeenGenerations: Sendable {
    /// The folder holding the records.
    public let state: StateFolder

    /// The records of `state`.
    public init(state: StateFolder) {
        self.state = state
    }

    // MARK: Records

    /// What was recorded about one vault (declared beside `VaultError`, which names one).
    public typealias Record = SeenRecord

    /// The name of the record of vault `vaultID`.
    static func recordName(_ vaultID: [UInt8]) -> String { Record.hex(vaultID) + ".generation" }

    /// The hash that tells two headers of one generation apart: BLAKE2b-256 of the whole header.
    public static func headerHash(_ header: VaultHeader) -> [UInt8] {
        Checksum.blake2b256(header.encoded()[...])
    }

    /// What was recorded about the vault `vaultID`, or nil when nothing (or no readable record) was.
    public func record(for vaultID: [UInt8]) throws(StateFolder.Problem) -> Record? {
        try state.read(Self.recordName(vaultID)).flatMap(Record.init(parsing:))
    }

    // MARK: Comparing

    /// How a header compares with what was recorded about its vault.
    public enum Comparison: Equatable, Sendable {
        /// Nothing recorded about this vault.
        case unseen
        /// The generation and the header recorded.
        case same(Record)
        /// A higher generation than the one recorded.
        case newer(Record)
        /// A lower generation than one seen here: an older copy.
        case older(Record)
        /// The generation recorded, with another header: two copies were each changed from one older copy.
        case diverged(Record)
        /// No plausible successor of the record (or of anything, without one): above 2^63, or more
        /// than 2^32 past the generation recorded (`Generations.isPlausible`).
        case implausible(Record?)
    }

    /// How `header` compares with `record`.
    public static func compare(_ header: VaultHeader, with record: Record?) -> Comparison {
        guard Generations.isPlausible(header.generation, after: record) else { return .implausible(record) }
        guard let record else { return .unseen }
        if header.generation > record.generation { return .newer(record) }
        if header.generation < record.generation { return .older(record) }
        return headerHash(header) == record.headerHash ? .same(record) : .diverged(record)
    }

    // MARK: Recording

    /// Records `header`, seen at `path`, when its generation is higher than the one recorded
    /// (or none is, or the one recorded is at the ceiling); returns whether the record was written.
    /// A generation above the ceiling is never recorded. Whether it is a plausible successor of
    /// the record is the caller's to decide (`compare`), before a write adds one to it.
    @discardableResult
    public func note(_ header: VaultHeader, path: String, now: Int64 = Int64(time(nil))) throws(StateFolder.Problem) -> Bool {
        guard header.generation <= Generations.ceiling else { return false }
        let record = Record(generation: header.generation, headerHash: Self.headerHash(header), seen: now, path: absolute(path))
        return try state.update(Self.recordName(header.vaultID)) { current in
            // Re-read under the lock: another process may have recorded a higher generation meanwhile.
            // A record at the ceiling cannot be passed: whatever is written next replaces it.
            if let current = current.flatMap(Record.init(parsing:)), current.generation >= record.generation,
               current.generation < Generations.ceiling { return nil }
            return record.encoded
        }
    }

    /// `path` made absolute and canonical, so that a message names the file wherever it is read
    /// and one file has one name in the records however it was typed (`../t.vault` from a
    /// sub-folder, `//`, a symlinked folder): the real path of its folder (`realpath`) and its
    /// name; a folder that cannot be resolved is normalised lexically (`//`, `.` and `..`).
    func absolute(_ path: String) -> String {
        Self.canonical(path)
    }

    /// `absolute`'s rule, for any record keyed or compared by path.
    public static func canonical(_ path: String) -> String {
        var joined = path
        if !path.hasPrefix("/"), let folder = getcwd(nil, 0) {
            joined = String(cString: folder) + "/" + path
            free(folder)
        }
        let lexical = lexicallyNormalised(joined)
        let slash = joined.lastIndex(of: "/") ?? joined.startIndex
        let name = String(joined[joined.index(after: slash)...])
        guard !["", ".", ".."].contains(name) else { return resolved(joined) ?? lexical }
        let folder = slash == joined.startIndex ? "/" : String(joined[..<slash])
        guard let real = resolved(folder) else { return lexical }
        return real == "/" ? "/" + name : real + "/" + name
    }

    /// `realpath(path)`, nil when it fails (a missing folder, no permission).
    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// `path` (absolute) without empty, `.` and `..` components.
    static func lexicallyNormalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

// MARK: - Reading and writing a record

/// A record's file contents, and reading them back.
extension SeenRecord {
    /// The record's file contents.
    var encoded: [UInt8] {
        Array("""
            vaultfile-seen 1
            generation \(generation)
            header-blake2b \(Self.hex(headerHash))
            seen \(seen)
            path \(path)

            """.utf8)
    }

    /// The record in `bytes`, or nil when they are not one this build wrote (then the record
    /// is treated as absent and replaced by the next one). A generation above the ceiling is not
    /// one this build records: an earlier release recorded a crafted copy's 2^64 − 1, which would
    /// make every genuine copy older.
    ///
    /// The lines are split on the newline byte and the first four compared as bytes: the ASCII
    /// they must hold has no other spelling, and a String split walks grapheme clusters (half of
    /// the instructions of every open's rollback check). The path line is read as a String, as before.
    init?(parsing bytes: [UInt8]) {
        guard bytes.count <= StateFolder.maxRecordLength, bytes.last == 0x0A,
              let text = String(validating: bytes.dropLast(), as: UTF8.self) else { return nil }
        let lines = text.utf8.split(separator: 0x0A, maxSplits: 4, omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0].elementsEqual("vaultfile-seen 1".utf8),
              let generation = Self.asciiValue(lines[1], "generation").flatMap({ UInt64($0) }), generation <= Generations.ceiling,
              let hash = Self.asciiValue(lines[2], "header-blake2b").flatMap(Self.bytes(hex:)), hash.count == 32,
              let seen = Self.asciiValue(lines[3], "seen").flatMap({ Int64($0) }), (0...Self.latestTime).contains(seen),
              let path = Self.value(Substring(lines[4]), "path"), !path.isEmpty else { return nil }
        self.init(generation: generation, headerHash: hash, seen: seen, path: path)
    }

    /// The last second of the year 9999: a later time is not one this build wrote.
    static let latestTime: Int64 = 253_402_300_799

    private static func value(_ line: Substring, _ key: String) -> String? {
        guard line.hasPrefix(key + " ") else { return nil }
        return String(line.dropFirst(key.count + 1))
    }

    /// What follows `key` and a space on a line of ASCII fields (a number or hex digits).
    private static func asciiValue(_ line: Substring.UTF8View, _ key: String) -> String? {
        let prefix = key.utf8.count + 1
        guard line.count >= prefix, line.prefix(prefix - 1).elementsEqual(key.utf8),
              line[line.index(line.startIndex, offsetBy: prefix - 1)] == 0x20 else { return nil }
        return String(Substring(line.dropFirst(prefix)))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: return digit - 0x30
            case 0x61...0x66: return digit - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}
