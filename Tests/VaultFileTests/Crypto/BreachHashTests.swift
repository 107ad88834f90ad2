import Testing
@testable import VaultFormat

/// The hashes breach lists are keyed by, against published vectors.
@Suite struct BreachHashTests {
    private func hex(_ kind: BreachHash, _ bytes: [UInt8]) -> String? {
        var digest = [UInt8](repeating: 0, count: kind.digestLength)
        let made = bytes.withUnsafeBytes { input in digest.withUnsafeMutableBytes { kind.digest(of: input, into: $0) } }
        return made ? digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() : nil
    }

    // MARK: - digest

    @Test func test_digest_sha1MatchesPwnedPasswordsOwnExample() {
        // haveibeenpwned.com's API documentation: "password" is 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8.
        #expect(hex(.sha1, Array("password".utf8)) == "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8")
        #expect(hex(.sha1, []) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func test_digest_md4MatchesRFC1320() {
        let vectors = [
            ("", "31d6cfe0d16ae931b73c59d7e0c089c0"), ("a", "bde52cb31de33e46245e05fbdbd6fb24"),
            ("abc", "a448017aaf21d8525fc10ae87aa6729d"), ("message digest", "d9130a8164549fe818874806e1c7014b"),
            ("abcdefghijklmnopqrstuvwxyz", "d79e1c308aa5bbcdeea8ed63df412da9"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "043f8582f241db351ce627e153e7f0e4"),
            (String(repeating: "1234567890", count: 8), "e33b4ddc9c38f2199c3e7b164fcc0536"),
        ]
        for (message, expected) in vectors {
            var digest = [UInt8](repeating: 0, count: 16)
            Array(message.utf8).withUnsafeBytes { input in digest.withUnsafeMutableBytes { MD4.hash(input, into: $0) } }
            #expect(digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() == expected, "\(message)")
        }
    }

    @Test func test_digest_ntlmIsMD4OfUTF16LittleEndian() {
        // The NTLM hash of "password", as Windows and the NTLM Pwned Passwords list have it.
        #expect(hex(.ntlm, Array("password".utf8)) == "8846f7eaee8fb117ad06bdd830b7586c")
        // Beyond the BMP: a surrogate pair, as Windows encodes it.
        #expect(hex(.ntlm, Array("𝄞".utf8)) != nil)
    }

    // MARK: Edge cases

    @Test func test_digest_ntlmOfBytesThatAreNotUTF8IsRefused() {
        #expect(hex(.ntlm, [0xFF, 0x41]) == nil)
        #expect(hex(.sha1, [0xFF, 0x41]) != nil)
    }
}
