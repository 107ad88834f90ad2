import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// Hostile passphrase-protected identities for `Fixtures/damaged/keys/` (their expectations are
/// checked through the binary by `KeyCorpusCLITests`), and the protected parsers on mutations.
///
/// `VAULTFILE_WRITE_DAMAGED_PROTECTED_KEYS=1 swift test --filter ProtectedKeyCorpusTests` appends
/// these cases to the corpus's manifest once: it refuses to overwrite a file and leaves every
/// existing case as it is.
@Suite struct ProtectedKeyCorpusTests {
    // MARK: - Parsers on arbitrary bytes

    @Test func test_protectedParsers_neverCrashOnMutationsOfValidInput() throws {
        var generator = SplitMix(seed: 4141)
        let age = Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("protected-identities/identity.age")))
        for seed in [ProtectedKeyBuilder(rounds: 1).pem(), ProtectedKeyBuilder(rounds: 1).blob(), age] {
            for _ in 0..<200 {
                var bytes = seed
                for _ in 0..<(1 + Int(generator.nextByte() % 4)) {
                    bytes[Int(generator.nextByte()) * bytes.count / 256] = generator.nextByte()
                }
                if let key = try? OpenSSHProtectedKey.parseIfProtected(bytes, source: "f"), key.rounds <= 1 {
                    _ = try? key.decrypt(passphrase: SecureBytes(copying: Array("correct horse".utf8)))
                }
                _ = try? AgeProtectedIdentityFile.parseIfProtected(bytes, source: "f")
            }
        }
    }

    // MARK: - Writing the cases (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_PROTECTED_KEYS"] == "1"))
    func test_writeCorpus_protectedKeys() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("damaged/keys")
        let manifest = folder.appendingPathComponent("manifest.json")
        var cases = try KeyslotCorpusTests.KeyCase.read(manifest)
        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            cases.append(.init(file: file, use: "identity", description: description, expectStatus: status, expectMessage: message))
        }
        let big = sshString([UInt8](repeating: 1, count: 1_025)) + ProtectedKeyBuilder.bigEndian(16)
        let keys: [(String, String, Int32, String, ProtectedKeyBuilder)] = [
            ("protected-rounds-100000.key", "a protected key asking 100,000 bcrypt-pbkdf rounds", 6, "asks for 100000 bcrypt-pbkdf rounds",
             ProtectedKeyBuilder(rounds: 100_000)),
            ("protected-rounds-0.key", "a protected key asking no rounds", 2, "0 bcrypt-pbkdf rounds", ProtectedKeyBuilder(rounds: 0)),
            ("protected-cipher-3des.key", "a protected key under 3des-cbc", 2, "which vaultfile does not read", ProtectedKeyBuilder(cipher: "3des-cbc")),
            ("protected-kdf-scrypt.key", "a protected key whose KDF is not bcrypt", 2, "KDF is 'scrypt'", ProtectedKeyBuilder(kdf: "scrypt")),
            ("protected-salt-empty.key", "an empty bcrypt salt", 2, "salt is 0 bytes",
             ProtectedKeyBuilder(kdfOptions: sshString([]) + ProtectedKeyBuilder.bigEndian(16))),
            ("protected-salt-1025.key", "a bcrypt salt over the cap", 2, "salt is 1025 bytes", ProtectedKeyBuilder(kdfOptions: big)),
            ("protected-options-trailing.key", "bcrypt options with a byte after the rounds", 2, "bcrypt options are malformed",
             ProtectedKeyBuilder(kdfOptions: sshString(Array(0..<16)) + ProtectedKeyBuilder.bigEndian(16) + [0])),
            ("protected-partial-block.key", "an encrypted section of 147 bytes", 2, "not a whole number of 16-byte blocks",
             ProtectedKeyBuilder(sectionExtra: [1, 2, 3])),
            ("protected-section-huge.key", "an encrypted section over 16 KiB", 2, "vaultfile reads at most 16384",
             ProtectedKeyBuilder(sectionExtra: [UInt8](repeating: 0, count: 16_400 - 144))),
            ("protected-trailing.key", "a byte after the encrypted section", 2, "bytes after its key", ProtectedKeyBuilder(trailing: [0])),
            ("protected-two-keys.key", "a protected file of two keys", 2, "holds 2 keys", ProtectedKeyBuilder(keyCount: 2)),
            ("protected-ssh-rsa.key", "a protected key named ssh-rsa", 2, "not an ssh-ed25519 key", ProtectedKeyBuilder(keyType: "ssh-rsa")),
        ]
        for (file, description, status, message, builder) in keys { try add(file, description, status, message, builder.pem()) }
        try add("protected-truncated.key", "a protected key cut inside its encrypted section", 2, "truncated",
                OpenSSHKeyBuilder.armor(Array(ProtectedKeyBuilder().blob().dropLast(20))))
        let age = String(decoding: try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("protected-identities/identity.age")), as: UTF8.self)
        let lines = age.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // lines: version, "-> scrypt SALT 18", body, "--- MAC", then the payload.
        let x25519 = "-> X25519 " + String(decoding: AgeBase64.encodeUnpadded([UInt8](repeating: 9, count: 32)), as: UTF8.self)
        try add("age-p-scrypt-not-alone.age", "an age identity file whose scrypt stanza has a neighbour", 2, "beside other stanzas",
                Array(([lines[0], lines[1], lines[2], x25519, lines[2]] + lines[3...]).joined(separator: "\n").utf8))
        try add("age-p-work-factor-018.age", "a scrypt work factor with a leading zero", 2, "work factor is not a decimal number",
                Array(([lines[0], lines[1].replacingOccurrences(of: " 18", with: " 018")] + lines[2...]).joined(separator: "\n").utf8))
        try add("age-p-to-recipients.age", "an age file to a recipient where a passphrase identity file belongs", 2, "encrypted to recipients",
                Array(([lines[0], x25519, lines[2]] + lines[3...]).joined(separator: "\n").utf8))
        try add("age-p-header-cut.age", "an age -p file cut inside its header", 2, "cannot be read", Array(lines.prefix(2).joined(separator: "\n").utf8))
        try KeyslotCorpusTests.KeyCase.write(cases, to: manifest)
    }
}
