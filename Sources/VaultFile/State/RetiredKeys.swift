#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat

// MARK: - The keys of each vault this machine saw retired, and its lineage

/// What this machine knows of each vault's keys, so that a copy written by someone who no longer
/// holds a slot is recognised (docs/SECURITY.md, "A removed member's planted copy"; the rules are
/// `KeyLineage`'s): the file keys retired by rotations run here (`passwd`, `slot rm`, `rekey`) or
/// superseded by a newer copy under another key, the file keys seen, the slots' public keys retired
/// and those of the copy taken last, and the keys of this machine's lineage (the key the last
/// rotation run here minted, and the secret-derived slot keys first taken here since).
///
/// One record per vault id, `<vault id in hex>.retired-keys`, in the state folder:
///
///     vaultfile-retired-keys 3
///     k <file key id> <time>         a file key retired by a rotation run here
///     u <file key id> <time>         a file key superseded here by a newer copy under another key
///     s <file key id> <generation>   a file key seen here, and the highest generation seen under it
///     c <file key id>                the file key of the copy taken last, whose slot keys the p lines are
///     p <slot key>                   a slot's public key in that copy
///     x <slot key> <time>            a slot's public key retired here
///     l <slot key> <time> <fp>       a key of this machine's lineage, since when, and its fingerprint
///
/// File key ids are 32 hex digits (`UnlockedVault.fileKeyID`: a one-way subkey, docs/FORMAT.md §4);
/// a slot key is never stored itself, only as 32 hex digits of a hash bound to the vault id
/// (`KeyLineage.slotKey`), since the metadata that says who can open a vault is encrypted on
/// purpose; `<fp>` is the 16 hex digits of the key's `x25519:` fingerprint (docs/FORMAT.md: a
/// hash, shown in a refusal so the user can compare it with `slot list`), or `-`; times are seconds
/// since 1970, UTC. A version 1 record (`vaultfile-retired-keys 1`, one `<file key id> <time>` line
/// per key rotated here) and a version 2 one (an `m <slot key> <time>` line for the one key the last
/// rotation here minted, read as a lineage key of no known fingerprint) are still read; the next
/// write makes them version 3. Each list keeps its newest entries up to a cap (`Caps`), so a record stays under
/// `StateFolder.maxRecordLength` whatever happens.
///
/// Unlike the generations (`SeenGenerations`) it is kept inside git work trees too: an old
/// branch is exactly where a retired key lives on.
public struct RetiredKeys: Sendable {
    /// The folder holding the records.
    public let state: StateFolder

    /// The records of `state`.
    public init(state: StateFolder) {
        self.state = state
    }

    /// The name of the record of vault `vaultID`.
    static func recordName(_ vaultID: [UInt8]) -> String { SeenGenerations.Record.hex(vaultID) + ".retired-keys" }

    /// The record of vault `vaultID` (empty when there is none, or it is not a record this build reads).
    func record(of vaultID: [UInt8]) throws(StateFolder.Problem) -> Record {
        try state.read(Self.recordName(vaultID)).map(Record.init(parsing:)) ?? Record()
    }

    /// Replaces the record of vault `vaultID` with what `change` makes of it, re-read under the
    /// folder's lock (another process may have changed it meanwhile); written only when it changed.
    @discardableResult
    func update(_ vaultID: [UInt8], _ change: (inout Record) -> Void) throws(StateFolder.Problem) -> Bool {
        try state.update(Self.recordName(vaultID)) { current in
            let before = current.map(Record.init(parsing:)) ?? Record()
            var after = before
            change(&after)
            after.trim()
            return after == before ? nil : after.encoded()
        }
    }

    /// When the file key `keyID` of vault `vaultID` was retired by a rotation run here (seconds
    /// since 1970), or nil when it was not (or the record cannot be read: then nothing is known).
    public func retiredAt(_ keyID: [UInt8], vault vaultID: [UInt8]) throws(StateFolder.Problem) -> Int64? {
        let wanted = SeenGenerations.Record.hex(keyID)
        return try record(of: vaultID).retiredFileKeys.first { $0.id == wanted && !$0.superseded }?.at
    }

    /// When the newest key of vault `vaultID`'s lineage was taken here (a rotation run here, or a copy
    /// taken since: `KeyLineage`), or nil when no rotation ran here (then no copy is refused as of another lineage).
    public func lineageSince(vault vaultID: [UInt8]) throws(StateFolder.Problem) -> Int64? {
        try record(of: vaultID).lineageKeys.last?.at
    }

    /// Records the file key `keyID` of vault `vaultID` as retired by a rotation run here `now`; an id
    /// recorded already keeps its first time. Returns whether the record was written.
    @discardableResult
    public func retire(_ keyID: [UInt8], vault vaultID: [UInt8], now: Int64 = Int64(time(nil))) throws(StateFolder.Problem) -> Bool {
        try update(vaultID) { $0.retire(fileKey: SeenGenerations.Record.hex(keyID), superseded: false, at: now) }
    }
}

// MARK: - One vault's record

extension RetiredKeys {
    /// The most entries of each list a record keeps (the oldest go first); at the longest lines
    /// (56 bytes for a seen key with a 20-digit generation) the record stays under 4,096 bytes.
    enum Caps {
        /// File keys retired or superseded here (a version 1 record kept 64: its newest 32 stay).
        static let retiredFileKeys = 32
        /// File keys seen here.
        static let seenFileKeys = 8
        /// Slot keys of the copy taken last: one per keyslot a vault can have.
        static let currentSlotKeys = VaultHeader.maxKeyslots
        /// Slot keys retired here.
        static let retiredSlotKeys = 24
        /// Keys of this machine's lineage.
        static let lineageKeys = 4
    }

    /// What the record of one vault holds; hex strings, as in the file.
    struct Record: Equatable {
        /// A file key retired here: by a rotation run here, or superseded by a newer copy under another key.
        struct RetiredFileKey: Equatable {
            var id: String, at: Int64, superseded: Bool
        }

        /// Retired file keys, oldest first.
        var retiredFileKeys: [RetiredFileKey] = []
        /// File keys seen here and the highest generation seen under each, oldest first.
        var seenFileKeys: [(id: String, generation: UInt64)] = []
        /// The file key of the copy taken last.
        var currentFileKey: String?
        /// The slot keys of that copy.
        var currentSlotKeys: [String] = []
        /// Slot keys retired here, oldest first, and when.
        var retiredSlotKeys: [(key: String, at: Int64)] = []
        /// The keys of this machine's lineage, oldest first (`KeyLineage`): a copy under a file key not
        /// seen here must hold one of them. Empty until a rotation runs here.
        var lineageKeys: [LineageKey] = []

        /// A key of this machine's lineage: its `slotKey` hash, since when (seconds since 1970), and the
        /// 16 hex digits of its `x25519:` fingerprint (nil when unknown: a version 2 record's).
        struct LineageKey: Equatable {
            var key: String, at: Int64, fingerprint: String?
        }

        /// The newest key of the lineage, or nil; setting it makes it the only one (a rotation run here).
        var minted: (key: String, at: Int64)? {
            get { lineageKeys.last.map { ($0.key, $0.at) } }
            set { lineageKeys = newValue.map { [LineageKey(key: $0.key, at: $0.at, fingerprint: nil)] } ?? [] }
        }

        static func == (a: Record, b: Record) -> Bool {
            a.retiredFileKeys == b.retiredFileKeys && a.seenFileKeys.elementsEqual(b.seenFileKeys, by: ==)
                && a.currentFileKey == b.currentFileKey && a.currentSlotKeys == b.currentSlotKeys
                && a.retiredSlotKeys.elementsEqual(b.retiredSlotKeys, by: ==) && a.lineageKeys == b.lineageKeys
        }

        /// When the file key `id` was retired here, and whether it was superseded (not rotated here).
        func retired(fileKey id: String) -> RetiredFileKey? { retiredFileKeys.first { $0.id == id } }
        /// Whether the file key `id` was seen here.
        func hasSeen(fileKey id: String) -> Bool { seenFileKeys.contains { $0.id == id } }
        /// When the slot key `key` was retired here, or nil.
        func retired(slotKey key: String) -> Int64? { retiredSlotKeys.first { $0.key == key }?.at }

        /// Adds `id` to the retired file keys (a known one keeps its first time and kind) and drops it from
        /// those seen; a record read back drops it as the copy taken last too (`KeyLineage.adopt` replaces that one).
        mutating func retire(fileKey id: String, superseded: Bool, at time: Int64) {
            seenFileKeys.removeAll { $0.id == id }
            guard retired(fileKey: id) == nil else { return }
            retiredFileKeys.append(RetiredFileKey(id: id, at: time, superseded: superseded))
        }

        /// Adds `key` to the retired slot keys; a known one keeps its first time.
        mutating func retire(slotKey key: String, at time: Int64) {
            guard retired(slotKey: key) == nil else { return }
            retiredSlotKeys.append((key, time))
        }

        /// Keeps the newest entries of each list up to its cap; the file key taken last stays among those seen.
        mutating func trim() {
            retiredFileKeys = Array(retiredFileKeys.suffix(Caps.retiredFileKeys))
            if seenFileKeys.count > Caps.seenFileKeys {
                let current = currentFileKey
                let keep = seenFileKeys.filter { $0.id == current }
                let others = seenFileKeys.filter { $0.id != current }
                let kept = Set(others.suffix(Caps.seenFileKeys - keep.count).map(\.id)).union(keep.map(\.id))
                seenFileKeys = seenFileKeys.filter { kept.contains($0.id) }
            }
            currentSlotKeys = Array(currentSlotKeys.suffix(Caps.currentSlotKeys))
            retiredSlotKeys = Array(retiredSlotKeys.suffix(Caps.retiredSlotKeys))
            lineageKeys = Array(lineageKeys.suffix(Caps.lineageKeys))
        }
    }
}

// MARK: - Encoding

extension RetiredKeys.Record {
    private static let firstLineV1 = "vaultfile-retired-keys 1"
    private static let firstLineV2 = "vaultfile-retired-keys 2"
    private static let firstLineV3 = "vaultfile-retired-keys 3"

    /// The record in `bytes`. A line this build did not write is left out (and dropped at the next
    /// write), a repeated key counts once, and a file that is not a record is an empty record: a
    /// damaged record forgets, it never refuses a copy it should not.
    init(parsing bytes: [UInt8]) {
        self.init()
        guard bytes.count <= StateFolder.maxRecordLength, let text = String(validating: bytes, as: UTF8.self) else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0)
        guard let first = lines.first else { return }
        if first == Substring(Self.firstLineV1) {
            for line in lines.dropFirst() {
                let parts = line.split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2, let id = Self.hex(parts[0]), let time = Self.time(parts[1]) else { continue }
                retire(fileKey: id, superseded: false, at: time)
            }
        } else if first == Substring(Self.firstLineV2) || first == Substring(Self.firstLineV3) {
            let v3 = first == Substring(Self.firstLineV3)
            for line in lines.dropFirst() { read(line, v3: v3) }
        }
        if let current = currentFileKey, !hasSeen(fileKey: current) || retired(fileKey: current) != nil { currentFileKey = nil }
        if currentFileKey == nil { currentSlotKeys = [] }
        trim()
    }

    /// Reads one line of a version 2 record (`v3` false) or a version 3 one into this one; a malformed line is skipped.
    private mutating func read(_ line: Substring, v3: Bool) {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count >= 2, let value = Self.hex(parts[1]) else { return }
        switch (parts[0], parts.count) {
        case ("k", 3), ("u", 3):
            guard let time = Self.time(parts[2]) else { return }
            retire(fileKey: value, superseded: parts[0] == "u", at: time)
        case ("s", 3):
            guard let generation = UInt64(parts[2]), parts[2].allSatisfy(\.isASCIIDigit),
                  !hasSeen(fileKey: value), retired(fileKey: value) == nil else { return }
            seenFileKeys.append((value, generation))
        case ("c", 2):
            if currentFileKey == nil { currentFileKey = value }
        case ("p", 2):
            if !currentSlotKeys.contains(value) { currentSlotKeys.append(value) }
        case ("x", 3):
            guard let time = Self.time(parts[2]) else { return }
            retire(slotKey: value, at: time)
        case ("m", 3):
            guard !v3, lineageKeys.isEmpty, let time = Self.time(parts[2]) else { return }
            lineageKeys = [LineageKey(key: value, at: time, fingerprint: nil)]
        case ("l", 4):
            let fingerprint = parts[3] == "-" ? nil : String(parts[3])
            guard v3, !lineageKeys.contains(where: { $0.key == value }), let time = Self.time(parts[2]),
                  fingerprint.map({ $0.count == 16 && $0.allSatisfy { $0.isHexDigit && !$0.isUppercase && $0.isASCII } }) ?? true else { return }
            lineageKeys.append(LineageKey(key: value, at: time, fingerprint: fingerprint))
        default:
            return
        }
    }

    /// The record as a version 3 file.
    func encoded() -> [UInt8] {
        var text = Self.firstLineV3 + "\n"
        for key in retiredFileKeys { text += "\(key.superseded ? "u" : "k") \(key.id) \(key.at)\n" }
        for key in seenFileKeys { text += "s \(key.id) \(key.generation)\n" }
        if let currentFileKey {
            text += "c \(currentFileKey)\n"
            for key in currentSlotKeys { text += "p \(key)\n" }
        }
        for key in retiredSlotKeys { text += "x \(key.key) \(key.at)\n" }
        for key in lineageKeys { text += "l \(key.key) \(key.at) \(key.fingerprint ?? "-")\n" }
        return Array(text.utf8)
    }

    /// 32 lowercase hex digits, or nil.
    private static func hex(_ text: Substring) -> String? {
        text.count == 32 && text.allSatisfy({ $0.isHexDigit && !$0.isUppercase && $0.isASCII }) ? String(text) : nil
    }

    /// A time this build could have written: seconds since 1970 up to `SeenGenerations.Record.latestTime`.
    private static func time(_ text: Substring) -> Int64? {
        guard text.allSatisfy(\.isASCIIDigit), let time = Int64(text), (0...SeenGenerations.Record.latestTime).contains(time) else { return nil }
        return time
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

// MARK: - The id of a file key

extension UnlockedVault {
    /// A non-secret identifier of this vault's file key: the first 16 bytes of its subkey for
    /// context `vfkey-id` (docs/FORMAT.md §4). A one-way function of the key under its own
    /// context: it tells two keys apart and reveals nothing of the key or of its other subkeys.
    public var fileKeyID: [UInt8] {
        Subkey.derive(from: fileKey, Subkey.keyID).withUnsafeBytes { Array($0.prefix(16)) }
    }
}
