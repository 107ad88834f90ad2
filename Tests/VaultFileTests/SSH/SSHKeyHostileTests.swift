import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// Hostile and damaged OpenSSH private keys given to the ssh key model: each refused with the
/// damaged status (or unsupported, or over the cap), saying why, never a crash.
///
/// `VAULTFILE_WRITE_DAMAGED_SSH=1 swift test --filter SSHKeyHostileTests` appends these cases to
/// `Fixtures/damaged/keys/` (use "ssh-key", which KeyCorpusCLITests gives to `set --ssh-key`);
/// the committed files never change.
@Suite struct SSHKeyHostileTests {
    /// One hostile key: its file name, what it is, the exit status and words of its refusal.
    struct Case {
        var file: String
        var description: String
        var status: Int32
        var message: String
        var bytes: [UInt8]
    }

    /// P-256's group order n.
    static let p256Order: [UInt8] = hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Every case, built from fresh keys (and the RSA key of Fixtures/v1.4).
    static func cases() throws -> [Case] {
        let ed = try SSHKeyCraft.parts(of: SSHPrivateKey.generate(.ed25519, comment: ""))
        let ec = try SSHKeyCraft.parts(of: SSHPrivateKey.generate(.ecdsaP256, comment: ""))
        let other = try SSHKeyCraft.parts(of: SSHPrivateKey.generate(.ecdsaP256, comment: ""))
        let rsaKey = try SSHPrivateKey.parse(Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("v1.4/ssh-rsa-2048.key"))), source: "k")
        let rsa = try SSHKeyCraft.parts(of: rsaKey)
        let ecFields = SSHKeyCraft.fields(ec.body)          // type, curve, point, scalar
        let ecPublic = SSHKeyCraft.fields(ec.publicWire)    // type, curve, point
        let edFields = SSHKeyCraft.fields(ed.body)          // type, public, secret
        let rsaFields = SSHKeyCraft.fields(rsa.body)        // type, n, e, d, iqmp, p, q
        func one(_ wire: [UInt8], _ body: [UInt8], comment: [UInt8] = Array("c".utf8), checks: (UInt32, UInt32) = (7, 7), padding: [UInt8]? = nil) -> [UInt8] {
            SSHKeyCraft.file([(wire, SSHKeyCraft.section(body, comment: comment, checks: checks, padding: padding))])
        }
        var offCurve = ecFields[2]
        offCurve[offCurve.count - 1] ^= 0x01
        let offCurveWire = SSHKeyCraft.strings([ecPublic[0], ecPublic[1], offCurve])
        let compressed = [0x02 | (ecFields[2].last! & 1)] + Array(ecFields[2][1...32])
        var seed = edFields[2]
        seed[0] ^= 0x01
        var cases: [Case] = [
            Case(file: "ssh-key-ecdsa-point-off-curve.key", description: "an ECDSA P-256 key whose public point is not on the curve", status: 4,
                 message: "is not a valid point of P-256", bytes: one(offCurveWire, SSHKeyCraft.strings([ecFields[0], ecFields[1], offCurve, ecFields[3]]))),
            Case(file: "ssh-key-ecdsa-point-compressed.key", description: "an ECDSA P-256 key whose point is compressed (33 bytes)", status: 4,
                 message: "not an uncompressed point",
                 bytes: one(SSHKeyCraft.strings([ecPublic[0], ecPublic[1], compressed]), SSHKeyCraft.strings([ecFields[0], ecFields[1], compressed, ecFields[3]]))),
            Case(file: "ssh-key-ecdsa-scalar-of-another-key.key", description: "an ECDSA key whose scalar belongs to another key", status: 4,
                 message: "does not make its public point", bytes: one(ec.publicWire, SSHKeyCraft.strings(Array(ecFields[0...2]) + [SSHKeyCraft.fields(other.body)[3]]))),
            Case(file: "ssh-key-ecdsa-scalar-1.key", description: "an ECDSA key whose scalar is 1", status: 4, message: "out of range",
                 bytes: one(ec.publicWire, SSHKeyCraft.strings(Array(ecFields[0...2]) + [[1]]))),
            Case(file: "ssh-key-ecdsa-scalar-order.key", description: "an ECDSA key whose scalar is the group order", status: 4, message: "scalar",
                 bytes: one(ec.publicWire, SSHKeyCraft.strings(Array(ecFields[0...2]) + [[0] + p256Order]))),
            Case(file: "ssh-key-ecdsa-curve-mismatch.key", description: "an ecdsa-sha2-nistp256 key that names the curve nistp384", status: 4,
                 message: "names another curve", bytes: one(SSHKeyCraft.strings([ecPublic[0], Array("nistp384".utf8), ecPublic[2]]), ec.body)),
            Case(file: "ssh-key-ed25519-seed-wrong.key", description: "an ssh-ed25519 key whose seed does not derive its public key", status: 4,
                 message: "does not derive its public key", bytes: one(ed.publicWire, SSHKeyCraft.strings([edFields[0], edFields[1], seed]))),
            Case(file: "ssh-key-type-differs.key", description: "a public ssh-ed25519 key over an ECDSA private section", status: 4,
                 message: "type differs", bytes: one(ed.publicWire, ec.body)),
            Case(file: "ssh-key-check-integers.key", description: "check integers that differ", status: 4, message: "check integers differ",
                 bytes: one(ed.publicWire, ed.body, checks: (1, 2))),
            Case(file: "ssh-key-comment-newline.key", description: "a comment with a line feed (it would split an authorized_keys line)", status: 4,
                 message: "control characters", bytes: one(ed.publicWire, ed.body, comment: Array("a\nssh-ed25519 AAAA".utf8))),
            Case(file: "ssh-key-comment-not-utf8.key", description: "a comment that is not UTF-8", status: 4, message: "not UTF-8",
                 bytes: one(ed.publicWire, ed.body, comment: [0xC3, 0x28])),
            Case(file: "ssh-key-padding.key", description: "padding of zero bytes instead of 1 2 3 …", status: 4, message: "padding is malformed",
                 bytes: SSHKeyCraft.file([(ed.publicWire, SSHKeyCraft.zeroPadded(ed.body))])),
            Case(file: "ssh-key-rsa-p-wrong.key", description: "an RSA key whose p·q is not n", status: 4, message: "do not make one RSA key",
                 bytes: one(rsa.publicWire, SSHKeyCraft.strings(Array(rsaFields[0...4]) + [rsaFields[6], rsaFields[6]]))),
            Case(file: "ssh-key-two-keys.key", description: "two keys in one file", status: 4, message: "holds 2 keys",
                 bytes: SSHKeyCraft.file([(ed.publicWire, SSHKeyCraft.section(ed.body)), (ed.publicWire, SSHKeyCraft.section(ed.body))])),
            Case(file: "ssh-key-trailing.key", description: "bytes after the key", status: 4, message: "bytes after its key",
                 bytes: SSHKeyCraft.file([(ed.publicWire, SSHKeyCraft.section(ed.body))], trailing: [0])),
            Case(file: "ssh-key-length-huge.key", description: "a private section whose length is 2³²−1", status: 4, message: "truncated",
                 bytes: SSHKeyCraft.armored(Array(SSHKeyCraft.container([(ed.publicWire, [])]).dropLast(4)) + [0xFF, 0xFF, 0xFF, 0xFF])),
            Case(file: "ssh-key-dsa.key", description: "an ssh-dss key", status: 4, message: "are not kept",
                 bytes: one(SSHKeyCraft.strings([Array("ssh-dss".utf8), [1], [2], [3], [4]]), SSHKeyCraft.strings([Array("ssh-dss".utf8)]))),
            Case(file: "ssh-key-sk-ed25519.key", description: "a FIDO sk-ssh-ed25519@openssh.com key", status: 4, message: "are not kept",
                 bytes: one(SSHKeyCraft.strings([Array("sk-ssh-ed25519@openssh.com".utf8), edFields[1], Array("ssh:".utf8)]), ed.body)),
            Case(file: "ssh-key-pem-rsa.key", description: "a PEM RSA key (-----BEGIN RSA PRIVATE KEY-----)", status: 4, message: "ssh-keygen -p -f FILE",
                 bytes: Array("-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n".utf8)),
            Case(file: "ssh-key-public-line.key", description: "a public key line where the private key belongs", status: 4, message: "it is an ssh public key",
                 bytes: Array(("ssh-ed25519 " + base64Encode(ed.publicWire) + " me\n").utf8)),
            Case(file: "ssh-key-protected-cipher-unknown.key", description: "a key encrypted with chacha20-poly1305@openssh.com", status: 4,
                 message: "which vaultfile does not read",
                 bytes: SSHKeyCraft.file([(ed.publicWire, [UInt8](repeating: 0, count: 64))], cipher: "chacha20-poly1305@openssh.com", kdf: "bcrypt",
                                         kdfOptions: SSHKeyCraft.strings([[UInt8](repeating: 1, count: 16)]) + [0, 0, 0, 16])),
            Case(file: "ssh-key-protected-rounds-over-cap.key", description: "a protected ECDSA key asking for 4,294,967,295 bcrypt rounds", status: 6,
                 message: "bcrypt-pbkdf rounds",
                 bytes: SSHKeyCraft.file([(ec.publicWire, [UInt8](repeating: 0, count: 64))], cipher: "aes256-ctr", kdf: "bcrypt",
                                         kdfOptions: SSHKeyCraft.strings([[UInt8](repeating: 1, count: 16)]) + [0xFF, 0xFF, 0xFF, 0xFF])),
        ]
        cases.append(Case(file: "ssh-key-oversized.key", description: "70,000 bytes of armor", status: 4, message: "at most 65536",
                          bytes: Array(repeating: UInt8(ascii: "A"), count: 70_000)))
        return cases
    }

    // MARK: - read

    @Test func test_read_refusesEveryHostileCaseWithItsCategoryAndReason() throws {
        for item in try Self.cases() {
            do {
                _ = try SSHKeyFile.read(item.bytes, source: "k")
                Issue.record("\(item.file) was read")
            } catch {
                let expected: Set<ErrorCategory> = item.status == 6 ? [.overLimit] : [.damaged, .unsupported]
                #expect(expected.contains(error.category), "\(item.file): \(error)")
                #expect(error.description.contains(item.message), "\(item.file): '\(error)' lacks '\(item.message)'")
            }
        }
    }

    @Test func test_read_refusesEveryTruncationOfAValidKey() throws {
        let blob = SSHKeyCraft.container([try SSHKeyCraft.parts(of: SSHPrivateKey.generate(.ecdsaP256, comment: "c"))].map { ($0.publicWire, SSHKeyCraft.section($0.body)) })
        #expect(throws: Never.self) { _ = try SSHKeyFile.read(SSHKeyCraft.armored(blob), source: "k") }
        for length in 0..<blob.count {
            #expect(throws: SSHKeyError.self, "cut at \(length)") { _ = try SSHKeyFile.read(SSHKeyCraft.armored(Array(blob.prefix(length))), source: "k") }
        }
    }

    @Test func test_read_refusesEveryOneBitFlipOfAnEd25519Key() throws {
        let blob = SSHKeyCraft.container([try SSHKeyCraft.parts(of: SSHPrivateKey.generate(.ed25519, comment: "c"))].map { ($0.publicWire, SSHKeyCraft.section($0.body)) })
        // The comment ("c") and the check integers' own values may change without harm; every other flip is refused.
        var accepted = 0
        for index in 0..<blob.count {
            var flipped = blob
            flipped[index] ^= 0x04
            if (try? SSHKeyFile.read(SSHKeyCraft.armored(flipped), source: "k")) != nil { accepted += 1 }
        }
        #expect(accepted <= 1, "\(accepted) flips were read as a key")
    }

    // MARK: - Writing the corpus (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_SSH"] == "1"))
    func test_writeCorpus_sshKeys() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("damaged/keys")
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try KeyslotCorpusTests.KeyCase.read(manifestURL)
        for item in try Self.cases() {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(item.file).path), "\(item.file) exists: cases never change")
            try Data(item.bytes).write(to: folder.appendingPathComponent(item.file))
            manifest.append(.init(file: item.file, use: "ssh-key", description: item.description, expectStatus: item.status, expectMessage: item.message))
        }
        try KeyslotCorpusTests.KeyCase.write(manifest, to: manifestURL)
    }
}
