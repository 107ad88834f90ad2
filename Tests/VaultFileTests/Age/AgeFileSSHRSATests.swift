import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Age's ssh-rsa stanza (`-> ssh-rsa TAG`, RSA-OAEP-SHA-256 of the file key under
/// `age-encryption.org/v1/ssh-rsa`), with the ssh-rsa keys of Fixtures/v1.4 (made by ssh-keygen).
@Suite struct AgeFileSSHRSATests {
    static let message = Array("handed to an RSA key\n".utf8)

    /// The identity in Fixtures/v1.4/ssh-rsa-BITS.key.
    static func identity(_ bits: Int) throws -> SSHRSAIdentity {
        let url = ProjectPaths.fixtures.appendingPathComponent("v1.4/ssh-rsa-\(bits).key")
        return try SSHRSAIdentity.parse(Array(try Data(contentsOf: url)), source: url.lastPathComponent)
    }

    static func encrypt(_ recipients: [any AgeFileRecipient]) throws -> [UInt8] {
        try message.withUnsafeBytes { try AgeFile.encrypt($0, to: recipients) }
    }

    static func plaintext(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    /// The stanza `wrap` writes for `key`, with the file key `fileKey`.
    static func stanza(_ key: SSHRSAPublicKey, fileKey: SecureBytes = SecureBytes(copying: [UInt8](repeating: 7, count: 16))) throws -> AgeStanza {
        let stanzas = try key.wrap(fileKey)
        try #require(stanzas.count == 1)
        return stanzas[0]
    }

    // MARK: - wrap and unwrap: success

    @Test func test_encrypt_toAnSSHRSAKeyOpensWithItsIdentity() throws {
        for bits in [2_048, 4_096] {
            let identity = try Self.identity(bits)
            let file = try Self.encrypt([identity.publicKey])
            let tag = String(decoding: AgeBase64.encodeUnpadded(SHA256.hash(identity.publicKey.wireBytes).prefix(4)), as: UTF8.self)
            #expect(file.starts(with: Array("age-encryption.org/v1\n-> ssh-rsa \(tag)\n".utf8)), "\(bits)")
            #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [identity])) == Self.message, "\(bits)")
        }
    }

    @Test func test_wrap_bodyIsTheModulusLongAndFreshEveryTime() throws {
        let key = try Self.identity(4_096).publicKey
        let first = try Self.stanza(key), second = try Self.stanza(key)
        #expect(first.type == "ssh-rsa")
        #expect(first.arguments == second.arguments)
        #expect(first.body.count == 512)
        #expect(first.body != second.body)
    }

    @Test func test_decrypt_triesEveryIdentityAgainstEveryStanza() throws {
        let rsa = try Self.identity(2_048), age = AgeIdentity.generate()
        let file = try Self.encrypt([age.recipient, rsa.publicKey])
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [try Self.identity(4_096), rsa])) == Self.message)
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [rsa, age])) == Self.message)
    }

    // MARK: - unwrap: failure

    @Test func test_decrypt_withAnotherRSAKeyMatchesNoIdentity() throws {
        let file = try Self.encrypt([try Self.identity(2_048).publicKey])
        #expect(throws: AgeFileError.noIdentityMatches(kinds: ["ssh-rsa"])) {
            try AgeFile.decrypt(file, identities: [try Self.identity(4_096), AgeIdentity.generate()])
        }
    }

    @Test func test_unwrap_aBodyThatDoesNotDecryptIsNotThisIdentitys() throws {
        let identity = try Self.identity(2_048)
        let good = try Self.stanza(identity.publicKey)
        var damaged = good.body
        damaged[100] ^= 0x01
        #expect(try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: good.arguments, body: damaged)) == nil)
        // A body of another key's length (a 4,096-bit ciphertext under this key's tag): not a crash, no match.
        let long = try Self.stanza(try Self.identity(4_096).publicKey).body
        #expect(try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: good.arguments, body: long)) == nil)
        // Another key's tag: skipped without decrypting.
        #expect(try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: ["AAAAAA"], body: good.body)) == nil)
    }

    @Test func test_unwrap_refusesAMalformedStanza() throws {
        let identity = try Self.identity(2_048)
        let good = try Self.stanza(identity.publicKey)
        let cases: [(arguments: [String], body: [UInt8], why: String)] = [
            ([], good.body, "0 arguments"),
            (good.arguments + ["extra"], good.body, "2 arguments"),
            ([good.arguments[0] + "AA"], good.body, "tag is not 4 bytes"),
            (["AAAA"], good.body, "tag is not 4 bytes"),
            ([good.arguments[0] + "="], good.body, "tag is not 4 bytes"),
            (good.arguments, [], "body is 0 bytes"),
            (good.arguments, Array(good.body.prefix(255)), "body is 255 bytes"),
            (good.arguments, good.body + [UInt8](repeating: 1, count: 1_793), "body is 2049 bytes"),
        ]
        for (arguments, body, why) in cases {
            do {
                _ = try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: arguments, body: body))
                Issue.record("accepted a stanza whose \(why)")
            } catch {
                guard case .stanzaMalformed(let kind, let text) = error else { Issue.record("\(why): \(error)"); continue }
                #expect(kind == "ssh-rsa")
                #expect(text.contains(why), "\(text)")
            }
        }
    }

    // MARK: - unwrap: edge cases

    @Test func test_unwrap_refusesAnOAEPBodyOfAnotherLengthThanAFileKey() throws {
        let identity = try Self.identity(2_048)
        let good = try Self.stanza(identity.publicKey)
        for length in [1, 15, 17, 32] {
            let body = try identity.publicKey.oaepEncrypt(SecureBytes(copying: [UInt8](repeating: 9, count: length)), label: SSHRSAStanza.label)
            #expect(throws: AgeFileError.self, "\(length)") { try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: good.arguments, body: body)) }
        }
        // The keyslot label is not age's: a body under another label does not decrypt here.
        let other = try identity.publicKey.oaepEncrypt(SecureBytes(copying: [UInt8](repeating: 9, count: 16)), label: Array("another label".utf8))
        #expect(try identity.unwrap(AgeStanza(type: "ssh-rsa", arguments: good.arguments, body: other)) == nil)
    }

    @Test func test_decrypt_aFileWithATamperedTagIsRefusedAsMalformed() throws {
        let identity = try Self.identity(2_048)
        var file = try Self.encrypt([identity.publicKey])
        let prefix = Array("age-encryption.org/v1\n-> ssh-rsa ".utf8)
        file.insert(contentsOf: Array("AA".utf8), at: prefix.count + 6)
        #expect {
            try AgeFile.decrypt(file, identities: [identity])
        } throws: { error in
            guard let error = error as? AgeFileError, case .stanzaMalformed(let kind, _) = error else { return false }
            return kind == "ssh-rsa" && error.category == .damaged
        }
    }
}
