import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// `--format kdbx` in the library: KDBXReader on the databases of Fixtures/kdbx (make-kdbx.py; every
/// variant keepassxc-cli lists), KDBXWriter read back by KDBXReader, KeePass's key files, and the
/// hostile files of Fixtures/kdbx/hostile refused before any large allocation.
@Suite struct KDBXTests {
    static let password = KDBXCredentials(password: SecureBytes(copying: Array("kdbx-fixture".utf8)), keyFileKey: nil)
    static let limits = KDFLimits(maxMemoryBytes: 64 << 20, maxArgon2WorkKiB: 1 << 20, maxPBKDF2Iterations: 1_000_000)
    static let tiny = Argon2idParameters(memoryKiB: 8, iterations: 1, parallelism: 1)

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("kdbx/\(name)")))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - Reading every variant

    @Test(arguments: ["kdbx4-argon2id-chacha20.kdbx", "kdbx4-argon2d-aes.kdbx", "kdbx4-aeskdf-chacha20.kdbx", "kdbx31-aeskdf-salsa20.kdbx"])
    func test_read_opensEveryVariant(_ name: String) throws {
        let read = try KDBXReader.read(try Self.fixture(name), file: name, credentials: Self.password, limits: Self.limits, now: 0)
        #expect(read.format == "kdbx")
        let mail = try #require(read.items.first)
        #expect(read.items.count == 1 && mail.folders == ["Work"] && mail.title == "Mail")
        #expect(Self.text(mail.value) == "pässword", "the protected password, through the inner stream")
        #expect(mail.username == "alice" && mail.urls == ["https://mail.example"])
        #expect(mail.totp == "otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP", "KeePassXC's otp attribute, protected")
        #expect(mail.fields.contains { $0.label == "PIN" && Self.text($0.value) == "1234" && $0.protected })
        #expect(mail.attachments.map(\.name) == ["f.txt"] && mail.attachments.first.map { Self.text($0.bytes) } == "attached bytes\n",
                "KDBX 4: the inner header's pool; 3.1: Meta/Binaries")
    }

    @Test func test_write_isReadBackWithEveryField() throws {
        var vault = Vault(history: .standard)
        let old = Entry(value: Array("old".utf8), fields: ["username": Array("bob".utf8)], created: 1_000_000, modified: 1_000_000)
        try vault.put(old, as: "Work/Mail", now: 1_000_000)
        let entry = Entry(value: Array("new <&> secret".utf8), fields: [
            "username": Array("alice".utf8), "url": Array("https://a.example".utf8), "url2": Array("https://b.example".utf8),
            "notes": Array("line 1\nline 2".utf8), "totp": Array("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP".utf8),
            "attachment.key.bin": [0, 1, 2, 255], "PIN": Array("1234".utf8), "tags": Array("a,b".utf8), "raw": [0xFF, 0x00],
        ], created: 1_000_000, modified: 1_700_000_000_000)
        try vault.put(entry, as: "Work/Mail", now: 1_700_000_000_000)
        try vault.put(Entry(value: Array("v".utf8), created: 5_000, modified: 5_000), as: "top", now: 5_000)
        let written = try KDBXWriter.write(vault, prefix: "", credentials: Self.password, parameters: Self.tiny, now: 0)
        #expect(written.entries == 2 && written.binaryAsAttachment == 1, "'raw' is not text: an attachment")
        let read = try KDBXReader.read(written.bytes, file: "x", credentials: Self.password, limits: Self.limits, now: 0)
        let mail = try #require(read.items.first { $0.title == "Mail" })
        #expect(mail.folders == ["Work"] && Self.text(mail.value) == "new <&> secret")
        #expect(mail.username == "alice" && mail.urls == ["https://a.example", "https://b.example"] && mail.notes == "line 1\nline 2")
        #expect(mail.totp == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(Set(mail.attachments.map(\.name)) == ["key.bin", "raw"])
        #expect(mail.attachments.first { $0.name == "key.bin" }?.bytes == [0, 1, 2, 255])
        #expect(mail.fields.contains { $0.label == "PIN" && Self.text($0.value) == "1234" && $0.protected })
        #expect(mail.extras.contains { $0.label == "tags" && $0.value == "a,b" })
        #expect(mail.modified == 1_700_000_000_000 && mail.created == 1_000_000)
        #expect(mail.history.map { Self.text($0.value) } == ["old"] && mail.history.first?.username == "bob")
        #expect(read.items.contains { $0.title == "top" && $0.folders.isEmpty })
    }

    @Test func test_write_underAPrefixAndAKeyFileOnly() throws {
        var vault = Vault()
        try vault.put(Entry(value: Array("a".utf8), created: 0, modified: 0), as: "x/a")
        try vault.put(Entry(value: Array("b".utf8), created: 0, modified: 0), as: "y/b")
        let keyOnly = KDBXCredentials(password: nil, keyFileKey: SecureBytes(copying: [UInt8](repeating: 7, count: 32)))
        let written = try KDBXWriter.write(vault, prefix: "x/", credentials: keyOnly, parameters: Self.tiny)
        let read = try KDBXReader.read(written.bytes, file: "x", credentials: keyOnly, limits: Self.limits)
        #expect(read.items.map(\.title) == ["a"])
        #expect(throws: VaultError.self) { try KDBXReader.read(written.bytes, file: "x", credentials: Self.password, limits: Self.limits) }
    }

    // MARK: - Key files

    @Test func test_keyFile_readsEveryKeePassForm() throws {
        let key = (0..<32).map { UInt8($0) }
        let hex = key.map { String(format: "%02X", $0) }.joined()
        let check = KDBXTestHash.sha256(key).prefix(4).map { String(format: "%02X", $0) }.joined()
        let v2 = "<?xml version=\"1.0\"?>\n<KeyFile><Meta><Version>2.0</Version></Meta><Key><Data Hash=\"\(check)\">\(hex.prefix(32)) \(hex.dropFirst(32))</Data></Key></KeyFile>"
        let v1 = "<KeyFile><Meta><Version>1.00</Version></Meta><Key><Data>\(Data(key).base64EncodedString())</Data></Key></KeyFile>"
        for form in [Array(v2.utf8), Array(v1.utf8), key, Array(hex.utf8)] {
            let read = try KDBXKeyFile.key(of: form, file: "k")
            #expect(read.withUnsafeBytes { Array($0) } == key)
        }
        let other = Array("any file at all".utf8)
        #expect(try KDBXKeyFile.key(of: other, file: "k").withUnsafeBytes { Array($0) } == KDBXTestHash.sha256(other), "any other file: its SHA-256")
    }

    @Test func test_keyFile_refusesAVersion2FileWhoseHashDiffers() {
        let v2 = "<KeyFile><Meta><Version>2.0</Version></Meta><Key><Data Hash=\"00000000\">" + String(repeating: "AB", count: 32) + "</Data></Key></KeyFile>"
        #expect(throws: VaultError.self) { try KDBXKeyFile.key(of: Array(v2.utf8), file: "k") }
    }

    // MARK: - Failures

    @Test func test_read_wrongPasswordIsRejectedNotDamaged() throws {
        let wrong = KDBXCredentials(password: SecureBytes(copying: Array("nope".utf8)), keyFileKey: nil)
        for name in ["kdbx4-argon2id-chacha20.kdbx", "kdbx31-aeskdf-salsa20.kdbx"] {
            do {
                _ = try KDBXReader.read(try Self.fixture(name), file: name, credentials: wrong, limits: Self.limits)
                Issue.record("\(name) opened with a wrong password")
            } catch let error as VaultError {
                #expect(error.category == .wrongPassword, "\(name): \(error)")
            }
        }
    }

    @Test func test_read_refusesKDFParametersOverTheCapsBeforeDeriving() throws {
        let small = KDFLimits(maxMemoryBytes: 4 << 10, maxArgon2WorkKiB: 1 << 20, maxPBKDF2Iterations: 1_000_000)
        #expect(throws: KDFError.self, "8 KiB of Argon2 memory over a cap of 4 KiB") {
            try KDBXReader.read(try Self.fixture("kdbx4-argon2id-chacha20.kdbx"), file: "f", credentials: Self.password, limits: small)
        }
        let few = KDFLimits(maxMemoryBytes: 64 << 20, maxArgon2WorkKiB: 1 << 20, maxPBKDF2Iterations: 10)
        #expect(throws: KDFError.self, "AES-KDF's 100 rounds over 4 × 10") {
            try KDBXReader.read(try Self.fixture("kdbx31-aeskdf-salsa20.kdbx"), file: "f", credentials: Self.password, limits: few)
        }
    }

    @Test(arguments: [("huge-header-field.kdbx", "a length of 4294967280 bytes"), ("block-4gib.kdbx", "block 0 has a negative length"),
                      ("hmac-block-7.kdbx", "block 7's HMAC does not verify"), ("gzip-lying-size.kdbx", "inflates to more than 1024 bytes"),
                      ("truncated-inner-header.kdbx", "inner header field 3 says 16 bytes, but only 3 remain"),
                      // A field claiming 14 MiB of a payload whose gzip trailer claims 15 MiB: the field's
                      // buffer grows with what inflates (64 KiB), and the trailer's lie shows at the end.
                      ("inner-field-lying-length.kdbx", "incorrect length check")])
    func test_read_refusesHostileFilesAsDamaged(_ name: String, _ why: String) throws {
        do {
            _ = try KDBXReader.read(try Self.fixture("hostile/\(name)"), file: name, credentials: Self.password, limits: Self.limits)
            Issue.record("\(name) was read")
        } catch let error as VaultError {
            #expect(error.category == .damaged && error.description.contains(why), "\(name): \(error)")
        }
    }

    @Test func test_read_refusesAGzipBombByTheGrowthLimitBeforeInflating() throws {
        do {
            _ = try KDBXReader.read(try Self.fixture("hostile/gzip-bomb.kdbx"), file: "bomb", credentials: Self.password, limits: Self.limits)
            Issue.record("the bomb was read")
        } catch let error as VaultError {
            #expect(error.category == .overLimit && error.description.contains("refused before inflating"), "\(error)")
        }
    }

    // MARK: - Edge cases

    @Test func test_read_truncatedAtEveryLengthNeverCrashes() throws {
        let bytes = try Self.fixture("kdbx4-argon2id-chacha20.kdbx")
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: (any Error).self) { try KDBXReader.read(Array(bytes.prefix(length)), file: "t", credentials: Self.password, limits: Self.limits) }
        }
    }
}

/// SHA-256 for the key-file tests (CryptoKit is absent on Linux; the library's own is what is tested).
enum KDBXTestHash {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { KDBXCrypto.sha256([bytes[...]]) }
}
