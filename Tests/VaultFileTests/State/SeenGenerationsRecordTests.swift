import TestSupport
import Testing
@testable import VaultFile
import VaultModel

/// Reading a rollback record (`SeenGenerations.Record(parsing:)`), which splits on bytes, against
/// the plain reading by String lines it replaced (kept here as the reference).
@Suite struct SeenGenerationsRecordTests {
    /// The String reading the record parser had before it split on bytes (the hex digits are
    /// read by the parser's own helper, which did not change).
    private static func reference(_ file: [UInt8]) -> SeenGenerations.Record? {
        guard file.count <= StateFolder.maxRecordLength, file.last == 0x0A,
              let text = String(validating: file.dropLast(), as: UTF8.self) else { return nil }
        func value(_ line: Substring, _ key: String) -> String? {
            guard line.hasPrefix(key + " ") else { return nil }
            return String(line.dropFirst(key.count + 1))
        }
        let lines = text.split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0] == "vaultfile-seen 1",
              let generation = value(lines[1], "generation").flatMap({ UInt64($0) }), generation <= Generations.ceiling,
              let hash = value(lines[2], "header-blake2b").flatMap(SeenGenerations.Record.bytes(hex:)), hash.count == 32,
              let seen = value(lines[3], "seen").flatMap({ Int64($0) }), (0...SeenGenerations.Record.latestTime).contains(seen),
              let path = value(lines[4], "path"), !path.isEmpty else { return nil }
        return SeenGenerations.Record(generation: generation, headerHash: hash, seen: seen, path: path)
    }

    /// A record as this build writes it, of random values (a generation up to the ceiling, issue 39).
    private static func record(_ generator: inout SplitMix) -> SeenGenerations.Record {
        let paths = ["/home/a/v.vault", "/tmp/x y/ä.vault", "/a\nb", "/e\u{301}/v", "/\u{212A}", "/\r\n/v", " ", "/" + String(repeating: "p", count: 300)]
        return SeenGenerations.Record(
            generation: [0, 1, 2, Generations.ceiling, generator.next() >> 1][generator.next(upTo: 5)],
            headerHash: (0..<32).map { _ in generator.nextByte() },
            seen: [0, 1_700_000_000, SeenGenerations.Record.latestTime][generator.next(upTo: 3)],
            path: paths[generator.next(upTo: paths.count)])
    }

    // MARK: - Record(parsing:)

    @Test func test_recordParsing_readsWhatItWrites() {
        var generator = SplitMix(seed: 7)
        for _ in 0..<200 {
            let record = Self.record(&generator)
            #expect(SeenGenerations.Record(parsing: record.encoded) == record, "\(record)")
        }
    }

    @Test func test_recordParsing_refusesWhatTheStringReadingRefused() {
        let valid = SeenGenerations.Record(generation: 5, headerHash: [UInt8](repeating: 0xAB, count: 32), seen: 1_700_000_000, path: "/v").encoded
        let text = String(decoding: valid, as: UTF8.self)
        // One hand-made case for each way a line can be wrong, each refused by both readings.
        let cases = [
            text.replacingOccurrences(of: "generation 5", with: "generation +5x"),
            text.replacingOccurrences(of: "generation 5", with: "generation \(Generations.ceiling + 1)"),
            text.replacingOccurrences(of: "generation 5", with: "generation \(UInt64.max)"),
            text.replacingOccurrences(of: "generation 5\n", with: "generation 5\r\n"),
            text.replacingOccurrences(of: "seen 1700000000", with: "seen \u{301}1700000000"),
            text.replacingOccurrences(of: "seen 1700000000", with: "seen 253402300800"),
            text.replacingOccurrences(of: "vaultfile-seen 1", with: "vaultfile-seen 2"),
            text.replacingOccurrences(of: "header-blake2b ab", with: "header-blake2b AB"),
            text.replacingOccurrences(of: "path /v", with: "path \u{301}/v"),
            text.replacingOccurrences(of: "path /v", with: "path "),
            String(text.dropLast()),
        ]
        for item in cases {
            let bytes = Array(item.utf8)
            #expect(SeenGenerations.Record(parsing: bytes) == nil && Self.reference(bytes) == nil, "\(item.debugDescription)")
        }
    }

    @Test func test_recordParsing_matchesTheStringReadingOnMutatedRecords() {
        var generator = SplitMix(seed: 2026)
        // Bytes that sit on the String reading's edges: line breaks, CR, space, signs, digits, a
        // combining acute (CC 81), the Kelvin sign (E2 84 AA, canonically 'K'), a stray continuation byte.
        let pieces: [[UInt8]] = [[0x0A], [0x0D], [0x0D, 0x0A], [0x20], [0x2B], [0x2D], [0x30], [0x61], [0xCC, 0x81], [0xE2, 0x84, 0xAA], [0x80], [0x00]]
        var differences = 0, accepted = 0
        for round in 0..<6_000 {
            var bytes = Self.record(&generator).encoded
            for _ in 0..<(1 + generator.next(upTo: 3)) {
                let at = generator.next(upTo: bytes.count + 1)
                switch generator.next(upTo: 4) {
                case 0 where at < bytes.count: bytes.remove(at: at)
                case 1 where at < bytes.count: bytes[at] = pieces[generator.next(upTo: pieces.count)][0]
                case 2: bytes.insert(contentsOf: pieces[generator.next(upTo: pieces.count)], at: at)
                default: if round % 3 == 0 { bytes = Array(bytes.prefix(at)) }
                }
            }
            let parsed = SeenGenerations.Record(parsing: bytes)
            if parsed != Self.reference(bytes) {
                differences += 1
                Issue.record("\(String(decoding: bytes, as: UTF8.self).debugDescription): \(String(describing: parsed))")
            }
            if parsed != nil { accepted += 1 }
        }
        #expect(differences == 0)
        #expect(accepted > 300, "the mutations must leave some records readable (\(accepted))")
    }
}
