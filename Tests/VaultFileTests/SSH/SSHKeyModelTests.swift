import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// The ssh key model (VaultFormat/SSH): keys of every kept type made by the real ssh-keygen,
/// protected and not, read as ssh-keygen reads them (`-y`, `-l`), written back in a form it
/// reads, and signatures it verifies (`-Y check-novalidate`).
@Suite struct SSHKeyModelTests {
    static let skip = "skipped: needs ssh-keygen (apt-get install openssh-client)"

    // MARK: - read

    @Test(arguments: KeygenShape.plain + KeygenShape.protected)
    func test_read_givesThePublicKeyAndFingerprintSSHKeygenGives(shape: KeygenShape) throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let made = try KeygenKey(shape); defer { made.folder.remove() }
        let file = try SSHKeyFile.read(made.bytes, source: "id")
        if case .protected = file { #expect(!shape.passphrase.isEmpty) } else { #expect(shape.passphrase.isEmpty) }
        let key = try made.key()
        #expect(key.comment == KeygenKey.comment)
        #expect(key.type.family == shape.type)
        #expect(file.publicKey == key.publicKey)
        #expect(key.authorizedKeysLine == (try SSHKeygen.publicLine(of: made.file, passphrase: shape.passphrase)))
        #expect(key.publicKey.fingerprint == (try SSHKeygen.fingerprint(of: made.file)))
        #expect(key.publicKey.bits == (shape.bits ?? 256))
    }

    @Test func test_decrypt_givesNilForAWrongPassphrase() throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        for shape in [KeygenShape.protected[1], KeygenShape.protected.last!] {
            let made = try KeygenKey(shape); defer { made.folder.remove() }
            guard case .protected(let sealed) = try SSHKeyFile.read(made.bytes, source: "id") else { Issue.record("not protected"); continue }
            #expect(try sealed.decrypt(passphrase: SecureBytes(copying: Array("wrong".utf8))) == nil, "\(shape)")
            #expect(sealed.rounds == 2)
        }
    }

    @Test func test_parse_refusesAProtectedKeyAsAnEntryValue() throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let made = try KeygenKey(KeygenShape.protected[0]); defer { made.folder.remove() }
        #expect(throws: SSHKeyError.self) { _ = try SSHPrivateKey.parse(made.bytes, source: "e") }
    }

    // MARK: - openSSHText

    @Test(arguments: KeygenShape.plain + [KeygenShape.protected[2], KeygenShape.protected[3]])
    func test_openSSHText_isReadBySSHKeygenAndByReadAsTheSameKey(shape: KeygenShape) throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let made = try KeygenKey(shape); defer { made.folder.remove() }
        let key = try made.key()
        let text = try key.openSSHText().withUnsafeBytes { Array($0) }
        #expect(text.starts(with: Array("-----BEGIN OPENSSH PRIVATE KEY-----\n".utf8)))
        #expect(String(decoding: text, as: UTF8.self).split(separator: "\n").allSatisfy { $0.count <= 70 || $0.hasPrefix("-----") })
        let again = try SSHPrivateKey.parse(text, source: "again")
        #expect(again.publicKey == key.publicKey && again.comment == key.comment)
        let written = made.folder.path("again")
        try writePrivate(text, to: written)
        #expect(try SSHKeygen.publicLine(of: written) == key.authorizedKeysLine)
        if shape.passphrase.isEmpty {
            // Same numbers and comment: ssh-keygen's file and ours differ only in the random check integers.
            var ours = try key.privateSection(), theirs = try SSHPrivateKey.parse(made.bytes, source: "x").privateSection()
            defer { wipe(&ours); wipe(&theirs) }
            #expect(ours.dropFirst(8) == theirs.dropFirst(8))
        }
    }

    // MARK: - sign

    @Test(arguments: KeygenShape.plain)
    func test_sign_makesSignaturesSSHKeygenVerifies(shape: KeygenShape) throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let made = try KeygenKey(shape); defer { made.folder.remove() }
        let key = try made.key()
        let message = Array("commit 1f2e3d\n".utf8)
        let algorithms: [SSHSignatureAlgorithm?] = key.type == .rsa ? [.rsaSHA256, .rsaSHA512] : [nil]
        for algorithm in algorithms {
            let signature = try SSHSig.sign(message, key: key, namespace: "git", algorithm: algorithm)
            let checked = try SSHKeygen.checkSignature(signature, of: message, namespace: "git", file: made.folder.path("sig"))
            #expect(checked.ok, "\(shape) \(String(describing: algorithm)): \(checked.stderr)")
            let wrong = try SSHKeygen.checkSignature(signature, of: message + [0x0A], namespace: "git", file: made.folder.path("sig"))
            #expect(!wrong.ok, "another message verified")
        }
    }

    @Test(arguments: KeygenShape.plain)
    func test_sign_givesBlobsItsOwnVerifierAcceptsForTheirDataOnly(shape: KeygenShape) throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let made = try KeygenKey(shape); defer { made.folder.remove() }
        let key = try made.key()
        let data = randomBytes(count: 100)
        let blob = try key.sign(data, flags: SSHAgentSignFlags.rsaSHA2_256)
        var reader = SSHReader(blob[...])
        let expectedName = key.type == .rsa ? "rsa-sha2-256" : key.type.rawValue
        #expect(reader.string().map { Array($0) } == Array(expectedName.utf8))
        #expect(key.publicKey.verifies(signature: blob, of: data))
        #expect(!key.publicKey.verifies(signature: blob, of: data + [0]))
        var flipped = blob
        flipped[flipped.count - 5] ^= 0x01
        #expect(!key.publicKey.verifies(signature: flipped, of: data))
        #expect(!key.publicKey.verifies(signature: blob + [0], of: data), "trailing bytes")
    }

    @Test func test_sign_makesSHA1OnlyWhenAskedAndRefusesUnknownFlags() throws {
        let key = try SSHPrivateKey.parse(Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("v1.4/ssh-rsa-2048.key"))), source: "k")
        let data = Array("session".utf8)
        #expect(throws: SSHKeyError.self) { _ = try key.sign(data, flags: 0) }
        let sha1 = try key.sign(data, flags: 0, allowSHA1: true)
        #expect(key.publicKey.verifies(signature: sha1, of: data, allowSHA1: true))
        #expect(!key.publicKey.verifies(signature: sha1, of: data), "SHA-1 accepted without asking")
        let sha512 = try key.sign(data, flags: SSHAgentSignFlags.rsaSHA2_512)
        #expect(key.publicKey.verifies(signature: sha512, of: data))
        #expect(try key.sign(data, flags: 0x06).starts(with: [0, 0, 0, 12] + Array("rsa-sha2-256".utf8)), "both flags: SHA2-256, as OpenSSH")
        for flags: UInt32 in [0x01, 0x08, 0x80000000] {
            #expect(throws: SSHKeyError.self) { _ = try key.sign(data, flags: flags | SSHAgentSignFlags.rsaSHA2_256) }
        }
        #expect(throws: SSHKeyError.self) { _ = try key.sign(data, algorithm: .ed25519) }
    }

    @Test func test_sign_ed25519IsDeterministicAndECDSAIsNot() throws {
        let ed = try SSHPrivateKey.generate(.ed25519, comment: "")
        #expect(try ed.sign([1, 2, 3], flags: 0) == ed.sign([1, 2, 3], flags: 0))
        let ec = try SSHPrivateKey.generate(.ecdsaP256, comment: "")
        let first = try ec.sign([1, 2, 3], flags: 0), second = try ec.sign([1, 2, 3], flags: 0)
        #expect(first != second, "a hedged nonce: fresh randomness in every ECDSA signature")
        #expect(ec.publicKey.verifies(signature: first, of: [1, 2, 3]) && ec.publicKey.verifies(signature: second, of: [1, 2, 3]))
    }

    // MARK: - generate

    @Test(arguments: [SSHKeyType.ed25519, .ecdsaP256, .ecdsaP384, .ecdsaP521, .rsa])
    func test_generate_makesKeysSSHKeygenReadsAndVerifies(type: SSHKeyType) throws {
        guard SSHKeygen.path != nil else { print(Self.skip); return }
        let folder = try TemporaryDirectory(); defer { folder.remove() }
        let key = try SSHPrivateKey.generate(type, rsaBits: 2048, comment: "made in the vault")
        #expect(key.publicKey.bits == (type == .rsa ? 2048 : type == .ed25519 ? 256 : type.curve!.bits))
        let text = try key.openSSHText().withUnsafeBytes { Array($0) }
        let again = try SSHPrivateKey.parse(text, source: "again")
        #expect(again.publicKey == key.publicKey && again.comment == key.comment, "read back with every check")
        try writePrivate(text, to: folder.path("k"))
        #expect(try SSHKeygen.publicLine(of: folder.path("k")) == key.authorizedKeysLine)
        #expect(key.authorizedKeysLine.hasSuffix(" made in the vault"))
        let signature = try SSHSig.sign([7], key: key, namespace: "file")
        #expect(try SSHKeygen.checkSignature(signature, of: [7], namespace: "file", file: folder.path("sig")).ok)
    }

    @Test func test_generate_refusesRSASizesOutsideTheBoundsAndBadComments() {
        for bits in [1024, 2047, 8193, 16384] {
            #expect(throws: SSHKeyError.self) { _ = try SSHPrivateKey.generate(.rsa, rsaBits: bits, comment: "") }
        }
        #expect(throws: SSHKeyError.self) { _ = try SSHPrivateKey.generate(.ed25519, comment: "two\nlines") }
        #expect(throws: SSHKeyError.self) { _ = try SSHPrivateKey.generate(.ed25519, comment: String(repeating: "c", count: 1025)) }
    }

    @Test func test_ecdsaBits_namesTheThreeCurves() {
        #expect(SSHKeyType.ecdsa(bits: 256) == .ecdsaP256 && SSHKeyType.ecdsa(bits: 384) == .ecdsaP384 && SSHKeyType.ecdsa(bits: 521) == .ecdsaP521)
        #expect(SSHKeyType.ecdsa(bits: 512) == nil)
    }
}
