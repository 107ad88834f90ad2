import Foundation
import TestSupport
import Testing
@testable import VaultInterchange

// MARK: - Names hashed by their bytes

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
