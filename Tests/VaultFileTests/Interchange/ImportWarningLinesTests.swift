import Testing
@testable import VaultInterchange

/// `ImportWarning.lines`: the text `import` prints for its warnings, one entry's many field
/// renamings in one bounded line (`--json` keeps each warning).
@Suite struct ImportWarningLinesTests {
    /// An entry with many field renamings of its own says them in one bounded line of text;
    /// another entry's few, and a renaming shared by several entries, keep their own lines.
    @Test func test_lines_collapseOneEntrysManyFieldRenamings() {
        var warnings: [ImportWarning] = (0..<62).map { .fieldRenamed(label: "a b\($0)", field: "a_b\($0)", count: 1, example: "Many", reason: .cleaned) }
        warnings.insert(.fieldRenamed(label: "x y", field: "x_y", count: 1, example: "Few", reason: .cleaned), at: 3)
        warnings.append(.fieldRenamed(label: "p q", field: "p_q", count: 5, example: "Many", reason: .cleaned))
        warnings.append(.historyNotKept(versions: 1, entries: 1))
        let lines = ImportWarning.lines(warnings)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[0].hasPrefix("entry 'Many': 62 custom fields stored under other names (the labels are kept in the field 'labels'): 'a b0' as 'a_b0' (not a field name), "))
        #expect(lines[0].hasSuffix(", and 54 more (each in --json)") && lines[0].utf8.count < 900, "\(lines[0])")
        #expect(lines[1] == warnings[3].description && lines[2] == warnings[63].description && lines[3] == warnings[64].description)
        #expect(ImportWarning.lines(Array(warnings[0..<3])) == warnings[0..<3].map(\.description), "three of one entry: each its line")
    }
}
