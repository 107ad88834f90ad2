// MARK: - Putting a removed key back (`slot add --readmit`)

extension UnlockedVault {
    /// The tombstones this vault's next seal would carry (the removals its signed copy records).
    public var carriedTombstones: [Tombstone] { sealState.tombstones }

    /// Drops the tombstones of the member key id `keyID` from the next seal: the key was added back
    /// on purpose (`slot add --readmit`), so the copy no longer says it was removed.
    public func dropTombstones(of keyID: [UInt8]) {
        sealState.tombstones.removeAll { $0.removed == keyID }
    }
}
