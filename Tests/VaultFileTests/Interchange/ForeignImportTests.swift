import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

// MARK: - Other tools' exports: fast paths against their references

extension InterchangeTests {
    /// `Timestamps.Cache` against `Timestamps.parse(utf8:)` on runs of times that repeat, change by
    /// one byte, grow past 32 bytes, or are no time at all.
    @Test func test_timestampCache_agreesWithParse() {
        var generator = SplitMix(seed: 89)
        let texts = ["2023-11-14T22:13:20Z", "2023-11-14T22:13:20.000Z", "2023-11-14T22:13:21Z", "2023-11-14 22:13:20+02:00",
                     "2023-11-14T22:13:20.123456789012345678Z", "", "x", "2023-11-14T22:13:20", "1970-01-01T00:00:00z",
                     "2023-11-14T22:13:20Z ", "9999-12-31T23:59:60.999-2359", "2023-02-30T00:00:00Z"]
        var cache = Timestamps.Cache()
        for _ in 0..<5_000 {
            let text = texts[Int(generator.nextByte()) % texts.count]
            #expect(cache.parse(text) == Timestamps.parse(text), "\(text)")
            var copy = text
            let reference = copy.withUTF8 { Timestamps.parse(utf8: $0) }
            #expect(copy.withUTF8 { cache.parse(utf8: $0) } == reference, "\(text)")
        }
    }
}

extension InterchangeTests {
    /// An entry's ASCII keys matched by their bytes (`NativeJSONReader.member(ascii:)`) against the
    /// keys compared as strings: the seven, their prefixes and near misses, random keys of their letters.
    @Test func test_nativeJSONMember_bytesMatchTheText() {
        var generator = SplitMix(seed: 103)
        let known = ["name", "value", "value_base64", "created", "modified", "fields", "fields_base64"]
        var keys = known + known.flatMap { key in (0..<key.count).map { String(key.prefix($0)) } } + ["Name", "names", "valuE", "fields_base65", "created ", ""]
        let letters = Array("namevlu_bas64crtdofi")
        for _ in 0..<3_000 { keys.append(String((0..<Int(generator.nextByte() % 14)).map { _ in letters[Int(generator.nextByte()) % letters.count] })) }
        for key in keys {
            var text = key
            #expect(text.withUTF8 { NativeJSONReader.member(ascii: $0) } == NativeJSONReader.memberByText(key), "\(key)")
        }
    }
}
