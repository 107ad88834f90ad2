import TestSupport
import Testing
@testable import vaultfile

/// `Messages.escape(_:from:)` (a renaming line's texts escaped where they were appended, as
/// bytes) against `Messages.escaped(_:)`, the one rule of what a message shows escaped.
@Suite struct MessagesEscapeTests {
    @Test func test_escape_inPlaceMatchesEscaped() {
        let pieces = ["a", "é", "e\u{301}", "\n", "\t", "\u{0}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}", "\u{202A}", "\u{202E}", "\u{2066}",
                      "\u{2069}", "\u{2028}", "\\", "'", "中", "\u{1F600}", "\u{C2}", "x y",
                      "\u{200B}", "\u{200F}", "\u{2060}", "\u{FEFF}", "\u{AD}", "\u{E0041}"]
        var generator = SplitMix(seed: 4_447)
        for _ in 0..<2_000 {
            let text = (0..<Int(generator.next() % 9)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            var bytes = Array("prefix '".utf8)
            let start = bytes.count
            bytes += text.utf8
            Messages.escape(&bytes, from: start)
            #expect(bytes == Array("prefix '".utf8) + Array(Messages.escaped(text).utf8), "\(text.debugDescription)")
            // Bytes that need no look (most messages) stay as they are.
            let plain = !Array(text.utf8).withUnsafeBufferPointer(Messages.mayNeedEscape)
            #expect(!plain || Messages.escaped(text) == text)
        }
    }

    @Test func test_escaped_showsEveryCharacterNewNamesRefuse() {
        // What the name rule removes from a title is shown, so that a rename line is no seeming no-op (recheck58 N4).
        #expect(Messages.escaped("Git\u{200B}Hub \u{FEFF}B \u{200F} \u{2060} soft\u{AD}") == "Git\\u{200B}Hub \\u{FEFF}B \\u{200F} \\u{2060} soft\\u{00AD}")
        #expect(Messages.escaped("\u{202E}x\u{2028}") == "\\u{202E}x\\u{2028}")
        // Visible text stays as it is: letters, accents, emoji, a no-break space.
        #expect(Messages.escaped("café e\u{301} 中 \u{1F600} a\u{A0}b") == "café e\u{301} 中 \u{1F600} a\u{A0}b")
    }
}
