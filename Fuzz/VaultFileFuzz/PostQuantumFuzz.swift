import KDF
import SecureMemory
import VaultFormat
import VaultModel
import VaultPQ

// MARK: - Property 17: post-quantum keys, slots and age files

/// The identity of C2SP's CCTV post-quantum vectors (the seeds `hybrid*` in Fuzz/age-seeds), so
/// that mutations reach the mlkem768x25519 stanza's checks and HPKE's open.
let pqIdentity = try! AgePQIdentity(parsing: "AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG")

/// 17. post-quantum keys (`age1pq1…` recipients, `AGE-SECRET-KEY-PQ-1…` identities, identity
/// files of both kinds, raw 1,216-byte keys under FIPS 203's checks), type-8 slot bodies, age files
/// through the post-quantum identity, and vaults whose header has a type-8 slot opened with it:
/// never a crash; a recipient that parses writes back to its text; a slot body that parses writes
/// back to its bytes. (main.swift opens a vault with a type-8 slot with `pqIdentity` too.)
func fuzzPostQuantum(_ bytes: [UInt8], limits: KDFLimits) {
    if bytes.count <= 4096 {
        let text = String(decoding: bytes, as: UTF8.self)
        if let recipient = try? AgePQRecipient(parsing: text) {
            precondition(recipient.description == text, "age1pq recipient round trip changed the text")
        }
        _ = try? AgePQIdentity(parsing: text)
        _ = try? AgeIdentityFile.parseAll(bytes, source: "fuzz")
    }
    if bytes.count >= HybridKEM.publicKeyLength {
        _ = try? HybridPublicKey(validating: Array(bytes.prefix(HybridKEM.publicKeyLength)))
    }
    if let slot = try? HybridSlot.parse(body: bytes[...], index: 0) {
        precondition(slot.body() == bytes, "mlkem768x25519 slot round trip changed the bytes")
    }
    _ = try? AgeFile.decrypt(bytes, identities: [pqIdentity], passphrase: nil, limits: limits, maxPlaintext: 1 << 20)
}
