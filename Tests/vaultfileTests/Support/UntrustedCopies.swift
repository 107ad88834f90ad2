import Foundation
import KDF
import SecureMemory
import VaultFile
@testable import VaultFormat
import VaultModel

// MARK: - Copies no member wrote, made as their authors would make them

extension CLI {
    /// An outsider's copy of the vault `name`: eve, who never held a slot, makes a signed vault of her
    /// own (her password slot, labelled `label`, and the members' recipients `recipients`, which are
    /// public), moves it under `name`'s vault id and rotates it so that every slot is wrapped under
    /// that id, and writes it to `outName`. The members' identities open it; only eve signed it (nobody, unless `signed`).
    func outsiderCopy(of name: String, to outName: String, recipients: [String], label: String = "alice", signed: Bool = true) throws {
        let vaultID = try VaultHeader.parse(try read(name), path: path(name)).header.vaultID
        let eve = SecureBytes(copying: Array("eve's password".utf8))
        let store = VaultStore(path: path(outName))
        var slots: [(slot: NewSlot, label: String)] = [(.password(eve, CLI.testKDF), label)]
        for recipient in recipients { slots.append((.recipient(try AgeRecipient(parsing: recipient)), "")) }
        _ = try store.create(Vault(), slots: slots, now: 0, signed: signed)
        let unlocked = try store.open(password: eve, limits: .defaults)
        unlocked.header.vaultID = vaultID
        let (rotated, _) = try unlocked.rotated(now: 0)
        rotated.header.generation = try VaultHeader.parse(try read(name), path: path(name)).header.generation + 5
        try write(outName, try rotated.seal())
    }

    /// A copy of the vault `name` whose keyslot `slot` was relabelled `label` by the member whose age
    /// identity is in `identityFile` (the one slot she can sign with), written to `outName`.
    func relabelledCopy(of name: String, to outName: String, slot: Int, label: String, identityFile: String) throws {
        let identities = try AgeIdentityFile.parse(try read(identityFile), source: identityFile)
        let store = VaultStore(path: path(name))
        let unlocked = try store.read(with: Unlocker(credentials: identities.map { UnlockCredential(.ageIdentity($0), source: identityFile) },
                                                     limits: .defaults))
        var metadata: [SlotMetadata] = try require(unlocked.slotMetadata)
        metadata[slot].label = label
        unlocked.slotMetadata = metadata
        unlocked.headerChanged = true
        try write(outName, try unlocked.seal())
    }

    /// Whether the vault `name` is signed (flag 0x08 in its header).
    func isSigned(_ name: String) throws -> Bool {
        try VaultHeader.parse(try read(name), path: path(name)).header.isSigned
    }
}

/// `#require` for a support function outside a test.
private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw VaultError.malformedInput("a test vault lacks what the test needs") }
    return value
}
