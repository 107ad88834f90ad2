import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing
@testable import VaultModel

/// `UTCTime`, the one formatter of every time vaultfile prints (issue 39, item 10: `list --json`
/// printed −5 ms as `1970-01-01T00:00:00.995Z`, one second late).
@Suite struct UTCTimeTests {
    // MARK: - rfc3339: success

    @Test func test_rfc3339_negativeTimesFallInTheSecondBefore() {
        let cases: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00.000Z"), (-5, "1969-12-31T23:59:59.995Z"), (-999, "1969-12-31T23:59:59.001Z"),
            (-1000, "1969-12-31T23:59:59.000Z"), (-1001, "1969-12-31T23:59:58.999Z"), (-86_400_000, "1969-12-31T00:00:00.000Z"),
            (-86_400_001, "1969-12-30T23:59:59.999Z"), (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"), (-2_208_988_800_001, "1899-12-31T23:59:59.999Z"),
        ]
        for (milliseconds, text) in cases { #expect(UTCTime.rfc3339(milliseconds: milliseconds) == text, "\(milliseconds)") }
    }

    @Test func test_rfc3339_yearsOutsideFourDigitsCarryTheirSign() {
        #expect(UTCTime.rfc3339(milliseconds: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(UTCTime.rfc3339(milliseconds: -62_167_219_200_001) == "-0001-12-31T23:59:59.999Z")
        #expect(UTCTime.rfc3339(milliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(UTCTime.rfc3339(milliseconds: 253_402_300_800_000) == "+10000-01-01T00:00:00.000Z")
        // The extremes of Int64 neither trap nor wrap.
        #expect(UTCTime.rfc3339(milliseconds: .max) == "+292278994-08-17T07:12:55.807Z")
        #expect(UTCTime.rfc3339(milliseconds: .min) == "-292275055-05-16T16:47:04.192Z")
    }

    /// Whole seconds against glibc's `gmtime_r` over years 0001–9999, and every millisecond of
    /// a second against the second's own text.
    @Test func test_rfc3339_agreesWithGmtimeForWholeSeconds() {
        var generator = SplitMix(seed: 39)
        for _ in 0..<5_000 {
            let bits = (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(generator.nextByte()) }
            let seconds = Int64(bits % 315_537_897_600) - 62_135_596_800  // 0001-01-01 ..< 10000-01-01
            var time = time_t(seconds), parts = tm()
            gmtime_r(&time, &parts)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                                  parts.tm_hour, parts.tm_min, parts.tm_sec)
            #expect(UTCTime.rfc3339(milliseconds: seconds * 1000) == expected + ".000Z", "\(seconds)")
            #expect(UTCTime.rfc3339(seconds: seconds) == expected + ".000Z", "\(seconds)")
            #expect(UTCTime.text(seconds: seconds) == expected.replacingOccurrences(of: "T", with: " ") + " UTC", "\(seconds)")
            let millisecond = Int64(generator.nextByte()) * 3
            #expect(UTCTime.rfc3339(milliseconds: seconds * 1000 + millisecond).hasPrefix(expected + "."), "\(seconds)")
        }
    }

    @Test func test_text_ofAnyStateFolderTimeNeitherTrapsNorWraps() {
        #expect(UTCTime.text(seconds: -1) == "1969-12-31 23:59:59 UTC")
        #expect(!UTCTime.text(seconds: .max).isEmpty && !UTCTime.text(seconds: .min).isEmpty)
        #expect(!UTCTime.rfc3339(seconds: .max).isEmpty && !UTCTime.rfc3339(seconds: .min).isEmpty)
    }
}
