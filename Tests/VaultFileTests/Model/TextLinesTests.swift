import Testing
import VaultModel

/// `textLines()`: the one line split for text files users write (recipients files, batch
/// scripts, YAML, `.gpg-id`), on any of their line ends.
@Suite struct TextLinesTests {
    // MARK: - textLines

    @Test func test_textLines_splitsAtLF() {
        #expect("a\nb\n\nc".textLines() == ["a", "b", "", "c"])
    }

    @Test func test_textLines_splitsAtCRLFAsAtLF() {
        #expect("a\r\nb\r\n\r\nc\r\n".textLines() == ["a", "b", "", "c", ""])
        #expect("a\r\nb\nc".textLines() == ["a", "b", "c"], "mixed line ends")
    }

    @Test func test_textLines_leavesALoneCR() {
        #expect("a\rb\n".textLines() == ["a\rb", ""])
        #expect("".textLines() == [""])
    }
}
