import Foundation
import TestSupport
import Testing

/// recheck62's findings on `import` (issue 44), through the built binary: an item with more
/// fields than an entry holds imported with the rest in its notes (N1), a decomposed `--prefix`
/// refused (N4).
@Suite struct ImportRecheck62CLITests {
    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
        try cli.run(["get", name, "--field", field] + cli.unlock())
    }

    // MARK: - N1: more fields than an entry holds

    @Test func test_import_itemWithMoreFieldsThanAnEntryHoldsKeepsTheRestInItsNotes() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Bitwarden's CSV (read a window at a time) and JSON (read whole): 70 custom fields in one item.
        let lines = (0..<70).map { "k\($0): v\($0)" }.joined(separator: "\n")
        try cli.write("bw.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,fine,,,0,,,pw-fine,
            ,,login,many,first note,"\(lines)",0,,,pw-many,

            """))
        let fields = (0..<70).map { "{\"name\": \"k\($0)\", \"value\": \"v\($0)\", \"type\": 0, \"linkedId\": null}" }.joined(separator: ", ")
        try cli.write("bw.json", bytes("""
            {"encrypted": false, "folders": [], "items": [{"id": "i1", "type": 1, "name": "many", "notes": "first note", \
            "fields": [\(fields)], "login": {"username": null, "password": "pw-many", "totp": null, "uris": []}}, \
            {"id": "i2", "type": 1, "name": "fine", "notes": null, "fields": [], \
            "login": {"username": null, "password": "pw-fine", "totp": null, "uris": []}}]}
            """))
        for (file, prefix) in [("bw.csv", "c"), ("bw.json", "j")] {
            let imported = try cli.run(["import", "--json", "--prefix", prefix, cli.path(file)] + cli.unlock())
            #expect(imported.status == 0, "\(file): \(imported.stderr)")
            #expect(imported.stderr.contains("warning: 8 fields beyond the 64 an entry holds are kept as 'label: value' lines of the entry's notes, "
                                             + "in 1 entry ('\(prefix)/many')"), "\(file): \(imported.stderr)")
            let kinds = (try jsonObject(imported.stdout)["warnings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.contains("fields_in_notes"), "\(kinds)")
            #expect(try cli.run(["get", "\(prefix)/fine"] + cli.unlock()).text == "pw-fine", "the other items are imported")
            #expect(try cli.run(["get", "\(prefix)/many"] + cli.unlock()).text == "pw-many")
            // The first 62 by label stay fields (cold63 F4: `k0`, `k1`, `k10`…), the rest lines in that order.
            let byLabel = (0..<70).sorted { "k\($0)" < "k\($1)" }
            #expect(try field(cli, "\(prefix)/many", "k\(byLabel[61])").text == "v\(byLabel[61])")
            #expect(try field(cli, "\(prefix)/many", "k\(byLabel[62])").status != 0)
            #expect(try field(cli, "\(prefix)/many", "notes").text == "first note\n" + byLabel[62...].map { "k\($0): v\($0)\n" }.joined())
        }
    }

    // MARK: - N4: a decomposed --prefix

    @Test func test_import_decomposedPrefixIsRefusedWithItsComposedForm() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password\nA,https://a.example,u,p\n"))
        let decomposed = "cafe\u{0301}/"
        let refused = try cli.run(["import", "--dry-run", "--format", "chrome-csv", "--prefix", decomposed, cli.path("c.csv")] + cli.unlock())
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("is not in Unicode NFC"), "\(refused.stderr)")
        #expect(Array(refused.stderr.utf8).contains(subsequence: Array("--prefix 'caf\u{00E9}/'".utf8)), "the composed form, as bytes: \(refused.stderr)")
        #expect(try names(cli).isEmpty)
        // The composed form is taken as typed: no renaming line.
        let composed = try cli.run(["import", "--format", "chrome-csv", "--prefix", "caf\u{00E9}/", cli.path("c.csv")] + cli.unlock())
        #expect(composed.status == 0 && !composed.stderr.contains("NFC"), "\(composed.stderr)")
        #expect(Array(try names(cli).joined().utf8) == Array("caf\u{00E9}/A".utf8))
    }
}

private extension Array where Element == UInt8 {
    /// Whether `subsequence` occurs in these bytes (a String compares canonically: NFD equals NFC).
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<$0 + subsequence.count].elementsEqual(subsequence) }
    }
}
