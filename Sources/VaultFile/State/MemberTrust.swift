#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - The members each signed vault has on this machine

/// Who this machine trusts to write each signed vault, as ssh trusts host keys (docs/SECURITY.md,
/// "The members a machine trusts"; the judgement is `MemberTrust.judge`, MemberTrust+Judgement.swift).
///
/// One record per vault id, `<vault id in hex>.members`, in the state folder (0600, written whole
/// under the folder's lock, as every record):
///
///     vaultfile-members 1
///     signed <generation>                       the first signed seal seen here (absent: never seen signed)
///     m <position> <type> <key> <label>         a pinned member: slot position, type, key and label in hex ('-': none)
///     r <removed id> <remover id> <generation>  a removal learned (a tombstone)
///     t <retired id> <generation>               a key that left the slots of an accepted copy without a removal
///     h <generation> <header hash>              a header accepted here (BLAKE2b-128 of the whole header)
///     path <absolute path>                      where the vault was last seen (to the end of the line)
///
/// Ids are member key ids (`MemberKey.id`, 32 hex digits). Each list keeps its newest entries up to
/// a cap (`Caps`), so a record stays under `maxLength` whatever happens. Unlike the other records, a
/// damaged one (a line this build did not write, a record too long, a newer version) is not read as
/// empty: that would make this machine trust on first use again, silently. It is a `Problem` (the
/// command warns, judges nothing and records nothing), until the user removes the file.
///
/// Only signed vaults have one: an unsigned vault never seen signed has no members to pin.
public struct MemberTrust: Sendable {
    /// The folder holding the records.
    public let state: StateFolder

    /// The records of `state`.
    public init(state: StateFolder) {
        self.state = state
    }

    /// The longest record read or written.
    static let maxLength = 131_072
    /// The suffix of a record's name.
    static let suffix = ".members"

    /// `bytes` in lowercase hex, as records and messages write a vault id.
    public static func hex(_ bytes: [UInt8]) -> String { SeenGenerations.Record.hex(bytes) }

    /// The name of the record of vault `vaultID`.
    static func recordName(_ vaultID: [UInt8]) -> String { SeenGenerations.Record.hex(vaultID) + suffix }

    /// The record of vault `vaultID`, or nil when there is none; a damaged one is a `Problem`.
    public func record(of vaultID: [UInt8]) throws(StateFolder.Problem) -> Record? {
        let name = Self.recordName(vaultID)
        guard let bytes = try state.read(name, limit: Self.maxLength) else { return nil }
        return try parse(bytes, name: name)
    }

    /// Replaces the record of vault `vaultID` with what `change` makes of it (an empty record when
    /// there is none), re-read under the folder's lock; written only when it changed. A damaged
    /// record is left as it is, and is the `Problem` thrown.
    @discardableResult
    public func update(_ vaultID: [UInt8], _ change: (inout Record) -> Void) throws(StateFolder.Problem) -> Bool {
        let name = Self.recordName(vaultID)
        var damage: StateFolder.Problem?
        let wrote = try state.update(name, limit: Self.maxLength) { current in
            let before: Record
            switch current.map({ bytes in Result { () throws(StateFolder.Problem) in try parse(bytes, name: name) } }) {
            case .success(let record)?: before = record
            case .failure(let problem)?:
                damage = problem
                return nil
            case nil: before = Record()
            }
            var after = before
            change(&after)
            after.trim()
            return after == before ? nil : after.encoded()
        }
        if let damage { throw damage }
        return wrote
    }

    /// The vault id (hex) whose record says it was last seen at `path` (absolute), other than
    /// `vaultID`, or nil: a vault id new here at a path where another was seen is not pinned silently.
    /// Damaged records are skipped here: they are reported when their own vault is opened.
    public func otherVault(lastSeenAt path: String, than vaultID: [UInt8]) throws(StateFolder.Problem) -> String? {
        let own = Self.recordName(vaultID)
        for name in try state.recordNames(endingIn: Self.suffix) where name != own {
            guard let bytes = try state.read(name, limit: Self.maxLength), let record = try? parse(bytes, name: name),
                  record.paths.contains(path) else { continue }
            return String(name.dropLast(Self.suffix.count))
        }
        return nil
    }

    /// `bytes` as a record, or the `Problem` that names the record and what to do.
    private func parse(_ bytes: [UInt8], name: String) throws(StateFolder.Problem) -> Record {
        do {
            return try Record(parsing: bytes)
        } catch {
            throw StateFolder.Problem(folder: state.path, reason: "the record \(name) is damaged (\(error.why)); nothing is trusted or "
                + "recorded from it: remove it to trust this vault on first use again")
        }
    }
}

// MARK: - One vault's record

extension MemberTrust {
    /// The most entries of each list a record keeps (the oldest, or the lowest generations, go first).
    enum Caps {
        /// Pinned members: one per keyslot a vault can have.
        static let pinned = VaultHeader.maxKeyslots
        /// Removals learned (as many as a seal carries).
        static let removed = SealRecord.maxTombstones
        /// Keys retired: at most 16 leave with each copy accepted, and a key retired must stay so
        /// (a replaced key that fell out of a short list signed again, found by the attack review).
        static let retired = 512
        /// The paths a vault was seen at (clones, work trees), the latest kept.
        static let paths = 8
        /// The longest path recorded, in bytes (a longer one is not compared).
        static let pathLength = 1024
        /// Headers accepted.
        static let headers = 32
        /// The longest member key, in bytes: an 8,192-bit ssh-rsa wire key is 1,047 (format 1.4's long keys).
        static let keyLength = 2_048
    }

    /// A member pinned here: a slot of the copy accepted last.
    public struct PinnedMember: Equatable, Sendable {
        /// The slot's position in that copy.
        public var position: Int
        /// Its key, with the slot type.
        public var key: MemberKey
        /// Its label.
        public var label: String
    }

    /// A key that left an accepted copy's slots: removed (a tombstone) or retired (a re-salt).
    public struct LeftMember: Equatable, Sendable {
        /// The member key id.
        public var id: [UInt8]
        /// Who removed it (the remover's key id); nil for a retired key.
        public var remover: [UInt8]?
        /// The generation of the seal it left at.
        public var generation: UInt64
    }

    /// What the record of one vault holds.
    public struct Record: Equatable, Sendable {
        /// The generation of the first signed seal seen here, nil when none was.
        public var firstSigned: UInt64?
        /// The members pinned, in slot order.
        public var pinned: [PinnedMember] = []
        /// Removals learned, oldest first.
        public var removed: [LeftMember] = []
        /// Keys retired here, oldest first.
        public var retired: [LeftMember] = []
        /// Headers accepted here: (generation, BLAKE2b-128 of the header).
        public var headers: [SealAncestor] = []
        /// The absolute paths the vault was seen at, oldest first (at most `Caps.paths`): a vault id
        /// new here at any of them is not pinned silently.
        public var paths: [String] = []

        /// An empty record.
        public init() {}

        /// Keeps the newest entries of each list up to its cap.
        mutating func trim() {
            pinned = Array(pinned.prefix(Caps.pinned))
            removed = Array(removed.sorted { $0.generation < $1.generation }.suffix(Caps.removed))
            retired = Array(retired.suffix(Caps.retired))
            headers = Array(headers.sorted { $0.generation < $1.generation }.suffix(Caps.headers))
            paths = Array(paths.filter { $0.utf8.count <= Caps.pathLength }.suffix(Caps.paths))
        }
    }
}
