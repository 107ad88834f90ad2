import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat

/// Host keys as `session-bind@openssh.com` carries them (`SSHHostKey`): OpenSSH host certificates
/// made by ssh-keygen (the CA's signature checked, the bind's signature checked with the certified
/// key), RSA host keys from 1,024 bits, hostile certificates; and the private numbers of ECDSA and
/// RSA keys kept out of libcrypto's heap between signatures.
@Suite struct SSHHostKeyTests {
    /// A host key made by ssh-keygen and certified (`-h`) by a CA of `caType`, in `folder`.
    private struct CertifiedHost {
        let folder: TemporaryDirectory
        let host: SSHPrivateKey
        let certificate: [UInt8]

        init(hostType: String, bits: Int? = nil, caType: String) throws {
            folder = try TemporaryDirectory()
            try SSHKeygen.make(caType, bits: caType == "rsa" ? 2048 : nil, comment: "ca", at: folder.path("ca"))
            try SSHKeygen.make(hostType, bits: bits, comment: "host", at: folder.path("host"))
            let signed = try SSHKeygen.run(["-q", "-s", folder.path("ca"), "-I", "host-id", "-h", "-n", "127.0.0.1,example.com",
                                            "-V", "-5m:+1h", folder.path("host.pub")])
            guard signed.status == 0 else { throw KeygenFailure(why: String(decoding: signed.stderr, as: UTF8.self)) }
            host = try SSHPrivateKey.parse(Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("host")))), source: "host")
            let line = try String(contentsOfFile: folder.path("host-cert.pub"), encoding: .utf8)
            certificate = base64Decode(Array(line.split(separator: " ")[1].utf8))!
        }
    }

    private static func hostSignature(_ host: SSHPrivateKey, _ sessionID: [UInt8]) throws -> [UInt8] {
        try host.sign(sessionID, flags: SSHAgentSignFlags.rsaSHA2_512)
    }

    // MARK: - Certificates

    @Test(.enabled(if: SSHKeygen.path != nil, "ssh-keygen is absent: host certificate tests skipped"))
    func test_init_readsHostCertificatesAndChecksSignaturesWithTheCertifiedKey() throws {
        for (hostType, bits, caType) in [("ed25519", nil, "ed25519"), ("ecdsa", nil, "rsa"), ("rsa", 2048, "ecdsa")] as [(String, Int?, String)] {
            let made = try CertifiedHost(hostType: hostType, bits: bits, caType: caType); defer { made.folder.remove() }
            let key = try SSHHostKey(wire: made.certificate)
            #expect(key.isCertificate && key.type == made.host.type, "\(hostType)")
            #expect(key.plainKey == made.host.publicKey.wireBytes && key.fingerprint == made.host.publicKey.fingerprint, "\(hostType)")
            let sid = Array(repeating: UInt8(0x5A), count: 32)
            let signature = try Self.hostSignature(made.host, sid)
            #expect(SSHHostKeys.verifies(hostKey: made.certificate, signature: signature, data: sid), "\(hostType)")
            #expect(!SSHHostKeys.verifies(hostKey: made.certificate, signature: signature, data: [1] + sid.dropFirst()), "\(hostType)")
            var session = SSHAgentSession()
            #expect(session.bind(hostKey: made.certificate, sessionID: sid, signature: signature, forwarding: false) == .success, "\(hostType)")
            #expect(SSHHostKeys.fingerprint(made.certificate) == made.host.publicKey.fingerprint)
        }
    }

    @Test(.enabled(if: SSHKeygen.path != nil, "ssh-keygen is absent: host certificate tests skipped"))
    func test_init_refusesACertificateWhoseCASignatureDoesNotVerifyOrThatIsCut() throws {
        let made = try CertifiedHost(hostType: "ed25519", caType: "ed25519"); defer { made.folder.remove() }
        let sid: [UInt8] = [1, 2, 3]
        let signature = try Self.hostSignature(made.host, sid)
        // A byte of the key id ("host-id", after the nonce, key, serial and type) changed: the CA did not sign that.
        var changed = made.certificate
        let at = changed.firstRange(of: Array("host-id".utf8))!.lowerBound
        changed[at] ^= 0x01
        #expect(throws: SSHKeyError.self) { try SSHHostKey(wire: changed) }
        #expect(!SSHHostKeys.verifies(hostKey: changed, signature: signature, data: sid))
        var session = SSHAgentSession()
        #expect(session.bind(hostKey: changed, sessionID: sid, signature: signature, forwarding: false) == .extensionFailure)
        // Every cut, and a byte after the end.
        for cut in 0..<made.certificate.count {
            #expect(throws: SSHKeyError.self, "cut at \(cut)") { try SSHHostKey(wire: Array(made.certificate.prefix(cut))) }
        }
        #expect(throws: SSHKeyError.self) { try SSHHostKey(wire: made.certificate + [0]) }
    }

    // MARK: - RSA host key sizes

    @Test func test_init_takesRSAHostKeysFrom1024BitsAndRefusesSmallerOnes() throws {
        for bits in [1_024, 2_048] {
            let handle = try #require(RSAKeyHandle.generate(bits: bits))
            let n = try #require(handle.publicNumber("n"))
            var blob: [UInt8] = []
            appendString(&blob, Array("ssh-rsa".utf8))
            appendMPInt(&blob, SSHRSAPublicKey.exponent)
            appendMPInt(&blob, n)
            let sid = Array(repeating: UInt8(7), count: 32)
            var signature: [UInt8] = []
            appendString(&signature, Array("rsa-sha2-512".utf8))
            appendString(&signature, try #require(handle.pkcs1Sign(sid, digest: "SHA512")))
            #expect(try SSHHostKey(wire: blob).type == .rsa)
            #expect(SSHHostKeys.verifies(hostKey: blob, signature: signature, data: sid), "\(bits) bits")
            var session = SSHAgentSession()
            #expect(session.bind(hostKey: blob, sessionID: sid, signature: signature, forwarding: false) == .success, "\(bits) bits")
        }
        let small = try #require(RSAKeyHandle.generate(bits: 768))
        var blob: [UInt8] = []
        appendString(&blob, Array("ssh-rsa".utf8))
        appendMPInt(&blob, SSHRSAPublicKey.exponent)
        appendMPInt(&blob, try #require(small.publicNumber("n")))
        let error = #expect(throws: SSHKeyError.self) { try SSHHostKey(wire: blob) }
        #expect(error?.category == .unsupported && error?.description.contains("768-bit") == true, "\(String(describing: error))")
    }

    // MARK: - Private numbers out of libcrypto's heap

    @Test(.enabled(if: SSHKeygen.path != nil, "ssh-keygen is absent: key memory test skipped"))
    func test_sign_leavesNoCopyOfAnRSAPrimeOrAnECDSAScalarInLibcryptosHeap() throws {
        for shape in [KeygenShape(type: "rsa", bits: 2048), KeygenShape(type: "ecdsa", bits: 256)] {
            let made = try KeygenKey(shape); defer { made.folder.remove() }
            let key = try made.key()
            for _ in 0..<3 { _ = try key.sign([1, 2, 3], flags: SSHAgentSignFlags.rsaSHA2_256) }
            // libcrypto lays a BIGNUM out as little-endian words: the guarded copy (big-endian) is
            // not found by this pattern; a copy kept or left unwiped by libcrypto would be.
            // The control: while libcrypto holds the key (during a signature), the scan finds its copy.
            let secret: ScannedSecret, duringASignature: Int?
            switch key.secret {
            case .rsa(let numbers):
                secret = numbers.p.withUnsafeBytes { ScannedSecret(masking: $0.reversed()) }
                duringASignature = numbers.withHandle { _ in secret.copiesInMemory() }
            case .ecdsa(let parts):
                secret = parts.scalar.withUnsafeBytes { ScannedSecret(masking: $0.reversed()) }
                duringASignature = parts.withHandle(curve: key.type.curve!) { _ in secret.copiesInMemory() }
            case .ed25519: Issue.record("not an RSA or ECDSA key"); continue
            }
            #expect((duringASignature ?? 0) >= 1, "\(shape): the scan does not see libcrypto's copy")
            withExtendedLifetime(key) {
                #expect(secret.copiesInMemory() == 0, "\(shape): a copy of the private number outside guarded memory")
            }
        }
    }
}
