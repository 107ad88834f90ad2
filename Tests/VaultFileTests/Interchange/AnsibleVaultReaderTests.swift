import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// ansible-vault files and inline `!vault` values (`AnsibleVaultReader`), against files written by
/// Debian's ansible-vault 2.14 (Fixtures/import/ansible-vault/, password `fixture-password`).
@Suite struct AnsibleVaultReaderTests {
    private static let folder = ProjectPaths.fixtures.appendingPathComponent("import/ansible-vault")
    private let password = SecureBytes(copying: Array("fixture-password".utf8))

    private func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    }

    private func read(_ bytes: [UInt8], password: SecureBytes? = nil) throws(VaultError) -> ForeignImport {
        try AnsibleVaultReader.read(bytes, file: "test.yml", name: "test", password: password ?? self.password)
    }

    // MARK: - Success

    @Test func test_read_wholeFileOfVersion1_1() throws {
        let result = try read(fixture("whole-1.1.yml"))
        #expect(result.items.count == 1)
        #expect(result.items[0].title == "test" && result.items[0].folders.isEmpty)
        #expect(String(decoding: result.items[0].value, as: UTF8.self) == "db_password: hunter2\napi_token: \"tok-123\"\n")
    }

    @Test func test_read_wholeFileOfVersion1_2WithVaultID() throws {
        let bytes = try fixture("whole-1.2.txt")
        #expect(try AnsibleVaultReader.parse(envelope: String(decoding: bytes, as: UTF8.self), file: "f").vaultID == "prod")
        #expect(String(decoding: try read(bytes).items[0].value, as: UTF8.self) == "line one\nline two\n")
    }

    @Test func test_read_inlineValuesByKeyPath() throws {
        let result = try read(fixture("inline.yml"))
        let names = result.items.map { ($0.folders + [$0.title]).joined(separator: "/") }
        #expect(names == ["test/db_password", "test/services/mail/password", "test/services/keys/0"])
        #expect(result.items.map { String(decoding: $0.value, as: UTF8.self) } == ["s3cr3t", "mail-pass", "first-key"])
        #expect(result.notKept == ["plain (unencrypted) YAML values": 3])
        #expect(result.reason(notKept: "plain (unencrypted) YAML values") == .unencryptedValues)
    }

    /// Several passwords (the repeated --source-password-* options): each tried on each value, the
    /// first whose HMAC verifies opens it; none: the error says how many were tried.
    @Test func test_read_severalPasswordsTheOneThatOpensIsUsed() throws {
        let wrong = SecureBytes(copying: Array("wrong".utf8)), other = SecureBytes(copying: Array("other".utf8))
        let opened = try AnsibleVaultReader.read(fixture("inline.yml"), file: "test.yml", name: "test", passwords: [wrong, password, other])
        #expect(opened.items.map { String(decoding: $0.value, as: UTF8.self) } == ["s3cr3t", "mail-pass", "first-key"])
        #expect {
            try AnsibleVaultReader.read(fixture("whole-1.2.txt"), file: "test.yml", name: "test", passwords: [wrong, other])
        } throws: { error in
            guard case VaultError.sourceSecretRejected(_, let what) = error else { return false }
            return what == "any of the 2 vault passwords given (vault id 'prod')"
        }
    }

    // MARK: - Failure

    @Test func test_read_wrongPasswordFailsTheHMACBeforeDecrypting() throws {
        let bytes = try fixture("whole-1.2.txt")
        #expect {
            try read(bytes, password: SecureBytes(copying: Array("wrong".utf8)))
        } throws: { error in
            guard case VaultError.sourceSecretRejected(let file, let what) = error else { return false }
            return file == "test.yml" && what.contains("vault id 'prod'")
        }
    }

    @Test func test_read_wrongHMACIsRefused() throws {
        // Flip one hex digit of the HMAC line inside the hex of hex: the password is right, the tag is not.
        let text = String(decoding: try fixture("whole-1.1.yml"), as: UTF8.self)
        var envelope = try AnsibleVaultReader.parse(envelope: text, file: "f")
        envelope.hmac[0] ^= 1
        #expect(throws: VaultError.self) { try read(Array(Self.encode(envelope).utf8)) }
        envelope.hmac[0] ^= 1
        envelope.ciphertext[5] ^= 0x80  // a changed ciphertext fails the same check
        #expect(throws: VaultError.self) { try read(Array(Self.encode(envelope).utf8)) }
        envelope.ciphertext[5] ^= 0x80
        #expect(try read(Array(Self.encode(envelope).utf8)).items.count == 1)  // the re-encoding itself is right
    }

    @Test func test_read_hostileEnvelopes() throws {
        let good = String(decoding: try fixture("whole-1.1.yml"), as: UTF8.self)
        let lines = good.split(separator: "\n")
        let cases: [(String, String)] = [
            ("truncated", lines.prefix(3).joined(separator: "\n")),
            ("header only", "$ANSIBLE_VAULT;1.1;AES256\n"),
            ("bad hex", "$ANSIBLE_VAULT;1.1;AES256\n3x33\n"),
            ("odd hex", "$ANSIBLE_VAULT;1.1;AES256\n333\n"),
            ("unknown version", good.replacingOccurrences(of: "1.1;AES256", with: "9.9;AES256")),
            ("unknown cipher", good.replacingOccurrences(of: ";AES256", with: ";AES")),
            ("1.2 without id", good.replacingOccurrences(of: "1.1;AES256", with: "1.2;AES256")),
            ("NUL", good.replacingOccurrences(of: "\n3", with: "\n\u{0}3")),
            ("two lines inside", "$ANSIBLE_VAULT;1.1;AES256\n" + Self.hex(Array("00\n11".utf8)) + "\n"),
            ("short HMAC", "$ANSIBLE_VAULT;1.1;AES256\n" + Self.hex(Array("0011\n22\n\(String(repeating: "00", count: 16))".utf8)) + "\n"),
            ("ciphertext not a block", "$ANSIBLE_VAULT;1.1;AES256\n" + Self.hex(Array("0011\n\(String(repeating: "00", count: 32))\n0102".utf8)) + "\n"),
        ]
        // A header ansible-vault's, then a body that does not fit: damage (exit 4); a header of
        // another version or cipher: input vaultfile does not read (exit 2).
        let notDamage: Set = ["unknown version", "unknown cipher", "1.2 without id"]
        for (label, text) in cases {
            #expect("\(label)") { try read(Array(text.utf8)) } throws: { error in
                guard let error = error as? VaultError else { return false }
                if case .sourceDamaged = error { return !notDamage.contains(label) }
                if case .malformedInput = error { return notDamage.contains(label) }
                return false
            }
        }
        var invalid = Array("key: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n".utf8)
        invalid += [0xFF, 0xFE, 0x0A]
        #expect(throws: VaultError.self) { try read(invalid) }
        #expect(throws: VaultError.self) { try read(Array("just: plain\n".utf8)) }  // no vault at all
    }

    @Test func test_parse_refusesHugeBodiesBeforeDecoding() throws {
        // The real limit (1 GiB of hex, four times the largest value) with a small stand-in: the
        // check runs on the text's length before any line is split or decoded.
        let line = String(repeating: "0", count: 80) + "\n"
        for (count, overLimit) in [(40, false), (60, true), (1_000, true)] {  // 3,200, 4,800 and 80,000 hex digits against 4,096
            let text = "$ANSIBLE_VAULT;1.1;AES256\n" + String(repeating: line, count: count)
            var limited = false
            do { _ = try AnsibleVaultReader.parse(envelope: text, file: "huge", maxHexLength: 4_096) } catch { if case .limitExceeded = error { limited = true } }
            #expect(limited == overLimit, "\(count) lines")
        }
        #expect(AnsibleVaultReader.maxHexLength >= 2 * VaultLimits.maxValueLength)
    }

    // MARK: - Edge cases

    @Test func test_read_badPaddingAfterAGoodHMACIsDamage() throws {
        // A writer that padded wrongly: build a vault whose plaintext ends in 0x00 (an invalid PKCS#7 byte).
        let text = String(decoding: try fixture("whole-1.1.yml"), as: UTF8.self)
        let envelope = try AnsibleVaultReader.parse(envelope: text, file: "f")
        let salt = envelope.salt
        let keys = try #require(ForeignKeyDerivation.pbkdf2SHA256(password: password, salt: salt, iterations: 10_000, outputLength: 80))
        let plain = [UInt8](repeating: 0, count: 16)
        let ciphertext = try #require(keys.withUnsafeBytes { raw in
            AES256CTR.decrypt(plain[...], key: UnsafeRawBufferPointer(rebasing: raw[0..<32]), iv: UnsafeRawBufferPointer(rebasing: raw[64..<80]))
        }).withUnsafeBytes { Array($0) }
        let tag = keys.withUnsafeBytes { HMACSHA256.authenticate(ciphertext[...], key: UnsafeRawBufferPointer(rebasing: $0[32..<64])) }
        let bad = AnsibleVaultReader.Envelope(version: "1.1", vaultID: nil, salt: salt, hmac: tag, ciphertext: ciphertext)
        #expect {
            try read(Array(Self.encode(bad).utf8))
        } throws: { error in
            guard case VaultError.sourceDamaged(_, let why) = error else { return false }
            return why.contains("PKCS#7")
        }
    }

    // MARK: - Helpers

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// ansible's own layout: the hex of "salt\nhmac\nciphertext" (each hex), in lines of 80.
    static func encode(_ envelope: AnsibleVaultReader.Envelope) -> String {
        let inner = hex(envelope.salt) + "\n" + hex(envelope.hmac) + "\n" + hex(envelope.ciphertext)
        let outer = hex(Array(inner.utf8))
        var lines: [String] = []
        var index = outer.startIndex
        while index < outer.endIndex {
            let end = outer.index(index, offsetBy: 80, limitedBy: outer.endIndex) ?? outer.endIndex
            lines.append(String(outer[index..<end]))
            index = end
        }
        let header = envelope.vaultID.map { "$ANSIBLE_VAULT;1.2;AES256;\($0)" } ?? "$ANSIBLE_VAULT;1.1;AES256"
        return ([header] + lines).joined(separator: "\n") + "\n"
    }
}
