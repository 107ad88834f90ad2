import Testing
@testable import VaultInterchange
@testable import VaultModel

/// Repeated titles that tie on name, username and URL: ordered by a fixed hash of the value (the
/// same in every run and every process), held in a store that is wiped once the names are
/// numbered (`ForeignNaming.TieHashes`), never in keys or rows freed as they are.
@Suite struct ForeignNamingTiesTests {
    private func item(_ title: String, user: String = "u", url: String = "https://a.example", value: String) -> ForeignItem {
        var item = ForeignItem(title: title, value: Array(value.utf8))
        item.username = user
        item.urls = [url]
        return item
    }

    /// The store keeps each hash where `append` said through its growths, compares as the hashes
    /// do, and forgets them at `wipe` (its `WipedBuffer` zeroed: `InterchangeMemoryTests`).
    @Test func test_tieHashes_keepEveryHashAcrossGrowthsAndWipeZeroesThem() {
        let ties = ForeignNaming.TieHashes(capacity: 4)
        let values = (0..<100).map { Array("value-\($0)".utf8) }
        for (index, value) in values.enumerated() { #expect(ties.append(hashOf: value) == index) }
        #expect(ties.count == 100)
        for a in [0, 1, 37, 64, 99] {
            for b in 0..<100 {
                let (x, y) = (ForeignNaming.fnv1a(values[a]), ForeignNaming.fnv1a(values[b]))
                #expect(ties.compare(a, b) == (x == y ? 0 : x < y ? -1 : 1), "\(a) against \(b)")
            }
        }
        ties.wipe()
        #expect(ties.count == 0)
        #expect(ties.append(hashOf: values[1]) == 0 && ties.append(hashOf: values[0]) == 1)
        #expect(ties.compare(0, 1) == (ForeignNaming.fnv1a(values[1]) < ForeignNaming.fnv1a(values[0]) ? -1 : 1))
    }

    /// Items of one title, username and URL are numbered in the order of the FNV-1a of their
    /// values, as every earlier release numbered them (a re-import after an upgrade swaps no name),
    /// whatever their order in the file; the streamed plan numbers them alike and holds no hash
    /// once it has decided.
    @Test func test_names_numberTiesByTheValuesFixedHashAsBeforeAndThePlanWipesIt() {
        let values = ["hunter2", "correct horse", "Tr0ub4dor&3", "123456", "letmein", "p", "pw-é", "zzz", "aaa", "qwerty"]
        let expected = values.indices.sorted { (ForeignNaming.fnv1a(Array(values[$0].utf8)), $0) < (ForeignNaming.fnv1a(Array(values[$1].utf8)), $1) }
        var byValue: [String: String] = [:]
        for (position, index) in expected.enumerated() { byValue[values[index]] = position == 0 ? "t" : "t (\(position + 1))" }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<8 {
            let order = round == 0 ? Array(values.indices) : values.indices.shuffled(using: &generator)
            let items = order.map { item("t", value: values[$0]) } + [item("other", value: "x")]
            let named = ForeignNaming.names(of: items, prefix: []).named.map(\.name)
            for (position, index) in order.enumerated() { #expect(named[position] == byValue[values[index]], "\(values[index]) in order \(order)") }
            // The plan of a streamed build: one read, then each item's number.
            var plan = ForeignNaming.Plan()
            for item in items {
                let base = ForeignNaming.base(of: item, prefix: [])
                let noted = plan.note(item, base: base.named.name, exact: base.exact)
                #expect(noted)
            }
            #expect(plan.tieHashesHeld == items.count, "every item's value, hashed")
            let decided = plan.decide()
            #expect(decided)
            #expect(plan.tieHashesHeld == 0, "the plan keeps no hash once it has decided")
            for (position, item) in items.enumerated() {
                let number = ForeignBuildText.planned(plan, item, at: position)?.number
                let name = number.map { $0 == 0 ? item.title : "\(item.title) (\($0))" }
                #expect(name == named[position], "\(item.title) at \(position)")
            }
        }
    }
}
