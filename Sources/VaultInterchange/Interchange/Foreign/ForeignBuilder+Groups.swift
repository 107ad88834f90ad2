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
    /// then numbered among themselves (`ForeignNaming.numbersWithinGroup`: their usernames, then
    /// URLs, then values) and built in item order, as the plan's build would build them.
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
            var held: [ForeignItem] = []
            var bases: [ForeignNaming.Base] = []
            var name = ""
            var refused = false
            init(_ writer: ImportRecordWriter) { self.writer = writer }

            /// Zeroes and forgets the held items' secrets.
            func wipeHeld() {
                for index in held.indices { held[index].wipeSecrets() }
                held.removeAll(keepingCapacity: true)
                bases.removeAll(keepingCapacity: true)
            }
        }
        let state = State(first)
        // Most items of such an export may be renamed: room for a row each (a row grown by copies left holes in the heap).
        state.renamings.reserve(capacity / 64)
        defer { state.wipeHeld() }
        let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input

        /// Builds `item` named `named`; false when the writer declines it.
        func build(_ item: ForeignItem, _ named: ForeignNaming.Named) -> Bool {
            let written = fill(item, named: named, now: now, options: options, outcome: &state.outcome) { name, item, fields, created, modified in
                state.writer.add(name: .string(name), created: created, modified: modified, value: .owned(item.value),
                                 fields: &fields.importFields, in: none)
            }
            if !written { state.refused = true }
            return written
        }

        /// Builds the held items (one name's), numbered when several; false when declined.
        /// `next`: the name of the item that follows them, nil after the last.
        func flush(before next: String?) -> Bool {
            // Taken out of the state, so that each item is read in place, not copied.
            var held: [ForeignItem] = [], bases: [ForeignNaming.Base] = []
            swap(&held, &state.held)
            swap(&bases, &state.bases)
            defer {
                swap(&held, &state.held)
                swap(&bases, &state.bases)
                state.wipeHeld()
            }
            // Each item read where it lies (an array's element handed to a function is copied).
            return held.withUnsafeBufferPointer { held in
                let count = held.count
                guard count > 1 else {
                    guard count == 1 else { return true }
                    if !bases[0].reasons.isEmpty {
                        ForeignNaming.addRenaming(of: held[0], bases[0], unnumbered: bases[0].named.name, number: 0, prefix: options.prefix,
                                                  to: &state.renamings)
                    }
                    return build(held[0], bases[0].named)
                }
                let numbers = ForeignNaming.numbersWithinGroup(held)
                for index in 0..<count {
                    var base = bases[index]
                    let number = numbers[index]
                    if number > 0 {
                        let name = ForeignNaming.numberedName(state.name, number)
                        if let next, !Self.precedes(name, next) { return false }
                        ForeignNaming.numbered(&base, name, title: held[index].title)
                    }
                    if !base.reasons.isEmpty {
                        ForeignNaming.addRenaming(of: held[index], base, unnumbered: state.name, number: number, prefix: options.prefix,
                                                  to: &state.renamings)
                    }
                    guard build(held[index], base.named) else { return false }
                }
                return true
            }
        }

        let sink = ForeignItemSink { item in
            defer { item.wipeSecrets() }
            let base = ForeignNaming.base(of: item, prefix: options.prefix)
            if !state.held.isEmpty {
                if Self.precedes(state.name, base.named.name) {
                    guard flush(before: base.named.name) else { return false }
                } else {
                    guard !Self.precedes(base.named.name, state.name), state.held.count < Self.heldItemsLimit else { return false }
                }
            }
            if state.held.isEmpty { state.name = base.named.name }
            // Moved out of the reader's hands: it is left an empty item.
            state.held.append(ForeignItem())
            swap(&state.held[state.held.count - 1], &item)
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

    /// Whether `a`'s bytes come before `b`'s.
    private static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in b.withUTF8 { b in compareBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) < 0 } }
    }
}
