import CSodium
import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The damaged and hostile vault corpus in `Fixtures/damaged/`: one small file per case,
/// with its expected exit status and message in `manifest.json`.
///
/// `VAULTFILE_WRITE_DAMAGED=1 swift test --filter DamagedCorpusTests` writes the corpus
/// (once; cases are added, never changed). The CLI suite checks every case's exit status and
/// message through the CLI's own code in-process, and a few of each status through the binary.
@Suite struct DamagedCorpusTests {
    /// The manifest's types, shared with the CLI suite (Tests/TestSupport/Manifests.swift).
    typealias Case = DamagedCorpus.Case
    typealias Manifest = DamagedCorpus.Manifest

    static let password = "damaged-corpus"
    static let canaryName = "canary/secret"
    static let canaryValue = "PLAINTEXT-CANARY-7d1e"
    static let kdf = KDFParameters.argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))

    /// The manifest's exit statuses (the CLI's, see man/vaultfile.1) of the categories a damaged vault yields.
    /// The CLI suite checks the statuses themselves, with the CLI's own `ErrorReport`.
    static let statusOfCategory: [ErrorCategory: Int32] = [.wrongPassword: 3, .damaged: 4, .unsupported: 4, .overLimit: 6]

    // MARK: - Library check of the committed corpus

    @Test func test_corpus_libraryAgreesWithTheManifest() throws {
        let manifest = try #require(DamagedCorpus.manifest, "Fixtures/damaged/manifest.json is missing or unreadable")
        #expect(manifest.cases.count >= 60)
        for item in manifest.cases {
            let bytes = try DamagedCorpus.bytes(of: item)
            // Opening reads what `get` reads; the history check after it is what `verify` adds.
            var opened: UnlockedVault
            do {
                opened = try VaultCodec.open(bytes, path: item.file, password: VaultFileTests.password(manifest.password), limits: .defaults)
                #expect(item.statusOfGet == 0, "\(item.file) opened but should fail: \(item.description)")
                #expect(opened.vault.entry(manifest.canaryName)?.value == Array(manifest.canaryValue.utf8))
            } catch let error as any CategorizedError {
                #expect(Self.statusOfCategory[error.category] == item.statusOfGet, "\(item.file): \(error.category): \(error.description)")
                #expect(error.description.contains(item.expectMessage), "\(item.file): '\(error.description)' lacks '\(item.expectMessage)'")
                #expect(!error.description.contains(manifest.canaryValue))
                continue
            }
            do {
                try opened.vault.checkHistory()
                #expect(item.expectStatus == 0, "\(item.file): the history check passed but should fail: \(item.description)")
            } catch {
                #expect(Self.statusOfCategory[error.category] == item.expectStatus, "\(item.file): \(error.category): \(error.description)")
                #expect(error.description.contains(item.expectMessage), "\(item.file): '\(error.description)' lacks '\(item.expectMessage)'")
                #expect(!error.description.contains(manifest.canaryValue))
            }
        }
    }

    // MARK: - Writing the corpus (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED"] == "1"))
    func test_writeCorpus() throws {
        let folder = DamagedCorpus.folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var cases: [Case] = []
        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            cases.append(Case(file: file, description: description, expectStatus: status, expectMessage: message))
        }
        let forge = try Forge()
        let base = forge.base, H = forge.headerLength
        let notAVault = "is not a vaultfile vault", headerDamaged = "header is damaged", unsupported = "which this vaultfile cannot read"
        let wrong = "wrong password", tampered = "fails authentication", chunk = "damaged at chunk", contents = "contents are malformed"

        // Control cases: these must open.
        try add("ok-base.vault", "the intact base vault", 0, "", base)
        try add("ok-multichunk.vault", "an intact vault of three payload chunks", 0, "", forge.multichunk)

        // Magic and versions.
        try add("empty.vault", "an empty file", 4, notAVault, [])
        try add("one-byte.vault", "only the first magic byte", 4, notAVault, [0x89])
        try add("magic-only.vault", "the magic and nothing else", 4, headerDamaged, Array(base[0..<8]))
        try add("magic-bad-first-byte.vault", "magic with its high byte cleared (7-bit transfer)", 4, notAVault, forge.patch(base, 0, [0x09]))
        try add("magic-crlf-to-lf.vault", "CR LF in the magic turned into LF (text-mode transfer)", 4, notAVault, Array(base[0..<6]) + [0x0A] + Array(base[8...]))
        try add("text-file.vault", "a text file", 4, notAVault, Array("password=hunter2\n".utf8))
        try add("major-0.vault", "major version 0", 4, "format version 0.0", forge.patch(base, 8, [0]))
        try add("major-2.vault", "major version 2, from the future", 4, "format version 2.0", forge.patch(base, 8, [2]))
        try add("major-255.vault", "major version 255", 4, "format version 255.0", forge.patch(base, 8, [255]))
        try add("minor-1-ok.vault", "minor version 1, authentic: readers accept any minor", 0, "", try forge.reseal { $0.minorVersion = 1 })
        try add("minor-255-ok.vault", "minor version 255, authentic", 0, "", try forge.reseal { $0.minorVersion = 255 })
        try add("minor-changed-no-checksum.vault", "minor version changed without fixing the checksum", 4, "checksum", forge.patch(base, 9, [1]))

        // Header length.
        for (name, value) in [("0", 0), ("126-below-minimum", 126), ("65535", 65_535), ("plus-1", H + 1), ("minus-1", H - 1)] {
            let patched = forge.patch(base, 10, [UInt8(value & 0xFF), UInt8(value >> 8)])
            try add("header-length-\(name).vault", "header length \(value) (real: \(H))", 4, headerDamaged, patched)
        }

        // Vault id and generation.
        try add("vault-id-zero-forged.vault", "vault id zeroed, checksum recomputed: the keyslot is bound to the id", 3, wrong,
                forge.fixed(forge.patch(base, 12, [UInt8](repeating: 0, count: 16))))
        try add("generation-0-ok.vault", "generation 0, authentic", 0, "", try forge.reseal { $0.generation = 0 })
        try add("generation-max-ok.vault", "generation 2^64-1, authentic", 0, "", try forge.reseal { $0.generation = .max })
        try add("generation-forged.vault", "generation raised, checksum recomputed, no key for the MAC", 4, tampered,
                forge.fixed(forge.patch(base, 28, [0xFF])))

        // Cipher and flags.
        for value: UInt8 in [0, 2, 255] {
            try add("cipher-\(value).vault", "payload cipher id \(value)", 4, unsupported, forge.fixed(forge.patch(base, 36, [value])))
        }
        for value: UInt8 in [1, 0x80, 0xFF] {
            try add("flags-\(value).vault", "must-understand flags 0x\(String(value, radix: 16))", 4, unsupported, forge.fixed(forge.patch(base, 37, [value])))
        }

        // Stream header.
        try add("stream-header-zero-authentic.vault", "stream header zeroed by a key holder: the payload no longer matches", 4, "damaged at chunk 0",
                try forge.reseal { $0.streamHeader = [UInt8](repeating: 0, count: 24) })
        try add("stream-header-forged.vault", "stream header changed, checksum recomputed", 4, tampered, forge.fixed(forge.patch(base, 40, [0x55])))

        // Keyslot count and slots.
        for value: UInt8 in [0, 2, 17, 255] {
            try add("slot-count-\(value).vault", "keyslot count \(value) with one slot present", 4, headerDamaged, forge.fixed(forge.patch(base, 62, [value])))
        }
        try add("slots-duplicated-ok.vault", "the same password slot twice, authentic", 0, "", try forge.reseal { $0.keyslots += $0.keyslots })
        try add("slots-unknown-type-first-ok.vault", "an unknown slot type before the password slot, authentic: skipped", 0, "",
                try forge.reseal { $0.keyslots.insert(.unknown(type: 9, body: [1, 2, 3]), at: 0) })
        try add("slots-only-unknown.vault", "only a keyfile slot (type 2), which v1.0 cannot open", 4, unsupported,
                try forge.reseal { $0.keyslots = [.unknown(type: 2, body: [UInt8](repeating: 7, count: 40))] })
        try add("slots-17-forged.vault", "17 keyslots, checksum recomputed", 4, headerDamaged,
                forge.rawHeader(slots: [UInt8](repeating: 0, count: 17).map { _ in forge.slotBytes }, count: 17))
        try add("slot-type-0.vault", "keyslot type 0", 4, headerDamaged, forge.fixed(forge.patch(base, 63, [0])))
        for (name, value) in [("0", 0), ("65535", 65_535), ("plus-1", forge.slotBytes.count - 3 + 1), ("minus-1", forge.slotBytes.count - 3 - 1)] {
            try add("slot-length-\(name).vault", "keyslot body length \(value)", 4, headerDamaged,
                    forge.fixed(forge.patch(base, 64, [UInt8(value & 0xFF), UInt8(value >> 8)])))
        }

        // KDF parameters (checksum recomputed; an attacker's edits).
        try add("kdf-id-0.vault", "KDF id 0", 4, headerDamaged, forge.fixed(forge.patch(base, 66, [0])))
        try add("kdf-id-3.vault", "KDF id 3, unknown", 4, unsupported, forge.fixed(forge.patch(base, 66, [3])))
        let argon: [(String, Int, UInt32, Int32, String)] = [
            ("memory-0", 67, 0, 4, headerDamaged), ("memory-7", 67, 7, 4, headerDamaged),
            ("memory-over-64g", 67, UInt32.max, 4, headerDamaged),
            ("memory-4g-over-cap", 67, 4 << 20, 6, "of memory to unlock; the limit is"),
            ("iterations-0", 71, 0, 4, headerDamaged), ("iterations-4097", 71, 4_097, 4, headerDamaged),
            ("iterations-4096-forged", 71, 4_096, 3, wrong),
            ("parallelism-0", 75, 0, 4, headerDamaged), ("parallelism-65", 75, 65, 4, headerDamaged),
            ("parallelism-2-below-8k-per-lane", 75, 2, 4, headerDamaged),
            ("iterations-2-forged", 71, 2, 3, wrong),
        ]
        for (name, offset, value, status, message) in argon {
            try add("kdf-argon2id-\(name).vault", "Argon2id \(name.replacingOccurrences(of: "-", with: " "))", status, message,
                    forge.fixed(forge.patch(base, offset, value.littleEndianBytes)))
        }
        // Work over the cap: 16 MiB × 4096 passes = 64 GiB·passes > 32 GiB.
        var overWork = forge.patch(base, 67, UInt32(16 * 1024).littleEndianBytes)
        overWork = forge.fixed(forge.patch(overWork, 71, UInt32(4_096).littleEndianBytes))
        try add("kdf-argon2id-work-over-cap.vault", "Argon2id 16 MiB × 4096 passes, over the work cap", 6, "of Argon2id work", overWork)
        for (name, iterations, status, message) in [("0", UInt32(0), Int32(4), headerDamaged), ("1e9-over-cap", 1_000_000_000, 6, "PBKDF2 iterations"),
                                                   ("1e9-plus-1", 1_000_000_001, 4, headerDamaged)] {
            try add("kdf-pbkdf2-\(name).vault", "PBKDF2 with \(iterations) iterations", status, message,
                    forge.rawHeader(slots: [forge.slot(kdfEncoding: [2] + iterations.littleEndianBytes)], count: 1))
        }

        // Salt, nonce, wrapped key, MAC, checksum.
        try add("salt-forged.vault", "salt changed, checksum recomputed", 3, wrong, forge.fixed(forge.patch(base, 80, [0xAA])))
        try add("nonce-forged.vault", "wrap nonce changed, checksum recomputed", 3, wrong, forge.fixed(forge.patch(base, 100, [0xAA])))
        try add("wrapped-key-forged.vault", "wrapped key changed, checksum recomputed", 3, wrong, forge.fixed(forge.patch(base, 130, [0xAA])))
        try add("mac-forged.vault", "header MAC changed, checksum recomputed", 4, tampered, forge.fixed(forge.patch(base, H - 50, [0xAA])))
        try add("checksum-flipped.vault", "one checksum bit flipped", 4, "checksum", forge.patch(base, H - 1, [base[H - 1] ^ 1]))

        // Truncation at each structural boundary.
        for (name, length) in [("in-length", 11), ("after-length", 12), ("after-id", 28), ("after-generation", 36), ("after-stream-header", 62),
                               ("after-slot-count", 63), ("after-slot-type", 64), ("in-kdf", 70), ("after-kdf", 79), ("after-salt", 95),
                               ("after-nonce", 119), ("after-wrapped-key", H - 64), ("after-mac", H - 32), ("in-checksum", H - 1)] {
            try add("truncated-\(name).vault", "truncated to \(length) bytes", 4, headerDamaged, Array(base[0..<length]))
        }
        try add("truncated-after-header.vault", "the header and no payload", 4, "payload is missing", Array(base[0..<H]))
        try add("truncated-payload-1.vault", "one payload byte", 4, "too short to hold data", Array(base[0..<H + 1]))
        try add("truncated-payload-17.vault", "17 payload bytes: a chunk with no data", 4, "too short to hold data", Array(base[0..<H + 17]))
        try add("truncated-payload-18.vault", "18 payload bytes", 4, chunk, Array(base[0..<H + 18]))
        try add("truncated-last-byte.vault", "the last byte missing", 4, chunk, Array(base.dropLast()))
        let fullChunk = 65_536 + 17
        try add("truncated-at-chunk-boundary.vault", "a three-chunk vault without its last chunk", 4, "without its final chunk",
                Array(forge.multichunk[0..<forge.multichunkHeaderLength + 2 * fullChunk]))
        try add("truncated-mid-chunk.vault", "a three-chunk vault cut in its second chunk", 4, chunk,
                Array(forge.multichunk[0..<forge.multichunkHeaderLength + fullChunk + 1000]))

        // Crafted streams (made with the key: only the stream structure is wrong).
        let plain = forge.paddedPlaintext(chunkCount: 3)
        let chunks = stride(from: 0, to: plain.count, by: 65_536).map { Array(plain[$0..<min($0 + 65_536, plain.count)]) }
        let message = crypto_secretstream_xchacha20poly1305_tag_message(), final = crypto_secretstream_xchacha20poly1305_tag_final()
        try add("stream-no-final.vault", "every chunk tagged MESSAGE: no FINAL", 4, "without its final chunk",
                try forge.stream([(chunks[0], message), (chunks[1], message), (chunks[2], message)]))
        try add("stream-two-finals.vault", "FINAL on the first and the last chunk", 4, "final chunk is followed by",
                try forge.stream([(chunks[0], final), (chunks[1], message), (chunks[2], final)]))
        try add("stream-final-first.vault", "FINAL on the first chunk, then more data", 4, "final chunk is followed by",
                try forge.stream([(chunks[0], final), (chunks[1], final), (chunks[2], final)]))
        try add("stream-empty-final-chunk.vault", "two full chunks, then an empty FINAL chunk", 4, "too short to hold data",
                try forge.stream([(chunks[0], message), (chunks[1], message), ([], final)]))
        try add("stream-rekey-tag.vault", "a REKEY tag on a middle chunk", 4, "unexpected chunk tag",
                try forge.stream([(chunks[0], message), (chunks[1], crypto_secretstream_xchacha20poly1305_tag_rekey()), (chunks[2], final)]))
        let mc = forge.multichunk, mh = forge.multichunkHeaderLength
        let c0 = Array(mc[mh..<mh + fullChunk]), c1 = Array(mc[mh + fullChunk..<mh + 2 * fullChunk]), rest = Array(mc[(mh + 2 * fullChunk)...])
        try add("chunks-reordered.vault", "chunks 0 and 1 swapped", 4, "damaged at chunk 0", Array(mc[0..<mh]) + c1 + c0 + rest)
        try add("chunks-duplicated.vault", "chunk 0 written twice, chunk 1 lost", 4, "damaged at chunk 1", Array(mc[0..<mh]) + c0 + c0 + rest)
        try add("chunk-dropped.vault", "chunk 1 removed", 4, "damaged at chunk 1", Array(mc[0..<mh]) + c0 + rest)
        try add("payload-bit-flip.vault", "one bit flipped in the payload", 4, "damaged at chunk 0", forge.patch(base, H + 40, [base[H + 40] ^ 0x10]))
        try add("payload-tag-flip.vault", "one bit flipped in the last tag", 4, "damaged at chunk 0", forge.patch(base, base.count - 1, [base[base.count - 1] ^ 1]))

        // Trailing bytes.
        for count in [1, 16, 17, 18, 100_000] {
            try add("trailing-\(count).vault", "\(count) bytes appended", 4, chunk, base + [UInt8](repeating: 0x41, count: count))
        }

        // Crafted contents (authentic stream, wrong plaintext structure).
        var content = try EntryCodec.encode(forge.vault)
        try add("content-version-2.vault", "content encoding version 2", 4, contents, try forge.payload(content: forge.patch(content, 0, [2])))
        try add("content-entry-count-huge.vault", "entry count 2^32-1", 4, contents, try forge.payload(content: forge.patch(content, 1, UInt32.max.littleEndianBytes)))
        try add("content-entry-count-plus-1.vault", "entry count one more than present", 4, contents,
                try forge.payload(content: forge.patch(content, 1, (UInt32(forge.vault.count) + 1).littleEndianBytes)))
        try add("content-trailing.vault", "a byte after the last entry", 4, contents, try forge.payload(content: content + [0]))
        try add("content-name-empty.vault", "an entry name of length 0", 4, contents, try forge.payload(content: forge.patch(content, 5, [0, 0])))
        try add("content-value-length-huge.vault", "a value length of 2^32-1", 4, contents,
                try forge.payload(content: forge.patch(content, 5 + 2 + Self.canaryName.utf8.count + 16, UInt32.max.littleEndianBytes)))
        try add("plaintext-length-too-big.vault", "the content length field larger than the plaintext", 4, contents,
                try forge.payload(rawPlaintext: UInt64(5000).littleEndianBytes8 + content + [UInt8](repeating: 0, count: 1024 - 8 - content.count)))
        try add("plaintext-padding-nonzero.vault", "a non-zero padding byte", 4, "non-zero padding",
                try forge.payload(rawPlaintext: UInt64(content.count).littleEndianBytes8 + content + [1] + [UInt8](repeating: 0, count: 1024 - 9 - content.count)))
        try add("plaintext-padding-wrong-size.vault", "padded to 2048 bytes instead of 1024", 4, "padding does not match",
                try forge.payload(rawPlaintext: UInt64(content.count).littleEndianBytes8 + content + [UInt8](repeating: 0, count: 2048 - 8 - content.count)))
        wipe(&content)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let manifest = Manifest(password: Self.password, canaryName: Self.canaryName, canaryValue: Self.canaryValue, cases: cases)
        try encoder.encode(manifest).write(to: folder.appendingPathComponent("manifest.json"))
    }
}

extension UInt64 {
    /// Eight bytes, least significant first.
    var littleEndianBytes8: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (8 * UInt64($0))) } }
}

// MARK: - Forging damaged vaults with the key

/// Makes vault files that are wrong in exactly one way, with or without the key.
struct Forge {
    let vault: Vault
    let unlocked: UnlockedVault
    let base: [UInt8]
    let headerLength: Int
    let multichunk: [UInt8]
    let multichunkHeaderLength: Int
    var slotBytes: [UInt8] { unlocked.header.keyslots[0].encoded() }

    init() throws {
        var vault = Vault()
        try vault.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: DamagedCorpusTests.canaryName, now: 1_763_800_000_000)
        try vault.setField("username", value: Array("canary-user".utf8), for: DamagedCorpusTests.canaryName, now: 1_763_800_000_001)
        self.vault = vault
        unlocked = try VaultCodec.create(vault, password: VaultFileTests.password(DamagedCorpusTests.password), kdf: DamagedCorpusTests.kdf)
        base = try unlocked.seal()
        headerLength = try VaultHeader.parse(base, path: "base").length
        var large = vault
        var generator = SplitMix(seed: 7)
        try large.setValue((0..<(2 * 65_536 + 5_000)).map { _ in generator.nextByte() }, for: "bulk", now: 1_763_800_000_002)
        let other = try VaultCodec.create(large, password: VaultFileTests.password(DamagedCorpusTests.password), kdf: DamagedCorpusTests.kdf)
        multichunk = try other.seal()
        multichunkHeaderLength = try VaultHeader.parse(multichunk, path: "multichunk").length
    }

    /// `bytes` with `replacement` written at `offset`.
    func patch(_ bytes: [UInt8], _ offset: Int, _ replacement: [UInt8]) -> [UInt8] {
        var copy = bytes
        copy.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        return copy
    }

    /// `bytes` with the header checksum recomputed (what an attacker without the key can do).
    func fixed(_ bytes: [UInt8]) -> [UInt8] {
        var copy = bytes
        fixChecksum(&copy)
        return copy
    }

    /// The base vault with its header changed by `edit` and re-authenticated with the key; the payload is kept.
    func reseal(_ edit: (inout VaultHeader) -> Void) throws -> [UInt8] {
        var header = unlocked.header
        edit(&header)
        header.mac = VaultCodec.headerMAC(header, fileKey: unlocked.fileKey)
        return header.encoded() + Array(base[headerLength...])
    }

    /// A header with raw keyslot bytes and a slot count, then the base payload; checksum fixed, MAC stale.
    func rawHeader(slots: [[UInt8]], count: UInt8) -> [UInt8] {
        var bytes = Array(base[0..<62]) + [count] + slots.flatMap { $0 }
        let length = bytes.count + 64
        bytes.replaceSubrange(10..<12, with: [UInt8(length & 0xFF), UInt8(length >> 8)])
        bytes += Array(base[(headerLength - 64)..<(headerLength - 32)]) + [UInt8](repeating: 0, count: 32)
        fixChecksum(&bytes)
        return bytes + Array(base[headerLength...])
    }

    /// A password slot with another KDF encoding and the base slot's salt, nonce and wrapped key.
    func slot(kdfEncoding: [UInt8]) -> [UInt8] {
        guard case .password(let password) = unlocked.header.keyslots[0] else { fatalError() }
        let body = kdfEncoding + password.salt + password.nonce + password.wrappedKey
        return [Keyslot.passwordType, UInt8(body.count & 0xFF), UInt8(body.count >> 8)] + body
    }

    /// The canonical padded plaintext of a vault whose payload needs `chunkCount` chunks.
    func paddedPlaintext(chunkCount: Int) -> [UInt8] {
        var generator = SplitMix(seed: 9)
        var large = vault
        try! large.setValue((0..<((chunkCount - 1) * 65_536 + 100)).map { _ in generator.nextByte() }, for: "bulk", now: 0)
        let content = try! EntryCodec.encode(large)
        let total = Payload.paddedLength(8 + content.count)
        return UInt64(content.count).littleEndianBytes8 + content + [UInt8](repeating: 0, count: total - 8 - content.count)
    }

    /// A vault whose payload is `chunks` pushed with the given tags under a fresh stream header;
    /// `editHeader` changes the base header first (a format 1.2 vault's version and flag).
    func stream(_ chunks: [([UInt8], UInt8)], editHeader: (inout VaultHeader) -> Void = { _ in }) throws -> [UInt8] {
        let key = Subkey.derive(from: unlocked.fileKey, Subkey.payloadStream)
        var state = crypto_secretstream_xchacha20poly1305_state()
        var streamHeader = [UInt8](repeating: 0, count: 24)
        key.withUnsafeBytes { _ = crypto_secretstream_xchacha20poly1305_init_push(&state, &streamHeader, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        var payload: [UInt8] = []
        for (plain, tag) in chunks {
            var out = [UInt8](repeating: 0, count: plain.count + 17)
            _ = crypto_secretstream_xchacha20poly1305_push(&state, &out, nil, plain, UInt64(plain.count), nil, 0, tag)
            payload += out
        }
        var header = unlocked.header
        editHeader(&header)
        header.streamHeader = streamHeader
        header.mac = VaultCodec.headerMAC(header, fileKey: unlocked.fileKey)
        return header.encoded() + payload
    }

    /// A vault whose plaintext is `content` padded canonically, sealed properly.
    func payload(content: [UInt8], editHeader: (inout VaultHeader) -> Void = { _ in }) throws -> [UInt8] {
        let total = Payload.paddedLength(8 + content.count)
        return try payload(rawPlaintext: UInt64(content.count).littleEndianBytes8 + content + [UInt8](repeating: 0, count: total - 8 - content.count),
                           editHeader: editHeader)
    }

    /// A vault whose plaintext is exactly `rawPlaintext`, in canonical chunks.
    func payload(rawPlaintext: [UInt8], editHeader: (inout VaultHeader) -> Void = { _ in }) throws -> [UInt8] {
        let chunks = stride(from: 0, to: rawPlaintext.count, by: 65_536).map { Array(rawPlaintext[$0..<min($0 + 65_536, rawPlaintext.count)]) }
        return try stream(chunks.enumerated().map { index, chunk in
            (chunk, index == chunks.count - 1 ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message())
        }, editHeader: editHeader)
    }
}
