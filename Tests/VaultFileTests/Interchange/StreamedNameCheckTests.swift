import Testing
@testable import VaultInterchange
@testable import VaultModel

/// `StreamedNameCheck`: a streaming build's repeated names told at once, with no table of names
/// while they increase (issue 44's memory rule), and by the hashes of every name once they do not.
@Suite struct StreamedNameCheckTests {
    /// Hands `names` to a check and, for each new one, its record to a writer, as the build does;
    /// returns what the check said of each.
    private static func said(_ names: [String]) -> [Bool] {
        guard var writer = ImportRecordWriter(capacity: 4096) else { return [] }
        var check = StreamedNameCheck()
        var none: [ImportField] = []
        return names.map { name in
            let new = check.isNew(name, among: writer)
            if new {
                let added = writer.add(name: .string(name), created: 1, modified: 1, value: .literal("v"), fields: &none,
                                       in: UnsafeRawBufferPointer(start: nil, count: 0))
                #expect(added)
            }
            return new
        }
    }

    @Test func test_isNew_saysEachRepeatInOrderAndOutOfOrder() {
        // Increasing: each compared with the last only; a repeat of the last is said at once.
        #expect(Self.said(["a", "b", "c", "c", "d"]) == [true, true, true, false, true])
        // Out of order: the names so far hashed, then every name looked up.
        #expect(Self.said(["b", "c", "a", "b", "e", "d", "a", "z"]) == [true, true, true, false, true, true, false, true])
        #expect(Self.said(["m", "a", "m"]) == [true, true, false])
        #expect(Self.said([]) == [])
        // Many increasing names, then one of the first again, and new ones out of order.
        let many = (0..<5_000).map { "name-\(100_000 + $0)" }
        let after = Self.said(many + ["name-100017", "name-099999", "name-104999", "name-050000"])
        #expect(after.prefix(5_000).allSatisfy { $0 })
        #expect(Array(after.suffix(4)) == [false, true, false, true])
    }
}
