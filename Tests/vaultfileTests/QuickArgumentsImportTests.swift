import ArgumentParser
import TestSupport
import Testing
@testable import vaultfile

/// The quick reading of plain `import` lines against swift-argument-parser's, as
/// QuickArgumentsVerbTests does for the other verbs.
@Suite struct QuickArgumentsImportTests {
    // MARK: - Success

    @Test func test_parse_readsPlainImportLinesAsArgumentParserDoes() {
        let lines: [[String]] = [
            ["import"], ["import", "in.csv"], ["import", "help"], ["import", "é/ü.json", "--format", "json"],
            ["import", "--format", "1pux", "--vault", "t.vault", "--password-file", "pw", "in.1pux"],
            ["import", "--format=chrome-csv", "--prefix", "web/", "--skip-existing", "--dry-run", "--json", "p.csv"],
            ["import", "--overwrite", "--allow-format-characters", "--no-agent", "--lock-timeout", "3", "a b.csv"],
            ["import", "--format", "ansible-vault", "--source-password-file", "a", "--source-password-file", "b",
             "--source-password-fd", "4", "--source-password-command", "cat k", "v.yml"],
            ["import", "--format", "kdbx", "--kdbx-password-file", "kp", "--kdbx-keyfile", "kf", "db.kdbx"],
            ["import", "--format", "kdbx", "--kdbx-keyfile", "kf", "--kdbx-no-password", "db.kdbx"],
            ["import", "--format", "pass"], ["import", "--format", "passage", "store"], ["import", "--format", "auto", "x"],
            ["import", "--identity", "id", "--identity", "id2", "--password-file", "-", "in.json"],
        ]
        for line in lines {
            #expect(QuickReading.expectSameReading(line, throughRoot: false), "the quick path declined \(line)")
        }
    }

    @Test func test_parse_importThroughTheRootIsTheImportVerb() {
        #expect(QuickReading.expectSameReading(["import", "--format", "csv", "--vault", "t.vault", "in.csv"]))
    }

    // MARK: - Failure: left to ArgumentParser

    @Test func test_parse_leavesOtherImportLinesToArgumentParser() {
        let declined: [[String]] = [
            ["import", "a", "b"], ["import", "-"], ["import", "-h"], ["import", "--help"], ["import", "--"], ["import", "--", "-f"],
            ["import", "--nope"], ["import", "--format"], ["import", "--format="], ["import", "--format", "nope"],
            ["import", "--format", "csv", "--format", "json"], ["import", "--json", "--json"], ["import", "--json=1"],
            ["import", "--prefix", "-x"], ["import", "--source-password-fd", "x"], ["import", "--source-password-fd", " 4"],
            // validate(): import's own checks, its groups'
            ["import", "--overwrite", "--skip-existing", "f"], ["import", "--prefix", "a//b", "f"], ["import", "--prefix", " a", "f"],
            ["import", "--format", "csv", "--kdbx-keyfile", "kf", "f"], ["import", "--format", "csv", "--source-password-file", "p", "f"],
            ["import", "--kdbx-no-password", "f"], ["import", "--kdbx-no-password", "--kdbx-password-file", "p", "--kdbx-keyfile", "k", "f"],
            ["import", "--password-file", "a", "--password-command", "c", "f"], ["import", "--lock-timeout", "nan", "f"],
            ["import", "--generate-completion-script", "bash"], ["import", "--experimental-dump-help"],
        ]
        for line in declined {
            #expect(QuickCommand.parse(line) == nil, "\(line)")
        }
    }

    // MARK: - Edge cases

    /// Random lines from the options `import` knows, good and bad values, repeats and stray words.
    @Test func test_parse_randomImportLinesAgreeWithArgumentParser() {
        let pieces = QuickReading.pieces(
            ["--format", "--overwrite", "--skip-existing", "--prefix", "--dry-run", "--json", "--allow-format-characters",
             "--source-password-file", "--source-password-fd", "--source-password-command", "--kdbx-password-file", "--kdbx-keyfile",
             "--kdbx-no-password"],
            ["--format": ["csv", "1pux", "kdbx", "ansible-vault", "auto", "pass", "x", ""], "--prefix": ["p/", "a b", "", "//"],
             "--source-password-file": ["s"], "--source-password-fd": ["5", "x"], "--source-password-command": ["c"],
             "--kdbx-password-file": ["kp"], "--kdbx-keyfile": ["kf"]],
            nameCounts: [0, 1, 1, 1, 2])
        let taken = QuickReading.expectSameReadingOfRandomLines(verbs: ["import"], pieces: pieces, count: 40, seed: 0x1A4)
        #expect(taken > 5, "the random lines exercised the quick path (\(taken) taken)")
    }

    @Test func test_quickGrammar_coversEveryOptionOfImport() {
        let helpOptions = QuickReading.helpOptions(of: VaultfileCommand.Import.self)
        let grammar = VaultfileCommand.Import.quickGrammar
        #expect(helpOptions == Swift.Set(grammar.options.keys), "help: \(helpOptions.sorted())")
    }
}
