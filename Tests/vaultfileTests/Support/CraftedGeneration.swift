import Foundation
import KDF
import SecureMemory
import VaultFile
@testable import VaultFormat

// MARK: - A copy at a generation no writer of this build seals

extension CLI {
    /// Rewrites the vault `name` (password in `pw`) as a seal at `generation` would have left it,
    /// past the ceiling when asked: what an earlier release (own record raised to 2^64 − 2, then a
    /// write with --allow-rollback) or anyone who holds the key can write (issue 39).
    func craftGeneration(_ name: String, to generation: UInt64, password: String = "pw") throws {
        let store = VaultStore(path: path(name))
        let unlocked = try store.open(password: SecureBytes(copying: Array(password.utf8)), limits: .defaults)
        var header = unlocked.header
        header.generation = generation
        if header.usesKeyslots11 {
            header.metadata = try MetadataBlock.sealChecked(unlocked.slotMetadata ?? [], for: header, fileKey: unlocked.fileKey)
        }
        header.mac = VaultCodec.headerMAC(header, fileKey: unlocked.fileKey)
        let bytes = try read(name)
        let length = try VaultHeader.parse(bytes, path: path(name)).length
        try write(name, header.encoded() + bytes[length...])
    }

    /// The generation in the header of the vault `name`, read from its bytes (no secret needed).
    func generation(of name: String) throws -> UInt64 {
        try VaultHeader.parse(try read(name), path: path(name)).header.generation
    }

    /// The generation this machine (the state folder `state`, else the test's) recorded for the vault `name`, if any.
    func recordedGeneration(of name: String, state: String? = nil) throws -> UInt64? {
        let id = try VaultHeader.parse(try read(name), path: path(name)).header.vaultID
        return try SeenGenerations(state: StateFolder(path: state ?? stateDirectory)).record(for: id)?.generation
    }
}
