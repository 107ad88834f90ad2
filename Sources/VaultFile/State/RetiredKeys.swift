#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat

// MARK: - File keys retired on this machine

/// The file keys of each vault that this machine saw rotated away (`passwd`, `slot rm`, `rekey`),
/// by their ids (`UnlockedVault.fileKeyID`), so that a copy still sealed under one (an old git
/// branch after a member's removal, an old USB stick) is recognised: reading it warns, writing to
/// it is refused (docs/SECURITY.md, "What recipients cannot promise").
///
/// One record per vault id, `<vault id in hex>.retired-keys`, in the state folder:
///
///     vaultfile-retired-keys 1
///     <file key id: 32 hex digits> <when it was retired: seconds since 1970, UTC>
///     …
///
/// Unlike the generations (`SeenGenerations`) it is kept inside git work trees too: an old
/// branch is exactly where a retired key lives on. A key id reveals nothing of the key (a
/// BLAKE2b subkey under its own context, docs/FORMAT.md §4). The record keeps the newest
/// `maxKeys` ids; an id is only ever added.
public struct RetiredKeys: Sendable {
    /// The folder holding the records.
    public let state: StateFolder

    /// The most ids one vault's record keeps (the oldest go first); with 46-byte lines the
    /// record stays well under `StateFolder.maxRecordLength`.
    static let maxKeys = 64

    /// The records of `state`.
    public init(state: StateFolder) {
        self.state = state
    }

    /// The name of the record of vault `vaultID`.
    static func recordName(_ vaultID: [UInt8]) -> String { SeenGenerations.Record.hex(vaultID) + ".retired-keys" }

    /// When the file key `keyID` of vault `vaultID` was retired here (seconds since 1970), or nil
    /// when it was not (or the record cannot be read: then nothing is known).
    public func retiredAt(_ keyID: [UInt8], vault vaultID: [UInt8]) throws(StateFolder.Problem) -> Int64? {
        guard let bytes = try state.read(Self.recordName(vaultID)) else { return nil }
        let wanted = SeenGenerations.Record.hex(keyID)
        return Self.parse(bytes).first { $0.id == wanted }?.retired
    }

    /// Records the file key `keyID` of vault `vaultID` as retired `now`; an id recorded already
    /// keeps its first time. Returns whether the record was written.
    @discardableResult
    public func retire(_ keyID: [UInt8], vault vaultID: [UInt8], now: Int64 = Int64(time(nil))) throws(StateFolder.Problem) -> Bool {
        let id = SeenGenerations.Record.hex(keyID)
        return try state.update(Self.recordName(vaultID)) { current in
            // Re-read under the lock: another process may have added an id meanwhile.
            var keys = current.map(Self.parse) ?? []
            guard !keys.contains(where: { $0.id == id }) else { return nil }
            keys.append((id, now))
            return Self.encode(keys.suffix(Self.maxKeys))
        }
    }

    // MARK: Encoding

    private static let firstLine = "vaultfile-retired-keys 1"

    /// The ids and times in a record; lines this build did not write are left out (and dropped
    /// at the next write), a record that is not one is empty.
    static func parse(_ bytes: [UInt8]) -> [(id: String, retired: Int64)] {
        guard bytes.count <= StateFolder.maxRecordLength, let text = String(validating: bytes, as: UTF8.self) else { return [] }
        let lines = text.split(separator: "\n")
        guard lines.first == Substring(firstLine) else { return [] }
        return lines.dropFirst().compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[0].count == 32, parts[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
                  let retired = Int64(parts[1]), (0...SeenGenerations.Record.latestTime).contains(retired) else { return nil }
            return (String(parts[0]), retired)
        }
    }

    static func encode<S: Sequence>(_ keys: S) -> [UInt8] where S.Element == (id: String, retired: Int64) {
        Array((firstLine + "\n" + keys.map { "\($0.id) \($0.retired)\n" }.joined()).utf8)
    }
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
