import Foundation
import TestSupport
import Testing
@testable import VaultInterchange

// MARK: - Names counted by their bytes

extension InterchangeTests {
    /// `NameCounts.uniqueName(_:)` against `ImportedNameCleaner.uniqueName(_:among:)` over a
    /// dictionary: NFC names (as every counted name is), ASCII and not, empty, repeated, and enough
    /// of them to grow the table many times. Same names in the same order.
    @Test func test_nameCounts_matchAStringDictionary() {
        var generator = SplitMix(seed: 139)
        let pool = ["db01", "db01 (2)", "", "untitled", "café", "名前", "a/b", "x"]
        var counts = NameCounts(), dictionary: [String: Int] = [:]
        for round in 0..<30_000 {
            let name = round % 3 == 0 ? pool[Int(generator.nextByte()) % pool.count] : "n-\(Int(generator.nextByte()) << 4 | Int(generator.nextByte() % 16))-\(round % 7)"
            #expect(counts.uniqueName(name) == ImportedNameCleaner.uniqueName(name, among: &dictionary), "\(name)")
        }
    }

    /// `Names.changedName(ofTitle:)` (a title's bytes; nil for the title as it is) against
    /// `name(fromParts: [title])`, two `Names` fed the same titles, and the same items in folders
    /// between them: titles kept, repeated, cleaned, with spaces, controls, '.', '..', non-ASCII in
    /// both forms. Same names, same renamings.
    @Test func test_names_titleBytesMatchTheParts() {
        var generator = SplitMix(seed: 149)
        let titles = ["db01", "db01", "db01 (2)", "a", " a", "a ", "\ta", "a/b", "\u{1}x", "x\u{7F}", ".", "..", "...", "é", "e\u{301}",
                      "untitled", "Root", "名前", "a\u{85}", "~", "x.y"]
        var bytes = ImportedNameCleaner.Names(), parts = ImportedNameCleaner.Names()
        for _ in 0..<5_000 {
            let title = titles[Int(generator.nextByte()) % titles.count]
            if generator.nextByte() % 5 == 0 {
                let folder = titles[Int(generator.nextByte()) % titles.count]
                #expect(Array(bytes.name(fromParts: [folder, title]).utf8) == Array(parts.name(fromParts: [folder, title]).utf8))
                continue
            }
            var text = title
            let changed = text.withUTF8 { bytes.changedName(ofTitle: UnsafeRawBufferPointer($0)) }
            #expect(Array((changed ?? title).utf8) == Array(parts.name(fromParts: [title]).utf8), "\(title)")
        }
        func described(_ names: ImportedNameCleaner.Names) -> [[[UInt8]]] {
            names.renamings.map { [Array($0.original.utf8), Array($0.name.utf8), Array($0.reasons.map(\.name).joined(separator: ",").utf8)] }
        }
        #expect(described(bytes) == described(parts))
    }
}

extension InterchangeTests {
    /// `NameCounts` on names that increase for a while (no table: each compared with the last) and
    /// then repeat one, fall back, or increase again, against a dictionary: same counts.
    @Test func test_nameCounts_increasingRunsMatchAStringDictionary() {
        var generator = SplitMix(seed: 151)
        for round in 0..<300 {
            var counts = NameCounts(), dictionary: [String: Int] = [:]
            let run = Int(generator.nextByte() % 120)
            var names = (0..<run).map { String(format: "t-%05d", $0 * 3) }
            switch round % 4 {
            case 0: names.append(names.randomElement(using: &generator) ?? "t-00000")
            case 1: names.append("a")
            case 2: names += (0..<50).map { _ in String(format: "t-%05d", Int(generator.nextByte()) * 2) }
            default: names += ["", "untitled", "zz", "zz", "é"]
            }
            for name in names {
                #expect(counts.uniqueName(name) == ImportedNameCleaner.uniqueName(name, among: &dictionary), "\(round) \(name)")
            }
        }
    }
}

extension InterchangeTests {
    /// `NameHashes.insert` against a set of the names: names that increase for a while (only their
    /// hashes listed), then repeat one, fall back, or increase again (the table from then on), and
    /// enough of them to grow the table. A repeated name is always "maybe repeated" (false); a new
    /// one is new (true) unless two names share a 64-bit hash, which these never do.
    @Test func test_nameHashes_sayRepeatedExactlyWhenASetDoes() {
        var generator = SplitMix(seed: 157)
        for round in 0..<200 {
            var hashes = NameHashes(expected: round % 2 == 0 ? 4 : 1024)
            var seen: Set<[UInt8]> = []
            let run = Int(generator.nextByte() % 120)
            var names = (0..<run).map { String(format: "t-%05d", $0 * 3) }
            switch round % 4 {
            case 0: names.append(names.randomElement(using: &generator) ?? "t-00000")
            case 1: names += ["a", "t-00000", "b", "a"]
            case 2: names += (0..<3_000).map { _ in "n-\(Int(generator.nextByte()) << 4 | Int(generator.nextByte() % 16))" }
            default: names += ["", "untitled", "zz", "zz", "é", "e\u{301}", "名前", "名前x", "0123456789abcdef", "0123456789abcdeg"]
            }
            for name in names {
                #expect(hashes.insert(name) == seen.insert(Array(name.utf8)).inserted, "\(round) \(name)")
            }
        }
    }
}
