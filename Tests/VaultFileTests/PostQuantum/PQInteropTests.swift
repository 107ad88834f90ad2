import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel
import VaultPQ

/// vaultfile's post-quantum wraps checked by an independent HPKE: PyPI `cryptography` 48's
/// MLKEM768-X25519 suite (Rust and OpenSSL, no code shared with swift-crypto), driven by
/// scripts/pq-hpke-check.py, which also expands the identity's seed itself (SHAKE256). It opens a
/// slot and an age stanza vaultfile sealed, and seals a slot vaultfile opens. Skipped, saying so,
/// without a Python that has `cryptography` (`make test-deps` installs it in .build/pq-venv and
/// `make test` names it in VAULTFILE_PQ_PYTHON).
@Suite struct PQInteropTests {
    static let python = ProcessInfo.processInfo.environment["VAULTFILE_PQ_PYTHON"]
    static let script = ProjectPaths.root.appendingPathComponent("scripts/pq-hpke-check.py").path

    /// Whether the independent HPKE can run here; says why not when it cannot.
    static var available: Bool {
        guard let python, SealVectorTests.run(python, ["-c", "from cryptography.hazmat.primitives import hpke"]).status == 0 else {
            print("PQInteropTests: skipped: no Python with PyPI cryptography 48 (make test-deps; VAULTFILE_PQ_PYTHON names its python)")
            return false
        }
        return true
    }

    /// Runs the script; its last line of output, or a recorded issue.
    static func check(_ arguments: [String]) -> String? {
        let result = SealVectorTests.run(python!, [script] + arguments)
        #expect(result.status == 0, "\(result.output)")
        return result.status == 0 ? result.output.split(separator: "\n").last.map(String.init) : nil
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func base64(_ bytes: [UInt8]) -> String { String(decoding: AgeBase64.encodeUnpadded(bytes), as: UTF8.self) }

    @Test func test_slotWrap_opensWithTheIndependentHPKE() throws {
        guard Self.available else { return }
        let identity = try AgePQIdentity.generate()
        let fileKey = randomBytes(count: 32), vaultID = randomBytes(count: 16)
        let slot = try HybridSlot.wrap(SecureBytes(copying: fileKey), to: identity.recipient.publicKey, vaultID: vaultID)
        let opened = Self.check(["open", identity.encodedSecretKey(), Self.hex(HybridSlot.info(vaultID: vaultID)),
                                 Self.base64(slot.enc), Self.base64(slot.ciphertext)])
        #expect(opened == Self.hex(fileKey))
    }

    @Test func test_slotSealedByTheIndependentHPKE_opensInVaultfile() throws {
        guard Self.available else { return }
        let identity = try AgePQIdentity.generate()
        let fileKey = randomBytes(count: 32), vaultID = randomBytes(count: 16)
        let sealed = try #require(Self.check(["seal", identity.recipient.description, Self.hex(HybridSlot.info(vaultID: vaultID)), Self.hex(fileKey)]))
        let bytes = Hex.decode(sealed)
        let slot = try HybridSlot.parse(body: bytes[...], index: 0)
        #expect(slot.unwrap(with: identity.identity, vaultID: vaultID)?.withUnsafeBytes { Array($0) } == fileKey)
        #expect(slot.unwrap(with: identity.identity, vaultID: randomBytes(count: 16)) == nil)
    }

    @Test func test_shareStanza_opensWithTheIndependentHPKE() throws {
        guard Self.available else { return }
        let identity = try AgePQIdentity.generate()
        let fileKey = randomBytes(count: 16)
        let stanza = try #require(try identity.recipient.wrap(SecureBytes(copying: fileKey)).first)
        let opened = Self.check(["open", identity.encodedSecretKey(), Self.hex(MLKEM768X25519Stanza.info), stanza.arguments[0], Self.base64(stanza.body)])
        #expect(opened == Self.hex(fileKey))
    }
}
