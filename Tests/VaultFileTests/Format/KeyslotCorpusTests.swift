import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// Hostile format-1.1 headers for `Fixtures/damaged/` (their expectations are checked with the
/// rest of the corpus by `DamagedCorpusTests` and `DamagedCorpusCLITests`), and the 1.1 parsers
/// against arbitrary bytes.
///
/// `VAULTFILE_WRITE_DAMAGED_KEYSLOTS=1 swift test --filter KeyslotCorpusTests` appends these cases
/// to the corpus once: it refuses to overwrite a file and leaves every existing case as it is.
@Suite struct KeyslotCorpusTests {
    /// The identity of C2SP's age specification: public, so the corpus's recipient slots can be tried by anyone.
    static let corpusIdentity = AgeKeyTests.specIdentity

    // MARK: - Parsers on arbitrary bytes

    @Test func test_parsers_neverCrashOnMutationsOfValidInput() throws {
        var generator = SplitMix(seed: 11)
        let seeds: [[UInt8]] = [Array(AgeKeyTests.specIdentity.utf8), Array(AgeKeyTests.specRecipient.utf8), OpenSSHKeyBuilder().pem(),
                                Array(RecoveryCode.generate().formatted().utf8)]
        for seed in seeds {
            for _ in 0..<300 {
                var bytes = seed
                for _ in 0..<(1 + Int(generator.nextByte() % 4)) {
                    let index = Int(generator.nextByte()) * bytes.count / 256
                    bytes[index] = generator.nextByte()
                }
                let text = String(decoding: bytes, as: UTF8.self)
                _ = try? Bech32.decode(text)
                _ = try? AgeIdentityFile.parse(bytes, source: "f")
                _ = try? AgeRecipient(parsing: text)
                _ = try? SSHEd25519Identity.parse(bytes, source: "f")
                _ = try? SSHEd25519PublicKey(parsing: text)
                _ = try? RecoveryCode(parsing: SecureBytes(copying: bytes))
            }
        }
    }

    // MARK: - Hostile key files (Fixtures/damaged/keys)

    /// One hostile key file of `Fixtures/damaged/keys/manifest.json` (KeyCorpusCLITests reads it;
    /// RSACorpusTests, SSHKeyHostileTests and ProtectedKeyCorpusTests append to it): how the CLI is
    /// given it, and what it must say.
    struct KeyCase: Codable {
        var file: String
        /// `identity` (--identity FILE), `recipients` (slot add recipients-file FILE), `recovery`
        /// (--recovery-file FILE) or `ssh-key` (an entry's ssh key).
        var use: String
        var description: String
        var expectStatus: Int32
        var expectMessage: String

        /// The cases of the manifest at `url`.
        static func read(_ url: URL) throws -> [KeyCase] {
            try JSONDecoder().decode([KeyCase].self, from: Data(contentsOf: url))
        }

        /// Writes `cases` as the manifest at `url` (pretty, keys sorted, as committed).
        static func write(_ cases: [KeyCase], to url: URL) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(cases).write(to: url)
        }
    }

    /// Every writer of the key corpus appends through `KeyCase`: what it reads it writes back byte for byte.
    @Test func test_keyCase_manifestIsWrittenBackAsCommitted() throws {
        let manifest = ProjectPaths.fixtures.appendingPathComponent("damaged/keys/manifest.json")
        let cases = try KeyCase.read(manifest)
        #expect(cases.count > 20 && Set(cases.map(\.use)) == ["identity", "recipients", "recovery", "ssh-key"], "\(Set(cases.map(\.use)))")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("key-manifest-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        defer { try? FileManager.default.removeItem(at: copy) }
        try KeyCase.write(cases, to: copy)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: manifest))
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_KEYS"] == "1"))
    func test_writeCorpus_keyFiles() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("damaged/keys")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var cases: [KeyCase] = []
        func add(_ file: String, _ use: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            cases.append(KeyCase(file: file, use: use, description: description, expectStatus: status, expectMessage: message))
        }
        func text(_ string: String) -> [UInt8] { Array(string.utf8) }
        let spec = AgeKeyTests.specIdentity, recipient = AgeKeyTests.specRecipient
        var broken = Array(spec.utf8)
        broken[40] = broken[40] == UInt8(ascii: "Q") ? UInt8(ascii: "P") : UInt8(ascii: "Q")

        try add("identity-ok-no-slot.txt", "identity", "a valid identity (C2SP's) that the corpus vault has no slot for", 3, "no keyslot of the vault opens with --identity", text("# c2sp.org/age\n\(spec)\n"))
        try add("identity-comments-only.txt", "identity", "comments and blank lines, no identity", 2, "holds no identity", text("# created: never\n\n   \n"))
        try add("identity-bad-checksum.txt", "identity", "one character changed", 2, "fails its checksum", broken + [0x0A])
        try add("identity-lower-case.txt", "identity", "the identity in lower case (age refuses it)", 2, "upper case", text(spec.lowercased() + "\n"))
        try add("identity-mixed-case.txt", "identity", "upper and lower case mixed", 2, "mixes upper and lower case", text(String(spec.prefix(20)) + spec.dropFirst(20).lowercased() + "\n"))
        try add("identity-plugin.txt", "identity", "an age plugin identity whose Bech32 checksum fails (plugin identities are read since issue 41)", 2,
                "the age plugin identity is not valid Bech32", text("AGE-PLUGIN-YUBIKEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQ\n"))
        try add("identity-31-bytes.txt", "identity", "a valid Bech32 identity of 31 bytes", 2, "holds 31 bytes",
                text(Bech32.encode(humanReadablePart: "AGE-SECRET-KEY-", data: [UInt8](repeating: 9, count: 31), upperCase: true) + "\n"))
        try add("identity-too-long.txt", "identity", "a Bech32 identity of 93 characters (BIP 173 allows 90)", 2, "longer than 90",
                text(Bech32.encode(humanReadablePart: "AGE-SECRET-KEY-", data: [UInt8](repeating: 9, count: 44), upperCase: true) + "\n"))
        try add("identity-is-a-recipient.txt", "identity", "a recipient where an identity belongs", 2, "not an age identity", text(recipient + "\n"))
        try add("identity-binary.txt", "identity", "bytes that are not UTF-8", 2, "not UTF-8", [0xFF, 0xFE, 0x41, 0x0A])
        let ssh: [(String, String, String, OpenSSHKeyBuilder)] = [
            ("ssh-encrypted.key", "an encrypted OpenSSH key", "encrypted", OpenSSHKeyBuilder(cipher: "aes256-ctr")),
            ("ssh-check-integers.key", "check integers that differ", "check integers differ", OpenSSHKeyBuilder(checkInts: (1, 2))),
            ("ssh-public-halves-differ.key", "a private section with another public key", "public half differs", OpenSSHKeyBuilder(otherPublicInPrivate: true)),
            ("ssh-wrong-seed.key", "a seed that does not derive the public key", "does not derive its public key", OpenSSHKeyBuilder(wrongSeed: true)),
            ("ssh-bad-padding.key", "padding that does not count 01 02 03 …", "padding", OpenSSHKeyBuilder(wrongPadding: true)),
            ("ssh-two-keys.key", "a file of two keys", "holds 2 keys", OpenSSHKeyBuilder(keyCount: 2)),
            ("ssh-rsa.key", "an ssh-rsa key", "not an ssh-ed25519 key", OpenSSHKeyBuilder(keyType: "ssh-rsa")),
        ]
        for (file, description, message, builder) in ssh { try add(file, "identity", description, 2, message, builder.pem()) }
        let blob = OpenSSHKeyBuilder().blob()
        try add("ssh-truncated.key", "identity", "an OpenSSH key cut after 100 bytes", 2, "truncated", OpenSSHKeyBuilder.armor(Array(blob.prefix(100))))
        try add("ssh-bad-base64.key", "identity", "an OpenSSH armour around bytes that are not base64", 2, "not valid base64",
                text("-----BEGIN OPENSSH PRIVATE KEY-----\n!!!!\n-----END OPENSSH PRIVATE KEY-----\n"))
        var otherRecipient = Array(recipient.utf8)
        otherRecipient[30] = otherRecipient[30] == UInt8(ascii: "q") ? UInt8(ascii: "p") : UInt8(ascii: "q")
        try add("recipients-bad-checksum.txt", "recipients", "a recipient with one character changed", 2, "fails its checksum", otherRecipient + [0x0A])
        try add("recipients-upper-case.txt", "recipients", "a recipient in upper case", 2, "lower case", text(recipient.uppercased() + "\n"))
        try add("recipients-ssh-rsa.txt", "recipients", "an ssh-rsa key", 2, "keys are not supported", text("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ me@host\n"))
        let invalidPoint = base64Encode(sshString(Array("ssh-ed25519".utf8)) + sshString([1] + [UInt8](repeating: 0, count: 31)))
        try add("recipients-ssh-small-order.txt", "recipients", "an ssh-ed25519 key of small order", 2, "not a valid Ed25519 public key", text("ssh-ed25519 \(invalidPoint) x\n"))
        try add("recipients-empty.txt", "recipients", "comments only", 2, "holds no recipient", text("# nobody\n"))
        var code = Array(RecoveryCode.generate().formatted().utf8)
        code[13] = code[13] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try add("recovery-group-3-mistyped.txt", "recovery", "a recovery code with one character of group 3 changed", 2, "group 3 of the recovery code is mistyped", code + [0x0A])
        try add("recovery-short.txt", "recovery", "six groups", 2, "has 30 characters", Array(code.prefix(35)) + [0x0A])
        try add("recovery-letter-u.txt", "recovery", "a U, which Crockford's alphabet lacks", 2, "not in its alphabet", text("UUUUU-" + String(decoding: code.dropFirst(6), as: UTF8.self)))
        try KeyCase.write(cases, to: folder.appendingPathComponent("manifest.json"))
    }

    // MARK: - Writing the cases (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_KEYSLOTS"] == "1"))
    func test_writeCorpus_keyslots() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("damaged")
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(DamagedCorpusTests.Manifest.self, from: Data(contentsOf: manifestURL))
        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            precondition(!manifest.cases.contains { $0.file == file })
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            manifest.cases.append(.init(file: file, description: description, expectStatus: status, expectMessage: message))
        }
        let forge = try Forge()
        let kslots = try KeyslotForge(forge: forge)
        let base = forge.base, H = forge.headerLength
        let damaged = "header is damaged", unsupported = "which this vaultfile cannot read", wrong = "wrong password", tampered = "fails authentication"

        try add("keyslots-1.1-ok.vault", "format 1.1: a password slot and a recipient slot (the C2SP spec's identity), metadata block", 0, "", kslots.base)
        try add("keyslots-1.1-v1-slot-ok.vault", "format 1.1 keeping a v1 password slot beside a recipient slot", 0, "",
                try kslots.reseal(slots: [.password(try VaultCodec.makePasswordSlot(password: VaultFileTests.password(DamagedCorpusTests.password),
                                                                                      kdf: DamagedCorpusTests.kdf, fileKey: kslots.unlocked.fileKey,
                                                                                      vaultID: kslots.header.vaultID)),
                                          kslots.header.keyslots[1]], metadata: [
                    SlotMetadata(type: 1, label: "", publicKey: [], added: 0), kslots.metadata[1]]))
        try add("keyslots-1.1-unknown-type-9-ok.vault", "format 1.1 with a slot of unknown type 9 (and its metadata entry): skipped", 0, "",
                try kslots.reseal(slots: kslots.header.keyslots + [.unknown(type: 9, body: [1, 2, 3])],
                                  metadata: kslots.metadata + [SlotMetadata(type: 9, label: "future", publicKey: [], added: 0)]))
        try add("flags-2-no-metadata.vault", "flag 0x02 (keyslots 1.1) on a 1.0 header without a metadata block, checksum recomputed", 4, damaged,
                forge.fixed(forge.patch(base, 37, [2])))
        try add("flags-4.vault", "flag 0x04, reserved for entry history", 4, unsupported, forge.fixed(forge.patch(base, 37, [4])))
        try add("flags-6.vault", "flags 0x06: keyslots 1.1 and the reserved history bit", 4, unsupported, forge.fixed(forge.patch(kslots.base, 37, [6])))
        try add("keyslots-1.1-type-4-without-flag.vault", "a 1.1 password slot (type 4) in a 1.0 header: unknown there, nothing opens", 4, unsupported,
                try forge.reseal { $0.keyslots = [kslots.header.keyslots[0]] })
        let metadataOffset = kslots.headerLength - 64 - kslots.header.metadata!.sealed.count - 24 - 2
        try add("keyslots-1.1-metadata-length-300.vault", "a metadata length that is not 16 more than a multiple of 256", 4, damaged,
                forge.fixed(forge.patch(kslots.base, metadataOffset, [0x2C, 0x01])))
        try add("keyslots-1.1-metadata-forged.vault", "one byte of the metadata changed, checksum recomputed", 4, tampered,
                forge.fixed(forge.patch(kslots.base, metadataOffset + 40, [kslots.base[metadataOffset + 40] ^ 1])))
        try add("keyslots-1.1-metadata-swapped.vault", "metadata entries in the wrong order, sealed with the key", 4, "keyslot metadata",
                try kslots.reseal(rawMetadata: MetadataBlock.encode(Array(kslots.metadata.reversed()), slots: Array(kslots.header.keyslots.reversed()))))
        try add("keyslots-1.1-metadata-one-entry.vault", "one metadata entry for two slots, sealed with the key", 4, "keyslot metadata",
                try kslots.reseal(rawMetadata: MetadataBlock.encode([kslots.metadata[0]], slots: [kslots.header.keyslots[0]])))
        var padded = MetadataBlock.encode(kslots.metadata, slots: kslots.header.keyslots)
        padded[padded.count - 1] = 1
        try add("keyslots-1.1-metadata-nonzero-padding.vault", "a non-zero metadata padding byte, sealed with the key", 4, "keyslot metadata",
                try kslots.reseal(rawMetadata: padded))
        var badLabel = kslots.metadata
        badLabel[0].label = "evil\u{1B}[2J"
        try add("keyslots-1.1-label-control-character.vault", "a label with an escape sequence, sealed with the key", 4, "invalid label",
                try kslots.reseal(rawMetadata: MetadataBlock.encode(badLabel, slots: kslots.header.keyslots)))
        var otherKey = kslots.metadata
        otherKey[0].publicKey = Array(repeating: 9, count: 32)
        try add("keyslots-1.1-password-key-mismatch.vault", "the password slot's public key in the metadata is another key, sealed with the key", 4,
                "does not match the key its secret derives", try kslots.reseal(slots: kslots.header.keyslots, metadata: otherKey))
        guard case .x25519(let passwordSlot) = kslots.header.keyslots[0], case .x25519(let recipientSlot) = kslots.header.keyslots[1] else { fatalError() }
        var zeroShare = passwordSlot
        zeroShare.ephemeralShare = [UInt8](repeating: 0, count: 32)
        try add("keyslots-1.1-ephemeral-zero.vault", "the password slot's ephemeral share is the zero point, sealed with the key", 3, wrong,
                try kslots.reseal(slots: [.x25519(zeroShare), kslots.header.keyslots[1]], metadata: kslots.metadata))
        let wrappedOffset = kslots.slotOffsets[0] + 3 + passwordSlot.body().count - 20
        try add("keyslots-1.1-wrapped-key-forged.vault", "the password slot's wrapped key changed, checksum recomputed", 3, wrong,
                forge.fixed(forge.patch(kslots.base, wrappedOffset, [kslots.base[wrappedOffset] ^ 0x40])))
        try add("keyslots-1.1-recipient-body-79.vault", "a recipient slot body of 79 bytes", 4, damaged,
                kslots.rawSlots([kslots.slotBytes(0), [3, 79, 0] + recipientSlot.body().prefix(79)]))
        try add("keyslots-1.1-recipient-body-81.vault", "a recipient slot body of 81 bytes", 4, damaged,
                kslots.rawSlots([kslots.slotBytes(0), [3, 81, 0] + recipientSlot.body() + [0]]))
        let body = passwordSlot.body()
        try add("keyslots-1.1-password-kdf-id-9.vault", "a 1.1 password slot with KDF id 9", 4, unsupported,
                kslots.rawSlots([[4, UInt8(body.count), 0, 9] + body.dropFirst(), kslots.slotBytes(1)]))
        try add("keyslots-1.1-password-too-short.vault", "a 1.1 password slot of 96 bytes (no KDF parameters)", 4, damaged,
                kslots.rawSlots([[4, 96, 0] + body.suffix(96), kslots.slotBytes(1)]))
        try add("keyslots-1.1-only-recipient.vault", "only a recipient slot: the password opens nothing", 3, wrong,
                try kslots.reseal(slots: [kslots.header.keyslots[1]], metadata: [kslots.metadata[1]]))
        _ = H

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: manifestURL)
    }
}

// MARK: - Forging format-1.1 vaults with the key

/// The corpus's 1.1 vault (the canary entries under the corpus password and the spec identity)
/// and ways to make it wrong in one way.
struct KeyslotForge {
    let forge: Forge
    let unlocked: UnlockedVault
    let base: [UInt8]
    let headerLength: Int
    var header: VaultHeader { unlocked.header }
    var metadata: [SlotMetadata] { unlocked.slotMetadata! }

    init(forge: Forge) throws {
        self.forge = forge
        let identity = try AgeIdentity(parsing: KeyslotCorpusTests.corpusIdentity)
        let created = try VaultCodec.create(forge.vault, slots: [
            (.password(VaultFileTests.password(DamagedCorpusTests.password), DamagedCorpusTests.kdf), "admin"), (.recipient(identity.recipient), "spec"),
        ], now: 1_764_000_000_000)
        base = try created.seal()
        unlocked = created
        headerLength = try VaultHeader.parse(base, path: "base").length
    }

    /// Offsets of each keyslot in `base`.
    var slotOffsets: [Int] {
        var offsets: [Int] = [], offset = 63
        for slot in header.keyslots { offsets.append(offset); offset += slot.encoded().count }
        return offsets
    }

    func slotBytes(_ index: Int) -> [UInt8] { header.keyslots[index].encoded() }

    /// The base with `slots` and `metadata` (sealed properly), MAC and checksum recomputed; payload kept.
    func reseal(slots: [Keyslot], metadata: [SlotMetadata]) throws -> [UInt8] {
        var next = header
        next.keyslots = slots
        next.metadata = try MetadataBlock.sealChecked(metadata, for: next, fileKey: unlocked.fileKey)
        next.mac = VaultCodec.headerMAC(next, fileKey: unlocked.fileKey)
        return next.encoded() + Array(base[headerLength...])
    }

    /// The base with the metadata plaintext replaced by `rawMetadata`, sealed with the key.
    func reseal(rawMetadata: [UInt8]) throws -> [UInt8] {
        var next = header
        next.metadata = MetadataBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: rawMetadata.count + 16))
        let nonce = randomBytes(count: 24)
        let key = Subkey.derive(from: unlocked.fileKey, MetadataBlock.subkey)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(rawMetadata, key: $0, nonce: nonce, associatedData: next.metadataAssociatedData()) }
        next.metadata = MetadataBlock(nonce: nonce, sealed: sealed)
        next.mac = VaultCodec.headerMAC(next, fileKey: unlocked.fileKey)
        return next.encoded() + Array(base[headerLength...])
    }

    /// The base with raw keyslot bytes and the base's metadata block; length and checksum fixed, MAC stale.
    func rawSlots(_ slots: [[UInt8]]) -> [UInt8] {
        let metadata = header.metadata!
        var bytes = Array(base[0..<62]) + [UInt8(slots.count)] + slots.flatMap { $0 }
        bytes += [UInt8(metadata.sealed.count & 0xFF), UInt8(metadata.sealed.count >> 8)] + metadata.nonce + metadata.sealed
        let length = bytes.count + 64
        bytes.replaceSubrange(10..<12, with: [UInt8(length & 0xFF), UInt8(length >> 8)])
        bytes += header.mac + [UInt8](repeating: 0, count: 32)
        fixChecksum(&bytes)
        return bytes + Array(base[headerLength...])
    }
}
