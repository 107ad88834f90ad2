import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The parsers of unlock secrets: OpenSSH keys, recovery codes, keyfiles.
@Suite struct KeyParserTests {
    // MARK: - SSHEd25519Identity.parse

    @Test func test_sshParse_readsAnUnencryptedKeyAndItsPublicHalf() throws {
        let key = OpenSSHKeyBuilder(seed: OpenSSHKeyBuilder.rfc8032Seed)
        let identity = try SSHEd25519Identity.parse(key.pem(), source: "id")
        #expect(Hex.encode(identity.publicKey.key) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(identity.publicKey.comment == "test@host")
        #expect(try X25519.publicKey(of: identity.x25519SecretKey) == identity.publicKey.x25519PublicKey)
        let line = try SSHEd25519PublicKey(parsing: identity.publicKey.description + " test@host")
        #expect(line.wireBytes == identity.publicKey.wireBytes && line.comment == "test@host")
        #expect(identity.publicKey.fingerprint.hasPrefix("SHA256:") && identity.publicKey.wireBytes.count == 51)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen"), "ssh-keygen is not installed: real OpenSSH keys skipped"))
    func test_sshParse_readsSshKeygenOutputAndRefusesItsEncryptedKeys() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try AgeTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "me@there", "-f", folder.path("plain")])
        let identity = try SSHEd25519Identity.parse(Array(try Data(contentsOf: folder.url.appendingPathComponent("plain"))), source: "plain")
        let publicLine = try String(contentsOf: folder.url.appendingPathComponent("plain.pub"), encoding: .utf8)
        #expect(try SSHEd25519PublicKey(parsing: publicLine.trimmingCharacters(in: .newlines)).wireBytes == identity.publicKey.wireBytes)
        let fingerprint = try AgeTool.run("/usr/bin/ssh-keygen", ["-l", "-f", folder.path("plain.pub")])
        #expect(fingerprint.contains(identity.publicKey.fingerprint))
        try AgeTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "passphrase", "-f", folder.path("locked")])
        #expect { try SSHEd25519Identity.parse(Array(try Data(contentsOf: folder.url.appendingPathComponent("locked"))), source: "locked") } throws: {
            ($0 as? VaultError)?.description.contains("encrypted") == true
        }
    }

    /// docs/FORMAT.md §3.5: an identity source is an OpenSSH key when its first line that holds
    /// more than spaces and tabs starts with `-----BEGIN` (as age decides), split as the parser
    /// splits lines: before, a key after a blank line went to the age parser, and an RSA PEM key
    /// was called "not an age identity".
    @Test func test_looksLikeOpenSSHKey_decidesOnTheFirstLineThatHoldsSomething() throws {
        let pem = OpenSSHKeyBuilder().pem()
        let prefixed = Array("\r\n \t\n".utf8) + pem.split(separator: 0x0A, omittingEmptySubsequences: false).map { "  " + String(decoding: $0, as: UTF8.self) }
            .joined(separator: "\r\n").utf8
        for bytes in [pem, prefixed] {
            #expect(SSHEd25519Identity.looksLikeOpenSSHKey(bytes))
            #expect(try SSHEd25519Identity.parse(bytes, source: "id").publicKey.key.count == 32)
        }
        let rsa = Array("\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n".utf8)
        #expect(SSHEd25519Identity.looksLikeOpenSSHKey(rsa))
        #expect(throws: VaultError.malformedInput("id: it is a PEM file of another kind (-----BEGIN RSA PRIVATE KEY-----); vaultfile reads "
                                                  + "unencrypted OpenSSH ed25519 keys (-----BEGIN OPENSSH PRIVATE KEY-----) and age identities (AGE-SECRET-KEY-1…)")) {
            _ = try SSHEd25519Identity.parse(rsa, source: "id")
        }
        // An age identity file, its comments first, and bytes that are no text at all, are not OpenSSH keys.
        for other in [Array("# created: 2025\n# -----BEGIN OPENSSH PRIVATE KEY-----\nAGE-SECRET-KEY-1XYZ\n".utf8), [0xFF, 0xFE, 0x41], [], Array(" \n\t\r\n".utf8)] {
            #expect(!SSHEd25519Identity.looksLikeOpenSSHKey(other))
        }
    }

    @Test func test_sshParse_refusesHostileKeys() throws {
        let cases: [(String, OpenSSHKeyBuilder)] = [
            ("encrypted", OpenSSHKeyBuilder(cipher: "aes256-ctr")),
            ("check integers differ", OpenSSHKeyBuilder(checkInts: (1, 2))),
            ("public halves differ", OpenSSHKeyBuilder(otherPublicInPrivate: true)),
            ("seed does not derive the key", OpenSSHKeyBuilder(wrongSeed: true)),
            ("bad padding", OpenSSHKeyBuilder(padding: [1, 2, 4])),
            ("two keys", OpenSSHKeyBuilder(keyCount: 2)),
            ("rsa", OpenSSHKeyBuilder(keyType: "ssh-rsa")),
        ]
        for (name, builder) in cases {
            #expect(throws: VaultError.self, "\(name)") { _ = try SSHEd25519Identity.parse(builder.pem(), source: "k") }
        }
        #expect(throws: VaultError.self) { _ = try SSHEd25519Identity.parse(Array("-----BEGIN OPENSSH PRIVATE KEY-----\n!!!\n-----END OPENSSH PRIVATE KEY-----\n".utf8), source: "k") }
        #expect(throws: VaultError.self) { _ = try SSHEd25519Identity.parse([], source: "k") }
        // Every truncation of a valid blob is refused, never a crash.
        let blob = OpenSSHKeyBuilder().blob()
        for length in stride(from: 0, to: blob.count, by: 7) {
            let pem = OpenSSHKeyBuilder.armor(Array(blob.prefix(length)))
            #expect(throws: VaultError.self) { _ = try SSHEd25519Identity.parse(pem, source: "k") }
        }
    }

    @Test func test_sshPublicKey_refusesOtherTypesAndBadLines() {
        #expect(throws: VaultError.self) { _ = try SSHEd25519PublicKey(parsing: "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user") }
        #expect(throws: VaultError.self) { _ = try SSHEd25519PublicKey(parsing: "ssh-ed25519") }
        #expect(throws: VaultError.self) { _ = try SSHEd25519PublicKey(parsing: "ssh-ed25519 AAAA====") }
        // A wire key of the right type whose point is invalid.
        let wire = sshString(Array("ssh-ed25519".utf8)) + sshString([1] + [UInt8](repeating: 0, count: 31))
        #expect(throws: VaultError.self) { _ = try SSHEd25519PublicKey(wire: wire) }
    }

    // MARK: - RecoveryCode

    @Test func test_recoveryCode_roundTripsAndIgnoresCaseDashesAndLookalikes() throws {
        let code = RecoveryCode.generate()
        let text = code.formatted()
        #expect(text.count == 41 && text.split(separator: "-").count == 7)
        let variants = [text, text.lowercased(), text.replacingOccurrences(of: "-", with: ""),
                        text.replacingOccurrences(of: "-", with: " ") + "\n",
                        text.replacingOccurrences(of: "1", with: "l").replacingOccurrences(of: "0", with: "O")]
        for variant in variants {
            let parsed = try RecoveryCode(parsing: SecureBytes(copying: Array(variant.utf8)))
            #expect(parsed.secret.constantTimeEquals(code.secret), "\(variant)")
        }
        #expect(RecoveryCode.bitCount >= 128)
    }

    @Test func test_recoveryCode_readsTheDashesAndSpacesOfACopiedDocument() throws {
        let code = RecoveryCode.generate()
        let text = code.formatted()
        // A hyphen, an en dash, an em dash, a minus sign, a no-break space and a narrow one.
        for separator in ["\u{2010}", "\u{2013}", "\u{2014}", "\u{2212}", "\u{00A0}", "\u{202F}"] {
            let variant = text.replacingOccurrences(of: "-", with: separator)
            let parsed = try RecoveryCode(parsing: SecureBytes(copying: Array(variant.utf8)))
            #expect(parsed.secret.constantTimeEquals(code.secret), "separator \(separator.unicodeScalars.first!.value)")
        }
        // Other non-ASCII characters stay refused, and a separator cut short is not one.
        for bad in [text + "\u{2016}", text + "\u{00E9}", text + "\u{E2}"] {
            #expect(throws: VaultError.self) { try RecoveryCode(parsing: SecureBytes(copying: Array(bad.utf8))) }
        }
        #expect(throws: VaultError.self) { try RecoveryCode(parsing: SecureBytes(copying: Array(text.utf8) + [0xE2, 0x80])) }
    }

    @Test func test_recoveryCode_catchesEveryMistypedCharacterAndSwap() {
        let text = Array(RecoveryCode.generate().formatted().replacingOccurrences(of: "-", with: "").utf8)
        func refused(_ bytes: [UInt8]) -> Bool { (try? RecoveryCode(parsing: SecureBytes(copying: bytes))) == nil }
        for index in text.indices {
            for replacement in RecoveryCode.alphabet where replacement != text[index] {
                var changed = text
                changed[index] = replacement
                #expect(refused(changed), "character \(index)")
            }
            if index + 1 < text.count, text[index] != text[index + 1] {
                var swapped = text
                swapped.swapAt(index, index + 1)
                #expect(refused(swapped), "swap at \(index)")
            }
        }
        // Two groups exchanged.
        var moved = text
        moved.replaceSubrange(0..<5, with: text[5..<10])
        moved.replaceSubrange(5..<10, with: text[0..<5])
        if text[0..<5] != text[5..<10] { #expect(refused(moved)) }
    }

    @Test func test_recoveryCode_errorsNameTheGroupNeverTheText() {
        var text = Array(RecoveryCode.generate().formatted().utf8)
        text[13] = text[13] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect { try RecoveryCode(parsing: SecureBytes(copying: text)) } throws: { error in
            let message = (error as? VaultError)?.description ?? ""
            return message.contains("group 3") && !message.contains(String(decoding: text[12..<17], as: UTF8.self))
        }
        #expect(throws: VaultError.self) { _ = try RecoveryCode(parsing: SecureBytes(copying: Array("ABCDE-U".utf8))) }
        #expect(throws: VaultError.self) { _ = try RecoveryCode(parsing: SecureBytes(copying: Array("ABCDE".utf8))) }
    }

    // MARK: - Keyfile

    @Test func test_keyfile_generatedFilesAreRecognisedAndOthersNot() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(Keyfile.generate()).write(to: folder.url.appendingPathComponent("made"))
        try Data(randomBytes(count: 64)).write(to: folder.url.appendingPathComponent("random"))
        #expect(try Keyfile.isGenerated(path: folder.path("made")))
        #expect(try !Keyfile.isGenerated(path: folder.path("random")))
    }

    @Test func test_keyfile_secretDependsOnSaltAndEveryByte() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var bytes = randomBytes(count: 200_000)
        try Data(bytes).write(to: folder.url.appendingPathComponent("k"))
        let salt = randomBytes(count: 32)
        let first = try Keyfile.slotSecret(path: folder.path("k"), salt: salt)
        #expect(try Keyfile.slotSecret(path: folder.path("k"), salt: salt).constantTimeEquals(first))
        #expect(try !Keyfile.slotSecret(path: folder.path("k"), salt: randomBytes(count: 32)).constantTimeEquals(first))
        bytes[199_999] ^= 1
        try Data(bytes).write(to: folder.url.appendingPathComponent("k"))
        #expect(try !Keyfile.slotSecret(path: folder.path("k"), salt: salt).constantTimeEquals(first))
    }

    @Test func test_keyfile_refusesShortFilesDirectoriesAndPipes() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(randomBytes(count: 31)).write(to: folder.url.appendingPathComponent("short"))
        #expect(throws: VaultError.self) { _ = try Keyfile.slotSecret(path: folder.path("short"), salt: randomBytes(count: 32)) }
        #expect(throws: VaultError.self) { _ = try Keyfile.slotSecret(path: folder.path(""), salt: randomBytes(count: 32)) }
        #expect(throws: VaultError.self) { _ = try Keyfile.slotSecret(path: folder.path("missing"), salt: randomBytes(count: 32)) }
        #expect(mkfifo(folder.path("fifo"), 0o600) == 0)
        #expect(throws: VaultError.self) { _ = try Keyfile.slotSecret(path: folder.path("fifo"), salt: randomBytes(count: 32)) }
    }
}

// MARK: - OpenSSH keys made by hand

/// Builds OpenSSH private key files, correct or wrong in one chosen way.
struct OpenSSHKeyBuilder {
    /// RFC 8032 §7.1 test 1's seed.
    static let rfc8032Seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")

    var seed: [UInt8] = rfc8032Seed
    var cipher = "none"
    var checkInts: (UInt32, UInt32) = (0x1234_5678, 0x1234_5678)
    var otherPublicInPrivate = false
    var wrongSeed = false
    var padding: [UInt8]? = nil
    /// The right length of padding, with its last byte wrong (8 bytes when none is needed).
    var wrongPadding = false
    var keyCount: UInt32 = 1
    var keyType = "ssh-ed25519"

    func blob() -> [UInt8] {
        let publicKey = Ed25519.publicKey(fromSeed: SecureBytes(copying: seed))!
        let publicWire = sshString(Array(keyType.utf8)) + sshString(publicKey)
        var inner: [UInt8] = bigEndian(checkInts.0)
        inner += bigEndian(checkInts.1)
        inner += sshString(Array(keyType.utf8))
        inner += sshString(otherPublicInPrivate ? [UInt8](repeating: 7, count: 32) : publicKey)
        let secretSeed: [UInt8] = wrongSeed ? [UInt8](repeating: 1, count: 32) : seed
        inner += sshString(secretSeed + publicKey)
        inner += sshString(Array("test@host".utf8))
        var standardPadding: [UInt8] = Array([UInt8](1...8).prefix((8 - inner.count % 8) % 8))
        if wrongPadding { standardPadding = standardPadding.isEmpty ? [1, 2, 3, 4, 5, 6, 7, 9] : standardPadding.dropLast() + [0xFF] }
        inner += padding ?? standardPadding
        var blob: [UInt8] = Array("openssh-key-v1".utf8) + [0]
        blob += sshString(Array(cipher.utf8))
        blob += sshString(Array((cipher == "none" ? "none" : "bcrypt").utf8))
        blob += sshString([])
        blob += bigEndian(keyCount)
        blob += sshString(publicWire)
        blob += sshString(inner)
        return blob
    }

    func pem() -> [UInt8] { Self.armor(blob()) }

    static func armor(_ blob: [UInt8]) -> [UInt8] {
        let body = Data(blob).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return Array(("-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "\n-----END OPENSSH PRIVATE KEY-----\n").utf8)
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
}
