#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - A streamed build of names that come in order, each repeated one's items together

extension ForeignBuilder {
    /// The most items of one name `build(streamingGroups:)` holds at once: a larger group
    /// declines it (the plan's two reads then number it, holding no item).
    static let heldItemsLimit = 4096

    /// What `build(streamingGroups:)` gave.
    enum GroupedBuild {
        case built(ImportedEntries?)
        /// The record writer declined an entry: no streamed build can take the import.
        case refused
        /// The names do not come in order, or a group is too large or could meet a later name:
        /// the plan's reads may number it.
        case outOfOrder
    }

    /// A streamed build (`build(streaming:capacity:now:options:holding:)`) in one read, for an
    /// export whose names (before numbering) come in increasing byte order, so that each repeated
    /// name's items come together (Chrome and Firefox export their logins by site, several
    /// accounts a site): the items of one name are held until an item of the next name comes,
    /// then numbered among themselves (`ForeignNaming.numbersWithinGroup`: an exact title first,
    /// then exact folders, then their usernames, URLs, values) and built in item order, as the plan's build would build them.
    ///
    /// Why the numbers are `names(of:prefix:)`'s: a numbered name `B (n)` must skip every name
    /// some item holds as it is. Names before `B` are less than `B`, hence than `B (n)`; names
    /// after it are at least the next name `C`, since they increase: `B (n)` below `C` meets
    /// none of them (and each numbered name lies between its group's name and the next one, so
    /// no two names of the import meet, without a table of them). A numbered name that is not
    /// below `C`, a name less than the one before, or more than `heldItemsLimit` items of one
    /// name give `.outOfOrder`, and nothing is built. The held items are the reader's, moved out
    /// of its hands (`holding`: items that own all they hold), and wiped once built or given up.
    static func build(streamingGroups read: (ForeignItemSink) throws(VaultError) -> ForeignImport, capacity: Int, now: Int64,
                      options: ForeignBuildOptions) throws(VaultError) -> GroupedBuild {
        guard let first = ImportRecordWriter(capacity: capacity) else { return .refused }
        // What the sink's body changes (it escapes into the sink).
        final class State {
            var writer: ImportRecordWriter
            var outcome = Outcome()
            var renamings = PackedRenamings.Builder()
            /// The items of the name being read (`name`), in item order, and their names before numbering.
            let held = HeldItems()
            var bases: [ForeignNaming.Base] = []
            var name = ""
            var refused = false
            init(_ writer: ImportRecordWriter) { self.writer = writer }
        }
        let state = State(first)
        // Most items of such an export may be renamed: room for a row each (a row grown by copies left holes in the heap).
        state.renamings.reserve(capacity / 64)
        let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input
        let prefixBytes = ForeignNaming.prefixBytes(options.prefix)

        /// Builds the held items (one name's), numbered when several, each moved out and wiped as
        /// it is built; false when declined. `next`: the name of the item that follows them, nil after the last.
        func flush(before next: String?) -> Bool {
            defer {
                state.held.removeAll()
                state.bases.removeAll(keepingCapacity: true)
            }
            let count = state.held.count
            let numbers = count > 1 ? ForeignNaming.numbersWithinGroup(state.held.items, exact: state.bases.map(\.exact)) : []
            // The first in order has the highest exactness: when its title or folders are exact,
            // each cleaned one says so (`numberingReason`).
            let first = state.bases.map(\.exact).max { $1.ranksBefore($0) } ?? .whole
            for index in 0..<count {
                // A local of its own (not an element read where it lies, which each call copied).
                var item = state.held.moveOut(index)
                defer { item.wipeSecrets() }
                var base = state.bases[index]
                let number = count > 1 ? numbers[index] : 0
                if number > 0 {
                    // A name cut to fit its number may fall before its group's name, among names
                    // built already: the plan's reads number it (`.outOfOrder`).
                    let fitted = ForeignNaming.numberedFitting(state.name, number, prefixBytes: prefixBytes)
                    guard fitted.cut == nil else { return false }
                    if let next, !Self.precedes(fitted.name, next) { return false }
                    ForeignNaming.numbered(&base, fitted.name, item: item, reason: ForeignNaming.numberingReason(first: first, base.exact))
                }
                // An item without a title, named after its site or username, is listed too (`Base.isListed`).
                if base.isListed(sourceHasNoTitles: item.sourceHasNoTitles) {
                    ForeignNaming.addRenaming(of: item, base, unnumbered: state.name, number: number, prefix: options.prefix, to: &state.renamings)
                }
                let written = fill(item, named: base.named, now: now, options: options, outcome: &state.outcome) { name, item, fields, created, modified in
                    state.writer.add(name: .string(name), created: created, modified: modified, value: .owned(item.value),
                                     fields: &fields.importFields, in: none)
                }
                guard written else {
                    state.refused = true
                    return false
                }
            }
            return true
        }

        let sink = ForeignItemSink { item in
            defer { item.wipeSecrets() }
            let base = ForeignNaming.base(of: item, prefix: options.prefix)
            if state.held.count > 0 {
                if Self.precedes(state.name, base.named.name) {
                    guard flush(before: base.named.name) else { return false }
                } else {
                    guard !Self.precedes(base.named.name, state.name), state.held.count < Self.heldItemsLimit else { return false }
                }
            }
            if state.held.count == 0 { state.name = base.named.name }
            // Moved out of the reader's hands: it is left an empty item.
            state.held.take(&item)
            state.bases.append(base)
            return true
        }
        // The earlier versions noted so far are the only holders of their values (each item is
        // wiped once built): zeroed unless handed over (the stream declined, a read or check failed).
        var handed = false
        defer { if !handed { state.outcome.wipeHistory() } }
        let source = try read(sink)
        guard !sink.declined, flush(before: nil) else { return state.refused ? .refused : .outOfOrder }
        // Distinct by construction (above): no pass over the runs' names for a repeat.
        let built = finish(try ImportedEntries(written: state.writer.records(), renamings: state.renamings.finish(), distinct: true), state.outcome,
                           source: source)
        handed = true
        return .built(built)
    }

    /// The items `build(streamingGroups:)` holds: moved in from the reader's hands and out to be
    /// built, never copied (a copy of an item is a retain of each of its arrays and strings); the
    /// secrets of any still held are wiped when they go.
    final class HeldItems {
        private var start: UnsafeMutablePointer<ForeignItem>
        private var capacity = 16
        /// The items before it were moved out (`moveOut`, in order): `removeAll` skips them.
        private var firstHeld = 0
        private(set) var count = 0
        /// What is left in the reader's hands: copied (a retain of each empty array), where
        /// `ForeignItem()` built one and copied it again (about three times the instructions).
        private let empty = ForeignItem()

        init() { start = .allocate(capacity: capacity) }

        deinit {
            removeAll()
            start.deallocate()
        }

        /// The items held, where they lie (until the next `take`, `moveOut` or `removeAll`).
        var items: UnsafeBufferPointer<ForeignItem> { UnsafeBufferPointer(start: start, count: count) }

        /// Moves `item` in, leaving an empty item in its place.
        func take(_ item: inout ForeignItem) {
            if count == capacity {
                let larger = UnsafeMutablePointer<ForeignItem>.allocate(capacity: capacity * 2)
                larger.moveInitialize(from: start, count: count)
                Self.zero(start, count)
                start.deallocate()
                start = larger
                capacity *= 2
            }
            withUnsafeMutablePointer(to: &item) { source in
                (start + count).moveInitialize(from: source, count: 1)
                source.initialize(to: empty)
            }
            count += 1
        }

        /// Item `index`, moved out (the caller wipes it); the items are moved out in order.
        func moveOut(_ index: Int) -> ForeignItem {
            precondition(index == firstHeld && index < count, "the held items moved out in order")
            firstHeld += 1
            return (start + index).move()
        }

        /// Wipes the secrets of the items still held and lets every item go; their slots are
        /// zeroed (a short text is held in its string, in the slot).
        func removeAll() {
            for index in firstHeld..<count {
                (start + index).pointee.wipeSecrets()
                (start + index).deinitialize(count: 1)
            }
            Self.zero(start, count)
            firstHeld = 0
            count = 0
        }

        /// Zeroes `count` slots from `slots`, whose items were moved out or deinitialized.
        private static func zero(_ slots: UnsafeMutablePointer<ForeignItem>, _ count: Int) {
            // memset: the memory stays bound to the items' type, for the next ones.
            _ = memset(slots, 0, count * MemoryLayout<ForeignItem>.stride)
        }
    }

    /// Whether `a`'s bytes come before `b`'s.
    private static func precedes(_ a: String, _ b: String) -> Bool { compareUTF8(a, b) < 0 }
}
