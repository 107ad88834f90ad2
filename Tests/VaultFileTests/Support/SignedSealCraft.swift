import Foundation
import KDF
import SecureMemory
import TestSupport
@testable import VaultFormat
@testable import VaultModel

// MARK: - Signed vaults for tests, and copies with a valid MAC but bad seal contents

/// A signed vault (format 1.3) of a password slot ("admin", `pw`) and an age recipient ("alice"),
/// and the means to write copies of it that only a holder of the file key could write: every
/// MAC valid, the signature block or seal record changed.
struct SignedSealCraft {
    static let now: Int64 = 1_764_000_000_000
    let alice = AgeIdentity.generate()
    let password: String
    let base: [UInt8]
    let unlocked: UnlockedVault
    let header: VaultHeader
    let headerLength: Int

    /// The vault holds `vault` (`sampleVault()` when nil), opened by `password`.
    init(password: String = "pw", vault: Vault? = nil) throws {
        self.password = password
        base = try VaultCodec.create(try vault ?? sampleVault(), slots: [(.password(VaultFileTests.password(password), testKDF), "admin"),
                                                                         (.recipient(alice.recipient), "alice")], now: Self.now).seal()
        (header, headerLength) = try VaultHeader.parse(base, path: "t")
        unlocked = try VaultCodec.open(base, path: "t", password: VaultFileTests.password(password), limits: testLimits)
    }

    /// The signed vault `file`, opened with `password`.
    init(file: [UInt8], password: String = "pw") throws {
        self.password = password
        base = file
        (header, headerLength) = try VaultHeader.parse(base, path: "t")
        unlocked = try VaultCodec.open(base, path: "t", password: VaultFileTests.password(password), limits: testLimits)
    }

    /// The signature block's contents, opened with the file key.
    var block: SealSignatureBlock { get throws { try SignatureBlock.open(header, fileKey: unlocked.fileKey) } }

    /// The base with its signature block's contents replaced by `edit` of them, sealed and MACed with the file key.
    func resealed(_ edit: (inout SealSignatureBlock) throws -> Void) throws -> [UInt8] {
        var contents = try block
        try edit(&contents)
        return try resealed(block: contents)
    }

    /// The base with the signature block `contents` (any bytes the codec encodes), sealed and MACed.
    func resealed(block contents: SealSignatureBlock) throws -> [UInt8] {
        var next = header
        next.signatureBlock = try SignatureBlock.seal(contents, for: next, fileKey: unlocked.fileKey)
        next.mac = VaultCodec.headerMAC(next, fileKey: unlocked.fileKey)
        return next.encoded() + Array(base[headerLength...])
    }

    /// The base with a raw 384-byte signature block plaintext, sealed and MACed.
    func resealed(rawBlock plaintext: [UInt8]) throws -> [UInt8] {
        var next = header
        let nonce = randomBytes(count: 24)
        let key = Subkey.derive(from: unlocked.fileKey, SignatureBlock.subkey)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: next.signatureAssociatedData()) }
        next.signatureBlock = SignatureBlock(nonce: nonce, sealed: sealed)
        next.mac = VaultCodec.headerMAC(next, fileKey: unlocked.fileKey)
        return next.encoded() + Array(base[headerLength...])
    }

    /// The base with the metadata plaintext replaced by `raw` (entries and record), its signature
    /// block re-signed by the admin slot over the new header, all sealed and MACed.
    func resealed(rawMetadata raw: [UInt8]) throws -> [UInt8] {
        var next = header
        next.metadata = MetadataBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: raw.count + 16))
        let nonce = randomBytes(count: 24)
        let key = Subkey.derive(from: unlocked.fileKey, MetadataBlock.subkey)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(raw, key: $0, nonce: nonce, associatedData: next.metadataAssociatedData()) }
        next.metadata = MetadataBlock(nonce: nonce, sealed: sealed)
        let signer = try requireSigner(unlocked)
        let payload = Array(base[headerLength...])
        let request = SealSigningRequest(headerPrefix: next.signedPrefix(), payloadHash: SealTranscript.blake2b512(payload),
                                         fileKeyID: unlocked.sealFileKeyID, slots: unlocked.slotMetadata ?? [])
        next.signatureBlock = try SignatureBlock.seal(try signer.signSeal(request), for: next, fileKey: unlocked.fileKey)
        next.mac = VaultCodec.headerMAC(next, fileKey: unlocked.fileKey)
        return next.encoded() + payload
    }

    /// The metadata plaintext of the base: entries, then `record` encoded as given (no bounds), then zero padding.
    func rawMetadata(record: SealRecord, extra: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        SealRecordCodec.encode(record, into: &writer)
        let entries = MetadataBlock.encode(unlocked.slotMetadata!, slots: header.keyslots)
        let used = 2 + unlocked.slotMetadata!.reduce(0) { $0 + 44 + $1.label.utf8.count + $1.publicKey.count }
        var bytes = Array(entries.prefix(used)) + writer.bytes + extra
        bytes += [UInt8](repeating: 0, count: (256 - bytes.count % 256) % 256)
        return bytes
    }

    /// A seal signed by a fresh Ed25519 key under a delegation by the admin slot naming `fileKeyID`.
    func delegated(fileKeyID: [UInt8]) throws -> [UInt8] {
        let seed = SecureBytes(copying: randomBytes(count: 32))
        let delegatedKey = Ed25519.publicKey(fromSeed: seed)!
        let delegation = try requireSigner(unlocked).delegate(vaultID: header.vaultID, fileKeyID: fileKeyID, delegatedKey: delegatedKey,
                                                              expiry: 2_000_000_000)
        let payload = Array(base[headerLength...])
        let transcript = SealTranscript.seal(scheme: .delegated, vaultID: header.vaultID, generation: header.generation,
                                             fileKeyID: unlocked.sealFileKeyID, signerPosition: 0, signerType: 4, signerKey: delegatedKey,
                                             headerPrefix: header.signedPrefix(), payloadHash: SealTranscript.blake2b512(payload))
        return try resealed(block: SealSignatureBlock(scheme: .delegated, signerPosition: 0, signerType: 4, signerKey: delegatedKey,
                                                      delegation: delegation, signature: try SlotSigningKey.ed25519Seed(seed).sign(transcript)))
    }

    /// A seal signed by a key no slot holds, over the right transcript.
    func signedByStranger() throws -> [UInt8] {
        let stranger = X25519.generateSecretKey()
        let signer = SlotSealSigner(position: 0, key: MemberKey(type: 4, bytes: try X25519.publicKey(of: stranger)), secret: .x25519(stranger))
        let payload = Array(base[headerLength...])
        return try resealed(block: try signer.signSeal(SealSigningRequest(headerPrefix: header.signedPrefix(), payloadHash: SealTranscript.blake2b512(payload),
                                                                          fileKeyID: unlocked.sealFileKeyID, slots: [])))
    }

    /// Opens `file` with the admin password; returns the error it throws, or nil.
    func openError(_ file: [UInt8]) -> VaultError? {
        do {
            _ = try VaultCodec.open(file, path: "t", password: VaultFileTests.password(password), limits: testLimits)
            return nil
        } catch let error as VaultError {
            return error
        } catch {
            return .io(operation: "\(error)", path: "", errno: 0)
        }
    }
}

/// The slot signer a vault opened with a slot's secret holds.
func requireSigner(_ unlocked: UnlockedVault) throws -> SlotSealSigner {
    guard let signer = unlocked.sealSigner as? SlotSealSigner else { throw VaultError.noSealSigner }
    return signer
}

/// Signs seals as the agent does (scheme 3): a fresh Ed25519 key under a delegation that
/// `slot` signs for the file key of each request.
struct DelegatedTestSigner: SealSigner {
    let slot: SlotSealSigner
    let seed = SecureBytes(copying: randomBytes(count: 32))
    let expiry: UInt64

    func signSeal(_ request: SealSigningRequest) throws -> SealSignatureBlock {
        let prefix = request.headerPrefix
        let vaultID = Array(prefix[12..<28]), generation = prefix[28..<36].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let delegatedKey = Ed25519.publicKey(fromSeed: seed)!
        let delegation = try slot.delegate(vaultID: vaultID, fileKeyID: request.fileKeyID, delegatedKey: delegatedKey, expiry: expiry)
        let transcript = SealTranscript.seal(scheme: .delegated, vaultID: vaultID, generation: generation, fileKeyID: request.fileKeyID,
                                             signerPosition: slot.position, signerType: slot.key.type, signerKey: delegatedKey,
                                             headerPrefix: prefix, payloadHash: request.payloadHash)
        return SealSignatureBlock(scheme: .delegated, signerPosition: slot.position, signerType: slot.key.type, signerKey: delegatedKey,
                                  delegation: delegation, signature: try SlotSigningKey.ed25519Seed(seed).sign(transcript))
    }
}
