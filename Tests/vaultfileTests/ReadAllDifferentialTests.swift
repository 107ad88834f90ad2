import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel
@testable import vaultfile

/// `git textconv` and `search` from entries' bytes where they lie (`Vault.forEachEntryBytes`)
/// against their plain references through `sortedEntries`, on random vaults decrypted and then
/// edited without being sealed: non-ASCII names, binary, empty and escaped values, fields,
/// extreme times.
@Suite struct ReadAllDifferentialTests {
    // MARK: - Random vaults

    private static let pieces: [[UInt8]] = [
        Array("a".utf8), Array("Z9".utf8), Array(" ".utf8), Array(",".utf8), Array("\"".utf8), Array("\\".utf8),
        Array("\n".utf8), Array("\r".utf8), Array("\t".utf8), Array("é".utf8), Array("É".utf8), Array("e\u{301}".utf8),
        Array("😀".utf8), Array("user99".utf8), Array("USER".utf8), Array("ключ".utf8), [0x00], [0x08], [0x1F], [0x7F],
        [0xFF], [0xC3], [0xED, 0xA0, 0x80],
    ]
    private static let fieldNames = ["user", "url", "Zed", "a10", "a9", "_u", "b.c", "notes-1"]

    private static func text(_ generator: inout SplitMix) -> [UInt8] {
        (0..<Int(generator.nextByte()) % 6).flatMap { _ in pieces[Int(generator.nextByte()) % pieces.count] }
    }

    private static func time(_ generator: inout SplitMix) -> Int64 {
        switch generator.nextByte() % 5 {
        case 0: return -62_135_596_800_000  // 0001-01-01
        case 1: return 253_402_300_799_999  // 9999-12-31
        case 2: return -1
        default: return Int64(generator.nextByte()) * 1_000_003_771
        }
    }

    /// Random entries, sealed and decrypted, then edited without being sealed again.
    private static func randomVault(seed: UInt64, count: Int) throws -> Vault {
        var generator = SplitMix(seed: seed)
        let heads = ["app/", "b/c/", "é/", "😀", "Z", "user", "x y ", "q\"uote", "E\u{301}", "ключ/"]
        var model = Vault()
        func fill(_ vault: inout Vault, _ index: Int) throws {
            let name = heads[Int(generator.nextByte()) % heads.count] + "entry\(index)"
            try vault.setValue(text(&generator), for: name, now: time(&generator))
            for _ in 0..<Int(generator.nextByte()) % 4 {
                try vault.setField(fieldNames[Int(generator.nextByte()) % fieldNames.count], value: text(&generator), for: name,
                                   now: time(&generator))
            }
        }
        for index in 0..<count { try fill(&model, index) }
        var vault = try EntryCodec.decode(EntryCodec.encode(model))
        for (index, name) in vault.names.enumerated() where generator.nextByte() % 4 == 0 {
            switch generator.nextByte() % 4 {
            case 0: try vault.setValue(text(&generator), for: name, now: time(&generator))
            case 1: try vault.setField(fieldNames[index % fieldNames.count], value: text(&generator), for: name, now: 7)
            case 2: try vault.remove(name)
            default: try fill(&vault, count + index)
            }
        }
        return vault
    }

    // MARK: - git textconv

    /// What `body` writes through a `BufferedOutput` (into a temporary file).
    private func written(_ body: (BufferedOutput) -> Void) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("textconv-\(UUID().uuidString)").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        #expect(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let out = BufferedOutput(descriptor: descriptor)
        body(out)
        try out.finish()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func test_textconvListEntries_matchesTheListingThroughEntries() throws {
        let unlocked = try VaultCodec.create(Vault(), password: SecureBytes(copying: Array("pw".utf8)),
                                             kdf: .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1)))
        for seed in 0..<12 as Range<UInt64> {
            unlocked.vault = try Self.randomVault(seed: seed, count: seed == 0 ? 0 : 50)
            for showSecrets in [false, true] {
                let fromBytes = try written { Self.listEntries(unlocked, showSecrets, $0) }
                let reference = try written { VaultfileCommand.Git.Textconv.listEntriesThroughEntries(of: unlocked, showSecrets: showSecrets, into: $0) }
                #expect(fromBytes == reference, "seed \(seed), show secrets \(showSecrets)")
                #expect(seed == 0 || fromBytes.count > 1_000)
            }
        }
    }

    private static func listEntries(_ unlocked: UnlockedVault, _ showSecrets: Bool, _ out: BufferedOutput) {
        VaultfileCommand.Git.Textconv.listEntries(of: unlocked, showSecrets: showSecrets, into: out)
    }

    private static func fingerprint(_ unlocked: UnlockedVault, _ name: UnsafeRawBufferPointer, _ field: UnsafeRawBufferPointer?,
                                    _ value: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        out.withUnsafeMutableBytes { unlocked.fingerprint(entry: name, field: field, value: value, into: $0) }
        return out
    }

    /// The fingerprint of bytes where they lie against the one of arrays, for short names and for
    /// names too long for its buffer on the stack.
    @Test func test_fingerprintIntoBuffer_matchesFingerprint() throws {
        let unlocked = try VaultCodec.create(Vault(), password: SecureBytes(copying: Array("pw".utf8)),
                                             kdf: .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1)))
        var generator = SplitMix(seed: 5)
        for _ in 0..<200 {
            let long = generator.nextByte() % 4 == 0 ? String(repeating: "long/", count: Int(generator.nextByte()) % 40) : ""
            let name = "n/" + long + String(decoding: Self.text(&generator).filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
            let field: String? = generator.nextByte() % 2 == 0 ? nil : Self.fieldNames[Int(generator.nextByte()) % Self.fieldNames.count]
            let value = Self.text(&generator)
            let reference = unlocked.fingerprint(entry: name, field: field, value: value)
            let fromBytes = Array(name.utf8).withUnsafeBytes { nameBytes in
                value.withUnsafeBytes { valueBytes in
                    if let field {
                        return Array(field.utf8).withUnsafeBytes { fieldBytes in
                            Self.fingerprint(unlocked, nameBytes, fieldBytes, valueBytes)
                        }
                    }
                    return Self.fingerprint(unlocked, nameBytes, nil, valueBytes)
                }
            }
            #expect(fromBytes == reference)
        }
    }

    /// `BufferedOutput.appendTimestamp` (the date from `UTCTime` once per day, the time of day by
    /// arithmetic) against `timestamp(milliseconds:)`: runs within one day and across days, negative
    /// times (floored: −5 ms is 23:59:59.995 of the day before), years of fewer and more than four digits, the extremes.
    @Test func test_appendTimestamp_matchesTimestamp() throws {
        var generator = SplitMix(seed: 9)
        var times: [Int64] = [0, -1, -999, -1000, -1001, 1, 999, 1000, 86_399_999, 86_400_000, -86_400_000, -86_400_001,
                              -62_135_596_800_000, -62_135_596_800_001, 253_402_300_799_999, 253_402_300_800_000, .max, .min, .max - 999]
        var time: Int64 = 1_700_000_000_000
        for _ in 0..<3_000 {
            switch generator.nextByte() % 4 {
            case 0: time += Int64(generator.nextByte())  // the same day, mostly
            case 1: time += Int64(generator.nextByte()) * 3_600_000
            case 2: time = -time
            default: time = Int64(bitPattern: UInt64(generator.nextByte()) << 56 | UInt64(generator.nextByte()) << 20) / 1_000
            }
            times.append(time)
        }
        let written = try self.written { out in
            for time in times {
                out.appendTimestamp(milliseconds: time)
                out.append(literal: "|")
            }
        }
        #expect(String(decoding: written, as: UTF8.self) == times.map { timestamp(milliseconds: $0) + "|" }.joined())
    }

    // MARK: - search

    /// `search` with --values and/or --json, substring (smart case, -i, -s, non-ASCII) and regex,
    /// on a terminal (escaped names) and not: the same lines and the same JSON as the reference.
    @Test func test_search_fromBytesMatchesTheSearchThroughEntries() throws {
        let patterns = [["user99"], ["USER"], ["-i", "user"], ["-s", "user"], ["é"], ["É"], ["-i", "É"], ["ключ"], ["\""], ["a"],
                        ["none-such"], ["--regex", "^app/"], ["--regex", "[0-9]$"], ["--regex", "-i", "é"], ["--regex", "Z9|😀"]]
        var hits = 0
        let vaults = try (0..<3 as Range<UInt64>).map { try Self.randomVault(seed: 50 + $0, count: 40) }
        for pattern in patterns {
            // Parsed once for every vault and every pair of flags (set below as the parse sets
            // them): a debug ArgumentParser's parse takes ~50 ms.
            let parsed = try VaultfileCommand.Search.parse(pattern + ["--vault", "unused.vault"])
            for flags in [["--values"], ["--json"], ["--values", "--json"]] {
                var command = parsed
                command.values = flags.contains("--values")
                command.json = flags.contains("--json")
                let text = pattern.last!
                for (seed, vault) in vaults.enumerated() {
                    for escaping in [false, true] {
                        let fromBytes = try command.search(vault, matcher: command.makeMatcher(text, shown: "p"), pattern: text, escaping: escaping)
                        let reference = try command.searchThroughEntries(vault, matcher: command.makeMatcher(text, shown: "p"), escaping: escaping)
                        #expect(fromBytes.lines == reference.lines, "seed \(seed) \(flags + pattern)")
                        #expect(JSON.array(fromBytes.matches).text == JSON.array(reference.matches).text, "seed \(seed) \(flags + pattern)")
                        hits += fromBytes.lines.count
                    }
                }
            }
        }
        #expect(hits > 500)
    }
}
