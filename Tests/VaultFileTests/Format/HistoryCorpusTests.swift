import Foundation
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The damaged corpus's cases for content version 2 (format 1.2, entry history): a hostile
/// history section, policy or content version in an authentic file, each with what `verify` and
/// `get` must say (`get` never reads the history section, docs/FORMAT.md §7.1).
///
/// `VAULTFILE_WRITE_DAMAGED_HISTORY=1 swift test --filter HistoryCorpusTests` appends these cases
/// to `Fixtures/damaged/` (once; the committed files never change). The corpus suites
/// (DamagedCorpusTests, DamagedCorpusCLITests) check them with every other case.
@Suite struct HistoryCorpusTests {
    @Test func test_corpus_holdsTheHistoryCases() throws {
        let cases = try #require(DamagedCorpus.manifest).cases.filter { $0.file.hasPrefix("history-") }
        #expect(cases.count >= 12, "Fixtures/damaged lacks the content version 2 cases")
        #expect(cases.contains { $0.expectStatusGet == 0 && $0.expectStatus == 4 }, "a case that only verify sees")
        #expect(cases.contains { $0.expectStatusGet == nil && $0.expectStatus == 4 }, "a case that get sees too")
    }

    // MARK: - Writing the cases (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_HISTORY"] == "1"))
    func test_writeCorpus_history() throws {
        let folder = DamagedCorpus.folder
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(DamagedCorpus.Manifest.self, from: Data(contentsOf: manifestURL))
        let forge = try Forge()
        let history = try HistoryContent()
        let keepsHistory: (inout VaultHeader) -> Void = {
            $0.minorVersion = VaultHeader.historyMinorVersion
            $0.flags |= VaultHeader.historyFlag
        }
        /// Adds a case whose content is `content`, after checking that the decoders say `message`.
        func add(_ file: String, _ description: String, verify status: Int32, get statusOfGet: Int32?, _ message: String, _ content: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            precondition(!manifest.cases.contains { $0.file == file })
            try Data(try forge.payload(content: content, editHeader: keepsHistory)).write(to: folder.appendingPathComponent(file))
            manifest.cases.append(.init(file: file, description: description, expectStatus: status, expectMessage: message,
                                        expectStatusGet: statusOfGet))
        }
        let h = history.sectionStart, first = history.recordStarts[0], second = history.recordStarts[1]
        let v2 = history.bytes

        try add("history-ok.vault", "format 1.2: an entry with one earlier version, and a removed entry in the trash", verify: 0, get: nil, "", v2)
        try add("history-none-ok.vault", "format 1.2 with an empty history section", verify: 0, get: nil, "", history.withoutHistory)
        // The history section: only verify (and every write) reads it.
        try add("history-section-missing.vault", "content version 2 that ends after its entries (no record count)", verify: 4, get: 0,
                "history record count", Array(v2[..<h]))
        try add("history-record-count-huge.vault", "history record count 2^32-1", verify: 4, get: 0,
                "history record count 4294967295 exceeds", patch(v2, h, UInt32.max.littleEndianBytes))
        try add("history-record-count-plus-1.vault", "history record count one more than present", verify: 4, get: 0,
                "history record 2", patch(v2, h, UInt32(3).littleEndianBytes))
        try add("history-trailing.vault", "a byte after the last history record", verify: 4, get: 0,
                "1 bytes after the last history record", v2 + [0])
        try add("history-version-count-0.vault", "a history record with no version", verify: 4, get: 0,
                "history record 0 has no version", patch(v2, first + 2 + 8, [0]))
        try add("history-name-invalid.vault", "a history record named 'aaa//one' (an empty name component)", verify: 4, get: 0,
                "history record 0 has an invalid name", patch(v2, first + 2 + 4, Array("/".utf8)))
        try add("history-records-out-of-order.vault", "history records out of order ('zzz/gone' before 'canary/secret')", verify: 4, get: 0,
                "history record 1 is out of order or duplicated", patch(v2, first + 2, Array("zzz".utf8)))
        let version = second + 2 + DamagedCorpusTests.canaryName.utf8.count + 1
        try add("history-value-length-huge.vault", "an earlier version's value length of 2^32-1", verify: 4, get: 0,
                "history record 1 version 1", patch(v2, version + 24, UInt32.max.littleEndianBytes))
        let oldValueLength = HistoryContent.oldCanaryValue.utf8.count
        try add("history-field-name-invalid.vault", "an earlier version's field named 'user/ame'", verify: 4, get: 0,
                "history record 1 version 1 field 0 has an invalid name", patch(v2, version + 28 + oldValueLength + 1 + 1 + 4, Array("/".utf8)))
        // The policy and the content version: read before the entries, so get sees them too.
        try add("history-policy-versions-0.vault", "history policy keeping 0 versions", verify: 4, get: nil, "history policy", patch(v2, 1, [0]))
        try add("history-policy-budget-0.vault", "history policy with a byte budget of 0", verify: 4, get: nil, "history policy",
                patch(v2, 2, UInt32(0).littleEndianBytes))
        try add("history-content-version-1.vault", "content version 1 in a file with the history flag", verify: 4, get: nil,
                "content encoding version 1 in a vault that keeps history", history.versionOne)

        // Each case's message, checked against the decoders before anything is committed.
        for item in manifest.cases where item.file.hasPrefix("history-") && item.expectStatus != 0 {
            let bytes = try DamagedCorpus.bytes(of: item)
            do {
                let opened = try VaultCodec.open(bytes, path: item.file, password: VaultFileTests.password(manifest.password), limits: .defaults)
                precondition(item.expectStatusGet == 0, "\(item.file) opens")
                try opened.vault.checkHistory()
                preconditionFailure("\(item.file) passes the history check")
            } catch {
                precondition("\(error)".contains(item.expectMessage) || (error as? VaultError)?.description.contains(item.expectMessage) == true,
                              "\(item.file): '\(error)' lacks '\(item.expectMessage)'")
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: manifestURL)
    }

    /// Raw content (not vault files) for `make fuzz`: a vault file's content is sealed, so
    /// mutations of the fixtures reach the content decoders only through these seeds.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FUZZ_SEEDS"] == "1"))
    func test_writeFuzzSeeds_content() throws {
        let folder = ProjectPaths.root.appendingPathComponent("Fuzz/content-seeds")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let history = try HistoryContent()
        for (name, bytes) in [("content-v2-history", history.bytes), ("content-v2-no-history", history.withoutHistory), ("content-v1", history.versionOne)] {
            try Data(bytes).write(to: folder.appendingPathComponent(name))
        }
    }

    private func patch(_ bytes: [UInt8], _ offset: Int, _ replacement: [UInt8]) -> [UInt8] {
        var copy = bytes
        copy.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        return copy
    }
}

// MARK: - The content the cases are cut from

/// Content version 2 holding the corpus's canary entry with one earlier version (value and
/// `username` field), and a removed entry `aaa/gone` in the trash; with where its parts begin.
struct HistoryContent {
    static let oldCanaryValue = "OLD-CANARY-VALUE"

    let bytes: [UInt8]
    /// The same entries with an empty history section.
    let withoutHistory: [UInt8]
    /// The same entries encoded as content version 1.
    let versionOne: [UInt8]
    /// Where the history section (its record count) begins.
    let sectionStart: Int
    /// Where each history record begins: `aaa/gone`, then the canary.
    let recordStarts: [Int]

    init() throws {
        let name = DamagedCorpusTests.canaryName
        var vault = Vault(history: .standard)
        try vault.setValue(Array("removed-value".utf8), for: "aaa/gone", now: 1_763_800_000_000)
        _ = try vault.remove("aaa/gone", now: 1_763_800_000_001)
        try vault.setValue(Array(Self.oldCanaryValue.utf8), for: name, now: 1_763_800_000_002)
        try vault.setField("username", value: Array("canary-user".utf8), for: name, now: 1_763_800_000_003)
        try vault.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: name, now: 1_763_800_000_004)
        bytes = try EntryCodec.encode(vault)

        var plain = Vault(history: .standard)
        try plain.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: name, now: 1_763_800_000_002)
        try plain.setField("username", value: Array("canary-user".utf8), for: name, now: 1_763_800_000_004)
        withoutHistory = try EntryCodec.encode(plain)
        var one = Vault()
        try one.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: name, now: 1_763_800_000_002)
        try one.setField("username", value: Array("canary-user".utf8), for: name, now: 1_763_800_000_004)
        versionOne = try EntryCodec.encode(one)

        // 02, versions (1), budget (4), trash limit (2), entry count (4), then the one entry.
        sectionStart = 12 + (versionOne.count - 5)
        var starts: [Int] = []
        var offset = sectionStart + 4
        for _ in 0..<2 {
            starts.append(offset)
            offset = Self.recordEnd(bytes, at: offset)
        }
        precondition(offset == bytes.count, "the history section holds two records and nothing else")
        recordStarts = starts
    }

    /// The end of the history record at `offset` (docs/FORMAT.md §7.1), read without checks.
    private static func recordEnd(_ bytes: [UInt8], at offset: Int) -> Int {
        func number(_ at: Int, _ width: Int) -> Int { (0..<width).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        var at = offset + 2 + number(offset, 2)
        let versions = Int(bytes[at])
        at += 1
        for _ in 0..<versions {
            at += 24
            at += 4 + number(at, 4)
            let fields = Int(bytes[at])
            at += 1
            for _ in 0..<fields {
                at += 1 + Int(bytes[at])
                at += 4 + number(at, 4)
            }
        }
        return at
    }
}
