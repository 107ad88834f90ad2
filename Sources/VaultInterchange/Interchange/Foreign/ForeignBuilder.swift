import VaultModel

// MARK: - The one builder of entries from foreign items

/// Why a custom field is stored under another name than its label.
public enum ForeignFieldRenaming: Sendable, Hashable {
    /// The label is not a field name (a field name holds only `A–Z a–z 0–9 _ . -`, at most 64):
    /// each other ASCII character became '_', a label with other characters `xn--` and its
    /// Punycode (`ImportedNameCleaner.fieldName(fromLabel:)`); the label is kept in the field `labels`.
    case cleaned
    /// Another field of the entry has the name (the login's `username`, a second `url`…): `_2`,
    /// `_3`… was added; the label is kept in the field `labels`.
    case taken
    /// The name is one vaultfile reads as more than a field (`ForeignBuilder.reservedNames`: a
    /// custom `title` would become the entry's title in an export, a `totp` its TOTP…) and the
    /// reader did not set it as that: `_2` was added (`attachment.NAME`: `attachment_2.NAME`);
    /// the label is kept in the field `labels`.
    case reserved
}

/// Turns a `ForeignImport` into checked entries, identically for every source (docs/INTERCHANGE.md,
/// "Other password managers"): names (`ForeignNaming`), fields, TOTP (`ForeignTOTP`), times,
/// history, and a warning for everything not kept as it was.
enum ForeignBuilder {
    /// The field that keeps the labels of custom fields stored under another name: one line
    /// `FIELD<TAB>LABEL` each.
    static let labelsField = "labels"
    /// What an attachment's field name starts with: `attachment.NAME`, NAME cleaned as a label.
    static let attachmentPrefix = "attachment."
    /// The losses the builder itself names (`notKept`): attachments no field can hold.
    static let largeAttachments = "attachments larger than \(VaultLimits.maxValueLength >> 20) MiB (the most a field holds)"
    static let crowdedAttachments = "attachments beyond an entry's \(VaultLimits.maxFieldsPerEntry) fields"

    /// The field names vaultfile reads as more than a field, with what it reads them as: the
    /// builder's own (`username`, `url`, `notes`, `totp`, `title`), the facts readers keep that an
    /// export reads (`tags`, `expires`, `favorite`), `otp` (read by `totp`), `labels`, an ssh key
    /// entry's mark, and (`reservedMeaning(of:)`) `url2`, `url3`… and `attachment.NAME`. A custom
    /// field of a source with one of these names is stored under another
    /// (`ForeignFieldRenaming.reserved`). vaultfile's own json, csv and dotenv read no field name.
    static let reservedNames: [String: String] = [
        "title": "the entry's title in an export", "username": "the login's username", "url": "the login's URL",
        "notes": "the entry's notes", "totp": "the entry's TOTP", "otp": "the entry's TOTP ('vaultfile totp' reads it)",
        "tags": "KeePass's tags", "expires": "KeePass's expiry time", "favorite": "Bitwarden's favourite mark",
        labelsField: "the labels an import kept", "ssh-key": "the mark of an ssh key entry",
    ]

    /// What vaultfile reads a field called `field` as, when it reads it as more than a field.
    static func reservedMeaning(of field: String) -> String? {
        if let meaning = reservedNames[field] { return meaning }
        if field.hasPrefix(attachmentPrefix) { return "an attachment" }
        if BitwardenJSONExport.isURL(field) { return "a further URL of the login" }
        if BitwardenJSON.passkeyField(field) != nil { return "a passkey of the login (Bitwarden's fido2Credentials)" }
        return nil
    }

    /// The entries of `source`, named, filled and checked (`ImportedEntries`).
    ///
    /// Written straight as vault records (`ImportRecordWriter`: no `Entry`, fields dictionary or
    /// second check of every name) when every entry allows it; otherwise, from the first entry the
    /// writer declines (a non-ASCII name, a limit), built again as entries through
    /// `build(asEntries:)`, the plain reference, whose check names the problem.
    /// `ForeignRecordsTests` ties the two.
    static func build(_ source: ForeignImport, now: Int64, options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        let (named, renamings) = ForeignNaming.names(of: source.items, prefix: options.prefix)
        if var writer = ImportRecordWriter(capacity: source.items.count * 96) {
            var accepted = true
            let outcome = fill(source, named: named, now: now, options: options) { name, item, fields, created, modified in
                accepted = writer.add(name: .string(name), created: created, modified: modified, value: .owned(item.value),
                                      fields: &fields.importFields, in: UnsafeRawBufferPointer(start: nil, count: 0))
                return accepted
            }
            if accepted {
                return finish(try ImportedEntries(written: writer.records(), renamings: renamings), outcome, source: source)
            }
        }
        return try build(asEntries: source, named: named, renamings: renamings, now: now, options: options)
    }

    /// `build(_:now:options:)` of items handed over one at a time as a reader reads them (`read`
    /// calls its sink with each item, then returns what it read besides them): each item is named,
    /// filled, written as its record and wiped at once, so that no item is held beside the input
    /// and the records. When a name comes twice (a repeated title, whose numbering needs every
    /// item), the items are read again holding one name's at a time when `holding` allows and
    /// their names come in order (below); else they are read once more first, for the sort keys of the repeated ones
    /// (`ForeignNaming.Plan`: no password), and then built as read with each name numbered from
    /// that plan (`read` must hand the same items at each call); the renamings are kept as their
    /// facts (`PackedRenamings`).
    /// Nil when the record writer declines an entry (a non-ASCII name, a limit) or the plan cannot
    /// be made (the items changed between reads), and the caller builds from every item read first
    /// (`build(_:now:options:)`), which gives what this gives where both give anything.
    /// A repeated name is told by `StreamedNameCheck`: no table of names while they come in
    /// increasing order (issue 44's memory rule).
    /// `ForeignStreamTests` ties the two.
    ///
    /// `holding`: the reader's items own all they hold (the CSV readers), so a build may keep
    /// one name's items until the next name comes (`build(streamingGroups:)`): an export in
    /// name order whose repeated names come together (a browser's) is then read once more, not twice.
    static func build(streaming read: (ForeignItemSink) throws(VaultError) -> ForeignImport, capacity: Int, now: Int64,
                      options: ForeignBuildOptions, holding: Bool = false) throws(VaultError) -> ImportedEntries? {
        let (built, repeated) = try build(streaming: read, plan: nil, capacity: capacity, now: now, options: options)
        guard repeated else { return built }
        if holding {
            switch try build(streamingGroups: read, capacity: capacity, now: now, options: options) {
            case .built(let grouped): return grouped
            case .refused: return nil
            case .outOfOrder: break
            }
        }
        guard let plan = try plan(read, prefix: options.prefix) else { return nil }
        return try build(streaming: read, plan: plan, capacity: capacity, now: now, options: options).built
    }

    /// The numbering of the items `read` hands over (`ForeignNaming.Plan`), from one read; nil
    /// when the read declined or a row could not be kept.
    private static func plan(_ read: (ForeignItemSink) throws(VaultError) -> ForeignImport, prefix: [String]) throws(VaultError) -> ForeignNaming.Plan? {
        final class Box {
            var plan = ForeignNaming.Plan()
        }
        let box = Box()
        box.plan.prefixBytes = ForeignNaming.prefixBytes(prefix)
        let noting = ForeignItemSink { item in
            defer { item.wipeSecrets() }
            let base = ForeignNaming.base(of: item, prefix: prefix)
            return box.plan.note(item, base: base.named.name, exact: base.exact)
        }
        _ = try read(noting)
        guard !noting.declined, box.plan.decide() else { return nil }
        return box.plan
    }

    /// One streamed build: each item named by `plan` when given; with whether it was declined at
    /// a name that came twice (`plan` nil), which a plan may number.
    private static func build(streaming read: (ForeignItemSink) throws(VaultError) -> ForeignImport, plan: ForeignNaming.Plan?, capacity: Int,
                              now: Int64, options: ForeignBuildOptions) throws(VaultError) -> (built: ImportedEntries?, repeated: Bool) {
        guard let first = ImportRecordWriter(capacity: capacity) else { return (nil, false) }
        // What the sink's body changes (it escapes into the sink).
        final class State {
            var writer: ImportRecordWriter
            var names = StreamedNameCheck()
            var outcome = Outcome()
            var renamings = PackedRenamings.Builder()
            var index = 0
            var repeated = false
            init(_ writer: ImportRecordWriter) { self.writer = writer }
        }
        let state = State(first)
        // A plan numbers repeated names: most items may be renamed (a browser's export), room for each.
        if let plan { state.renamings.reserve(plan.count) }
        let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input
        // Read in place by the sink (binding an optional plan at each item copied its arrays).
        let planned = plan ?? ForeignNaming.Plan(), hasPlan = plan != nil, prefixBytes = ForeignNaming.prefixBytes(options.prefix)
        let sink = ForeignItemSink { item in
            defer { item.wipeSecrets() }
            var base = ForeignNaming.base(of: item, prefix: options.prefix)
            var unnumbered = base.named.name
            var number: UInt32 = 0
            if hasPlan {
                guard let found = planned.number(of: item, at: state.index, base: unnumbered, exact: base.exact) else { return false }
                number = found.number
                if number > 0 {
                    // Cut only when the name and its number pass the limit; the number follows what is left.
                    let fitted = ForeignNaming.numberedFitting(unnumbered, number, prefixBytes: prefixBytes)
                    ForeignNaming.numbered(&base, fitted.name, cut: fitted.cut, item: item, reason: found.reason)
                    unnumbered = fitted.base
                }
            }
            state.index += 1
            // A plan's names are distinct (`Plan.decide`): no name check while they come, and the
            // check of the records written (`ImportedEntries(written:)`) finds a file changed between reads.
            guard hasPlan || state.names.isNew(base.named.name, among: state.writer) else {
                state.repeated = true
                return false
            }
            if base.isListed(sourceHasNoTitles: item.sourceHasNoTitles) {
                ForeignNaming.addRenaming(of: item, base, unnumbered: unnumbered, number: number, prefix: options.prefix, to: &state.renamings)
            }
            return fill(item, named: base.named, now: now, options: options, outcome: &state.outcome) { name, item, fields, created, modified in
                state.writer.add(name: .string(name), created: created, modified: modified, value: .owned(item.value),
                                 fields: &fields.importFields, in: none)
            }
        }
        // The earlier versions noted so far are the only holders of their values (each item is
        // wiped once built): zeroed unless handed over (the stream declined, a read or check failed).
        var handed = false
        defer { if !handed { state.outcome.wipeHistory() } }
        let source = try read(sink)
        guard !sink.declined else { return (nil, state.repeated && plan == nil) }
        guard plan.map({ $0.count == state.index }) ?? true else { return (nil, false) }
        let built = finish(try ImportedEntries(written: state.writer.records(), renamings: state.renamings.finish(), distinct: plan == nil),
                           state.outcome, source: source)
        handed = true
        return (built, false)
    }

    /// `build(_:now:options:)` with an `Entry` per item: the plain reference of the record path.
    static func build(asEntries source: ForeignImport, now: Int64, options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        let (named, renamings) = ForeignNaming.names(of: source.items, prefix: options.prefix)
        return try build(asEntries: source, named: named, renamings: renamings, now: now, options: options)
    }

    private static func build(asEntries source: ForeignImport, named: [ForeignNaming.Named], renamings: [ImportRenaming], now: Int64,
                              options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        var parsed: [(String, Entry)] = []
        parsed.reserveCapacity(source.items.count)
        let outcome = fill(source, named: named, now: now, options: options) { name, item, fields, created, modified in
            parsed.append((name, Entry(value: item.value, fields: fields.values, created: created, modified: modified)))
            return true
        }
        return finish(try ImportedEntries(parsed, renamings: renamings), outcome, source: source)
    }

    /// What filling the entries found besides their fields: warnings, history, losses.
    struct Outcome {
        var fieldRenamings = FieldRenamingTally()
        var totpWarnings: [ImportWarning] = []
        var history: [(name: String, versions: [EntryVersion])] = []
        var versionsLost = 0, entriesLost = 0
        /// Attachments not kept: larger than a field holds (`largeAttachments`), beyond an entry's fields (`crowdedAttachments`).
        var largeAttachmentsLost = 0, crowdedAttachmentsLost = 0
        /// The entry names of the first items each reader's warning names (`ForeignItem.warned`).
        var warnedNames = WarnedNames()
        /// Custom fields beyond an entry's fields, kept as lines of its notes (`customFieldsKept`).
        var fieldsInNotes = NamedCount()
        /// The same, each entry with its count (`EntryWarningSources`).
        var fieldsInNotesByEntry: [(name: String, count: Int)] = []

        /// Zeroes the values and fields of the versions in `history` where they lie (`wipeShared`),
        /// for an outcome given up whose versions nothing else holds (a streamed build's: each
        /// item is wiped once built). Never for a build from items kept (`build(_:now:options:)`):
        /// its versions share the items' values, which a build as entries uses again.
        func wipeHistory() { ImportedEntries.wipe(history) }
    }

    /// Fills each item's fields in item order and hands them to `put` (which returns false to stop).
    private static func fill(_ source: ForeignImport, named: [ForeignNaming.Named], now: Int64, options: ForeignBuildOptions,
                             put: (String, ForeignItem, inout FieldSet, Int64, Int64) -> Bool) -> Outcome {
        var outcome = Outcome()
        for index in source.items.indices {
            guard source.items[index].fields.contains(where: { $0.reference != nil }) else {
                guard fill(source.items[index], named: named[index], now: now, options: options, outcome: &outcome, put: put) else { break }
                continue
            }
            // A field naming another item of the import (a 1pux reference) holds that item's entry name.
            var item = source.items[index]
            for field in item.fields.indices {
                if let target = item.fields[field].reference, named.indices.contains(target) { item.fields[field].value = Array(named[target].name.utf8) }
            }
            guard fill(item, named: named[index], now: now, options: options, outcome: &outcome, put: put) else { break }
        }
        return outcome
    }

    /// Fills one item's fields, hands them to `put`, and notes its history and losses in `outcome`;
    /// false when `put` declined the entry.
    static func fill(_ item: ForeignItem, named: ForeignNaming.Named, now: Int64, options: ForeignBuildOptions, outcome: inout Outcome,
                     put: (String, ForeignItem, inout FieldSet, Int64, Int64) -> Bool) -> Bool {
        let name = named.name
        if !item.warned.isEmpty { outcome.warnedNames.note(item.warned, name: name) }
        var fields = FieldSet()
        // Room for the builder's own fields and the item's: the array never grows by copies.
        // URLs and reader's facts past an entry's fields (a hostile but valid file: 100 URLs, 40
        // passkeys) become `label: value` lines of the notes too, never a failed import.
        let own = ownFieldsKept(urls: item.urls, urlLabels: item.urlLabels, extras: item.extras)
        fields.importFields.reserveCapacity(6 + own.urls.count + own.extras.count + item.fields.count + item.attachments.count)
        if let why = fields.putOwn(username: item.username, urls: own.urls, notes: item.notes, totp: item.totp, name: name) {
            outcome.totpWarnings.append(.totpUnusable(name: name, why: why))
        }
        fields.put("title", named.title)
        // Folders cut short to make the name: the source's own kept (cold62 L1), as a cut title is.
        fields.put("folder", named.folders)
        fields.putURLLabels(item.urlLabels)
        // The reader's facts (`tags`, `favorite`…) before the custom fields, whose names give way to them.
        for extra in own.extras { fields.putCustom(label: extra.label, Array(extra.value.utf8), entry: name, tally: &outcome.fieldRenamings) }
        // The notes' field taken now when lines go to them, so that the custom fields leave it room.
        if !own.moved.isEmpty { fields.putNotes(" ") }
        let notesGiven = own.moved.isEmpty ? item.notes : " "
        var moved = own.moved
        if let custom = customFieldsKept(item.fields, names: item.fieldNames, notes: notesGiven, entry: name, in: &fields, tally: &outcome.fieldRenamings) {
            // More custom fields than an entry holds: some are fields, the rest `label: value` lines of the notes.
            moved += custom
            fields.putNotes(" ")  // the notes' place, kept from the attachments; the lines are written last
        }
        for attachment in inNumberingOrder(item.attachments) {
            // A field holds at most maxValueLength bytes, an entry maxFieldsPerEntry fields (one
            // kept for `labels`): an attachment beyond either is counted, never a failed import.
            if attachment.bytes.count > VaultLimits.maxValueLength {
                outcome.largeAttachmentsLost += 1
            } else if fields.count >= VaultLimits.maxFieldsPerEntry - 1 {
                outcome.crowdedAttachmentsLost += 1
            } else {
                // An empty file is kept as an empty field: it exists, and its name says something.
                fields.putCustom(label: Self.attachmentPrefix + attachment.name, attachment.bytes, entry: name, tally: &outcome.fieldRenamings,
                                 keepEmpty: true)
            }
        }
        fields.putLabels()
        if !moved.isEmpty {
            // Last, when every field has its name: a line never reads as a field's (cold63 F4).
            fields.putNotes(Self.notes(item.notes, with: moved, beside: &fields))
            outcome.fieldsInNotes.add(name, count: moved.count)
            outcome.fieldsInNotesByEntry.append((name, moved.count))
        }
        let created = item.created ?? item.modified ?? now
        let modified = item.modified ?? created
        // The fields of an earlier version the source keeps as a password only (`ForeignVersion.wholeItem`).
        let current = options.keepsHistory && item.history.contains(where: { !$0.wholeItem }) ? fields.values : [:]
        guard put(name, item, &fields, created, modified) else { return false }
        guard !item.history.isEmpty else { return true }
        if options.keepsHistory {
            outcome.history.append((EntryName.normalized(name), versions(of: item, named: named, current: current, modified: modified)))
        } else {
            outcome.versionsLost += item.history.count
            outcome.entriesLost += 1
        }
        return true
    }

    /// The checked entries with the builder's warnings first, their history, and the mark of a foreign import.
    static func finish(_ checked: ImportedEntries, _ outcome: Outcome, source: ForeignImport) -> ImportedEntries {
        var imported = checked
        // The reader's losses and the builder's own (attachments no field holds), each with its reason.
        var losses = ForeignImport(format: source.format)
        (losses.notKept, losses.notKeptReasons) = (source.notKept, source.notKeptReasons)
        losses.notKeep(Self.largeAttachments, count: outcome.largeAttachmentsLost, reason: .statedInText)
        losses.notKeep(Self.crowdedAttachments, count: outcome.crowdedAttachmentsLost)
        var warnings: [ImportWarning] = source.warnings.map(outcome.warnedNames.naming)
            + losses.notKept.sorted { $0.key < $1.key }.map { .notKept(what: $0.key, count: $0.value, reason: losses.reason(notKept: $0.key)) }
        warnings += outcome.fieldRenamings.warnings
        warnings += outcome.totpWarnings
        if outcome.versionsLost > 0 { warnings.append(.historyNotKept(versions: outcome.versionsLost, entries: outcome.entriesLost)) }
        if outcome.fieldsInNotes.items > 0 {
            warnings.append(.fieldsKeptInNotes(count: outcome.fieldsInNotes.count, items: outcome.fieldsInNotes.names, itemCount: outcome.fieldsInNotes.items))
        }
        imported.warnings = warnings + imported.warnings
        if !outcome.fieldRenamings.isEmpty || !outcome.totpWarnings.isEmpty || !outcome.fieldsInNotesByEntry.isEmpty {
            imported.entryWarningSources = EntryWarningSources(fieldRenamings: outcome.fieldRenamings, fieldsInNotes: outcome.fieldsInNotesByEntry)
        }
        if !outcome.history.isEmpty { imported.history = outcome.history }
        imported.fromForeign = true
        return imported
    }

    /// An item's earlier versions as the vault keeps them: newest first, each replaced when the
    /// source says (`ForeignVersion.replaced`), else when the next one (or the item as it is now)
    /// was modified.
    /// A whole version (KeePass's) has its fields named as the item's are (renamings are the
    /// item's, not tallied again), and the `title` the import keeps of a renamed item unless it had
    /// a title of its own; any other is the item's fields now (`current`) with its value, and the
    /// username and notes it names.
    private static func versions(of item: ForeignItem, named: ForeignNaming.Named, current: [String: [UInt8]], modified: Int64) -> [EntryVersion] {
        let name = named.name
        var versions: [EntryVersion] = []
        for (index, version) in item.history.enumerated() {
            let replaced = version.replaced ?? (index + 1 < item.history.count ? (item.history[index + 1].modified ?? modified) : modified)
            let time = version.modified ?? 0
            guard version.wholeItem else {
                var fields = current
                if let username = version.username, !username.isEmpty { fields["username"] = Array(username.utf8) }
                if let notes = version.notes, !notes.isEmpty { fields["notes"] = Array(notes.utf8) }
                versions.append(EntryVersion(entry: Entry(value: version.value, fields: fields, created: time, modified: time), replaced: max(replaced, time)))
                continue
            }
            var set = FieldSet()
            let own = ownFieldsKept(urls: version.urls, urlLabels: version.urlLabels, extras: version.extras)
            _ = set.putOwn(username: version.username, urls: own.urls, notes: version.notes, totp: version.totp, name: name)
            set.put("title", version.title ?? named.title)
            set.put("folder", named.folders)
            set.putURLLabels(version.urlLabels)
            var untallied = FieldRenamingTally()
            for extra in own.extras { set.putCustom(label: extra.label, Array(extra.value.utf8), entry: name, tally: &untallied) }
            if !own.moved.isEmpty { set.putNotes(" ") }
            var moved = own.moved
            if let custom = customFieldsKept(version.fields, notes: own.moved.isEmpty ? version.notes : " ", entry: name, in: &set, tally: &untallied) {
                moved += custom
                set.putNotes(" ")
            }
            for attachment in inNumberingOrder(version.attachments)
            where attachment.bytes.count <= VaultLimits.maxValueLength && set.count < VaultLimits.maxFieldsPerEntry - 1 {
                set.putCustom(label: attachmentPrefix + attachment.name, attachment.bytes, entry: name, tally: &untallied, keepEmpty: true)
            }
            set.putLabels()
            if !moved.isEmpty { set.putNotes(notes(version.notes, with: moved, beside: &set)) }
            let fields = set.values
            versions.append(EntryVersion(entry: Entry(value: version.value, fields: fields, created: time, modified: time), replaced: max(replaced, time)))
        }
        return versions.reversed()
    }
}
