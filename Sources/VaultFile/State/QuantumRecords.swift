#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - Whether each vault was post-quantum when seen here

/// What this machine last took each vault's post-quantum status to be (`PostQuantumStatus`), so
/// that a vault that was post-quantum and no longer is, because a member added a classical slot
/// (`slot add --allow-classical`) or a copy planted in its place, is noticed on every member's
/// machine, not only by whoever made the change (docs/SECURITY.md, "A vault that stops being
/// post-quantum"). The rules are `RollbackCheck+Quantum.swift`'s.
///
/// One record per vault id, `<vault id in hex>.quantum`, written only for vaults seen
/// post-quantum here (fully or against outsiders), and for those whose loss of it was accepted:
///
///     vaultfile-quantum 1
///     status post-quantum | against-outsiders | classical
///     generation <the generation at which that status was taken>
///     seen <seconds since 1970, UTC>
///     path <the canonical path it was last seen at, to the end of the file>
///
/// And one per path at which a vault was taken here (post-quantum, or its loss accepted),
/// `<BLAKE2b-256 of the canonical path, 16 bytes in hex>.quantum-path`, naming that vault, so that
/// another vault found at the path is noticed with one read, not a scan of every record, and a
/// vault opened at several paths (clones, work trees) keeps each of them:
///
///     vaultfile-quantum-path 1
///     vault <vault id in hex>
///     path <the canonical path, to the end of the file>
///
/// Nothing secret: the status is what `info` prints from the header. Kept inside git work trees
/// too (the status of a branch checked out is what a member reads and writes there).
public struct QuantumRecords: Sendable {
    /// The folder holding the records.
    public let state: StateFolder

    /// The records of `state`.
    public init(state: StateFolder) {
        self.state = state
    }

    /// What was recorded about one vault.
    public struct Record: Equatable, Sendable {
        /// The status taken here.
        public var status: PostQuantumStatus
        /// The generation of the copy that status was taken from: an older copy changes nothing.
        public var generation: UInt64
        /// When it was taken, in seconds since 1970 (UTC).
        public var seen: Int64
        /// The absolute path the vault was last seen at.
        public var path: String
    }

    /// The suffix of every record's name.
    static let suffix = ".quantum"

    /// The name of the record of vault `vaultID`.
    static func recordName(_ vaultID: [UInt8]) -> String { SeenGenerations.Record.hex(vaultID) + suffix }

    /// The record of vault `vaultID`, or nil when there is none (or not one this build reads: then
    /// the next status seen replaces it).
    public func record(of vaultID: [UInt8]) throws(StateFolder.Problem) -> Record? {
        try state.read(Self.recordName(vaultID)).flatMap(Record.init(parsing:))
    }

    /// Writes `record` as the record of vault `vaultID`, unless the one on disk (re-read under the
    /// folder's lock) is already it or was taken at a higher generation meanwhile; and names the
    /// vault as the one taken at `record.path` (`vaultTaken(at:)`), unless that is already so.
    public func write(_ record: Record, vault vaultID: [UInt8]) throws(StateFolder.Problem) {
        try state.update(Self.recordName(vaultID)) { current in
            if let current = current.flatMap(Record.init(parsing:)),
               current.generation > record.generation || (current.status == record.status && current.path == record.path) { return nil }
            return record.encoded
        }
        let id = SeenGenerations.Record.hex(vaultID)
        guard vaultTaken(at: record.path) != id else { return }
        try state.update(Self.pathRecordName(record.path)) { _ in Self.pathRecord(vault: id, path: record.path) }
    }

    /// The id (hex) of the vault last taken at `path` (canonical), nil when none was (or its
    /// record cannot be read: it is skipped, and replaced when a vault is next taken there).
    public func vaultTaken(at path: String) -> String? {
        guard let bytes = try? state.read(Self.pathRecordName(path)), bytes.count <= StateFolder.maxRecordLength, bytes.last == 0x0A,
              let text = String(validating: bytes.dropLast(), as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == "vaultfile-quantum-path 1", lines[1].hasPrefix("vault "), lines[2] == "path " + path else { return nil }
        let id = lines[1].dropFirst("vault ".count)
        guard (1...128).contains(id.count), id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return String(id)
    }

    /// Another vault than `vaultID` taken here last at `path` (canonical) and recorded as
    /// post-quantum (fully or against outsiders): its id in hex and its record; nil when none is.
    /// Unreadable records are skipped (they are replaced when their own vault is opened).
    public func otherPostQuantumVault(lastSeenAt path: String, than vaultID: [UInt8]) -> (id: String, record: Record)? {
        guard let id = vaultTaken(at: path), id != SeenGenerations.Record.hex(vaultID),
              let record = (try? state.read(id + Self.suffix))?.flatMap(Record.init(parsing:)), record.status != .classical else { return nil }
        return (id, record)
    }

    /// The suffix of every path record's name.
    static let pathSuffix = ".quantum-path"

    /// The name of the path record of `path`.
    static func pathRecordName(_ path: String) -> String {
        SeenGenerations.Record.hex(Array(Checksum.blake2b256(Array(path.utf8)[...]).prefix(16))) + pathSuffix
    }

    /// A path record's file contents.
    static func pathRecord(vault id: String, path: String) -> [UInt8] {
        Array("vaultfile-quantum-path 1\nvault \(id)\npath \(path)\n".utf8)
    }
}

// MARK: - Reading and writing a record

extension QuantumRecords.Record {
    /// The record's file contents.
    var encoded: [UInt8] {
        Array("""
            vaultfile-quantum 1
            status \(status.recordWord)
            generation \(generation)
            seen \(seen)
            path \(path)

            """.utf8)
    }

    /// The record in `bytes`, or nil when they are not one this build wrote.
    init?(parsing bytes: [UInt8]) {
        guard bytes.count <= StateFolder.maxRecordLength, bytes.last == 0x0A,
              let text = String(validating: bytes.dropLast(), as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false)
        func value(_ index: Int, _ key: String) -> Substring? {
            lines[index].hasPrefix(key + " ") ? lines[index].dropFirst(key.count + 1) : nil
        }
        guard lines.count == 5, lines[0] == "vaultfile-quantum 1",
              let status = value(1, "status").flatMap(PostQuantumStatus.init(recordWord:)),
              let generation = value(2, "generation").flatMap({ UInt64($0) }),
              let seen = value(3, "seen").flatMap({ Int64($0) }), (0...SeenRecord.latestTime).contains(seen),
              let path = value(4, "path"), path.hasPrefix("/") else { return nil }
        self.init(status: status, generation: generation, seen: seen, path: String(path))
    }
}
