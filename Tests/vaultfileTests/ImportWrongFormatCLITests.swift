import Foundation
import TestSupport
import Testing

/// A file given with a `--format` whose reader would take it wrongly (a lenient CSV reader, a
/// JSON reader that finds no items) is refused before it is read, naming what it looks like and
/// the command that imports it (FormatSniffer); a store folder of the other kind likewise.
@Suite struct ImportWrongFormatCLITests {
    private static let fixtures = ProjectPaths.fixtures.appendingPathComponent("import")
    private static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }
    private static let bitwardenJSON = ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json").path

    /// Runs `import --format given path` and checks the refusal: exit 2, what it looks like, the command, nothing imported.
    private func expectRefused(_ cli: CLI, _ path: String, given: String, right: String, looks: String,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try cli.run(["import", "--format", given, path] + cli.unlock())
        #expect(result.status == 2, "\(path) as \(given): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("is not \(given) input: it looks like \(looks); nothing was imported"), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("import it with: vaultfile import --format \(right) \(path)"), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(try names(cli).isEmpty, "nothing was imported", sourceLocation: sourceLocation)
    }

    // MARK: - Success

    @Test func test_import_theRightFormatStillImportsWhatTheWrongOneRefuses() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        #expect(try cli.run(["import", "--format", "chrome-csv", "--prefix", "c", Self.fixture("chrome.csv")] + cli.unlock()).status == 0)
        #expect(try cli.run(["import", "--format", "bitwarden-json", "--prefix", "b", Self.bitwardenJSON] + cli.unlock()).status == 0)
        #expect(try cli.run(["import", "--format", "enpass-json", "--prefix", "e", Self.fixture("enpass.json")] + cli.unlock()).status == 0)
        #expect(try names(cli).contains { $0.hasPrefix("c/") } && names(cli).contains { $0.hasPrefix("b/") } && names(cli).contains { $0.hasPrefix("e/") })
    }

    // MARK: - Failure

    @Test func test_import_dashlaneCSVOfAChromeExportIsRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Before: the headerless Dashlane form took Chrome's header row as an entry.
        try expectRefused(cli, Self.fixture("chrome.csv"), given: "dashlane-csv", right: "chrome-csv", looks: "a Chrome (or Chromium, Edge) CSV export")
    }

    @Test func test_import_enpassJSONOfABitwardenExportIsRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Before: an empty entry `untitled` was imported.
        try expectRefused(cli, Self.bitwardenJSON, given: "enpass-json", right: "bitwarden-json", looks: "a Bitwarden JSON export")
        try expectRefused(cli, Self.fixture("enpass.json"), given: "bitwarden-json", right: "enpass-json", looks: "an Enpass JSON export")
    }

    @Test func test_import_kdbxOfADotenvFileIsRefusedBeforeAnyPassword() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Before: a KeePass password was asked for (or read), then exit 4, "damaged or was modified".
        try cli.write("a.env", Array("A=1\nB=two\n".utf8))
        try expectRefused(cli, cli.path("a.env"), given: "kdbx", right: "dotenv", looks: "a dotenv file (KEY=value lines)")
    }

    @Test func test_import_chromeCSVOfAFirefoxExportIsRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try expectRefused(cli, Self.fixture("firefox.csv"), given: "chrome-csv", right: "firefox-csv", looks: "a Firefox CSV export")
    }

    @Test func test_import_passageOfAPassStoreNamesPassAndTheOtherWayRound() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // No tool runs: the store's files are found, and none has the extension the format reads.
        try FileManager.default.createDirectory(atPath: cli.path("pass/web"), withIntermediateDirectories: true)
        try cli.write("pass/.gpg-id", bytes("someone@example.invalid\n"))
        try cli.write("pass/web/site.gpg", [0x85, 0x01, 0x0C, 0x03])
        try expectRefused(cli, cli.path("pass"), given: "passage", right: "pass", looks: "a pass store (.gpg files)")
        try FileManager.default.createDirectory(atPath: cli.path("passage"), withIntermediateDirectories: true)
        try cli.write("passage/db.age", bytes("age-encryption.org/v1\n"))
        try expectRefused(cli, cli.path("passage"), given: "pass", right: "passage", looks: "a passage store (.age files)")
    }

    // MARK: - Edge

    @Test func test_import_damagedEnpassJSONKeepsTheReadersErrorAndNeverHintsBitwarden() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("enpass.json"))))
        try cli.write("cut.json", Array(whole.prefix(whole.count / 2)))
        let result = try cli.run(["import", "--format", "enpass-json", cli.path("cut.json")] + cli.unlock())
        #expect(result.status != 0 && !result.stderr.contains("bitwarden"), "\(result.stderr)")
        #expect(result.stderr.contains("Enpass"), "the reader's own error: \(result.stderr)")
        // Given as Bitwarden's, it is named as Enpass's.
        let wrong = try cli.run(["import", "--format", "bitwarden-json", cli.path("cut.json")] + cli.unlock())
        #expect(wrong.status == 2 && wrong.stderr.contains("--format enpass-json"), "\(wrong.stderr)")
    }

    @Test func test_import_vaultfileCSVWithURLAndUsernameColumnsIsNoChromeExport() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // vaultfile's own CSV may carry fields named like Chrome's columns: still vaultfile's CSV.
        let csv = "name,value,password,url,username\nsite,pw,old,https://example.com,alice\n"
        let result = try cli.run(["import", "--format", "csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "site", "--field", "username"] + cli.unlock()).text == "alice")
        let auto = try cli.run(["import", "--dry-run", "--json", "--overwrite"] + cli.unlock(), stdin: bytes(csv))
        #expect(try jsonObject(auto.stdout)["format"] as? String == "csv", "\(auto.stderr)")
    }
}
