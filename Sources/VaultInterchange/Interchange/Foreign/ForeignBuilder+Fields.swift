import VaultModel

// MARK: - One entry's fields

/// The fields of one entry as the builder fills them: the builder's own names first, then custom
/// labels made field names, each name once.
struct FieldSet {
    /// The fields in the order put (an entry has a handful: a list searched in turn costs less than
    /// a dictionary), as `ImportRecordWriter` takes them, which sorts them in place: the builder's
    /// own names literals (compared without a retain or a string's bytes looked up), the others
    /// strings, the builder's own values the strings the item holds (no copy of their bytes per
    /// entry), custom values their bytes.
    var importFields: [ImportField] = []
    /// `FIELD<TAB>LABEL` for each custom field stored under a name that is not its label.
    private var labels: [String] = []

    /// The number of fields put so far.
    var count: Int { importFields.count }
    /// `count` with the field `labels` that `putLabels()` would add.
    var countWithLabels: Int { count + (labels.isEmpty ? 0 : 1) }

    /// The fields by name, for an `Entry`.
    var values: [String: [UInt8]] {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input
        return Dictionary(importFields.map { ($0.name.string(in: none), $0.value.array(in: none)) }, uniquingKeysWith: { $1 })
    }

    /// The names of the first `indexed.count`… fields, once an entry has more than `listLimit`:
    /// a source can give one item thousands of fields (att60 F2: 20,000 fields of one label in a
    /// 53 KB 1pux, each searched for in turn, took over 11 minutes).
    private var indexed: Set<String> = []
    /// How many of `importFields` are in `indexed` (fields are only appended).
    private var indexedCount = 0
    /// The next number to try for a name numbered before (`_2`, `_3`…, by kind and name): every
    /// lower one is taken, so the k-th field of one label is one try, not k.
    private var nextNumbers: [String: Int] = [:]
    /// Fields searched as a list up to this many (most entries: no set is made).
    private static let listLimit = 16

    /// Whether a field is called `name` (names are ASCII: `==` is their bytes').
    private mutating func has(_ name: String) -> Bool {
        guard importFields.count > Self.listLimit else { return importFields.contains { Self.isCalled($0, name) } }
        while indexedCount < importFields.count {
            let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input
            indexed.insert(importFields[indexedCount].name.string(in: none))
            indexedCount += 1
        }
        return indexed.contains(name)
    }

    /// Whether a field is called `name` (a label, compared by its bytes: never a name, ASCII, that
    /// differs from it only by canonical equivalence).
    mutating func holds(_ name: String) -> Bool {
        name.utf8.allSatisfy { $0 < 0x80 } && has(name)
    }

    /// Whether `field` is called `name`.
    private static func isCalled(_ field: ImportField, _ name: String) -> Bool {
        switch field.name {
        case .string(let given): return given == name
        case .literal(let given):
            return name.utf8.elementsEqual(UnsafeBufferPointer(start: given.utf8Start, count: given.utf8CodeUnitCount))
        case .input, .owned: return false
        }
    }

    /// The first name `numbered(n)` not taken, from the number after the last one given for `key`
    /// (or 2); remembered for the next field of that key.
    private mutating func firstFree(_ key: String, _ numbered: (Int) -> String) -> String {
        var number = nextNumbers[key, default: 2]
        var field = numbered(number)
        while has(field) {
            number += 1
            field = numbered(number)
        }
        nextNumbers[key] = number + 1
        return field
    }

    /// Puts a field of the builder's own (`username`, `url`, `title`…), unless empty.
    mutating func put(_ field: StaticString, _ text: String?) {
        guard let text, !text.isEmpty else { return }
        importFields.append(ImportField(name: .literal(field), value: .string(text)))
    }

    /// `put(_:_:)` of a name made at run time (`url2`, `url3`…).
    private mutating func put(named field: String, _ text: String?) {
        guard let text, !text.isEmpty else { return }
        importFields.append(ImportField(name: .string(field), value: .string(text)))
    }

    /// Puts the builder's own fields of an item or an earlier version: `username`, `url`, `url2`…,
    /// `notes`, and `totp` normalised (labelled with the username, else the entry's `name`);
    /// returns why the TOTP is unusable when it is (kept as its text then).
    mutating func putOwn(username: String?, urls: [String], notes: String?, totp: String?, name: String) -> String? {
        put("username", username)
        for (position, url) in urls.enumerated() {
            if position == 0 { put("url", url) } else { put(named: "url\(position + 1)", url) }
        }
        put("notes", notes)
        guard let totp else { return nil }
        switch ForeignTOTP.normalized(totp, label: username.flatMap { $0.isEmpty ? nil : $0 } ?? name) {
        case .uri(let uri)?: put("totp", uri)
        case .unusable(let text, let why)?:
            put("totp", text)
            return why
        case nil: break
        }
        return nil
    }

    /// Keeps, in `labels`, the source's own name of each URL it named otherwise than exports name
    /// `url2`, `url3`… (KeePass's `KP2A_URL_n`): `labels` maps position 1, 2… of `urls` to it.
    mutating func putURLLabels(_ urlLabels: [Int: String]) {
        guard !urlLabels.isEmpty else { return }  // most items: no sort, no array
        for (position, label) in urlLabels.sorted(by: { $0.key < $1.key }) where position > 0 && has("url\(position + 1)") {
            labels.append("url\(position + 1)\t\(ImportedLabels.storable(label))")
        }
    }

    /// Puts the source's custom fields: first each whose label is already a field name of no
    /// reserved meaning (it keeps that name), then the others cleaned and numbered around them, so
    /// that `a_b` stays `a_b` beside `a b` (`a_b_2`) in either order: a field is reached by the name
    /// it had in the source whenever that name was one. A field the reader named (`names`: by
    /// position, `ForeignItem.fieldNames`) is put under that name, numbered when taken, its
    /// label kept in `labels`. Fields that would take one name are put in the order of
    /// `ForeignBuilder.numberingOrder`, never the file's, so that the same fields in another order
    /// get the same numbers (cold62 L3).
    mutating func putCustomFields(_ list: [ForeignField], names: [Int: String] = [:], entry: String, tally: inout FieldRenamingTally) {
        // Each field's name before numbering (the reader's, else its label cleaned), made once.
        let cleaned = list.indices.map { names[$0] ?? ImportedNameCleaner.fieldName(fromLabel: list[$0].label) }
        let order = ForeignBuilder.numberingOrder(names: cleaned) { ForeignField.numberedBefore(list[$0], list[$1]) }
        // Fields of one name under different headings: each heading kept in its label (cold63 F6).
        let sectioned = order == nil ? [:] : ForeignBuilder.sectionedLabels(list, names: cleaned)
        var renamed: [Int] = []
        for position in list.indices {
            let index = order?[position] ?? position
            let field = list[index]
            guard names[index] == nil, sameUTF8(cleaned[index], field.label), ForeignBuilder.reservedMeaning(of: field.label) == nil else {
                renamed.append(index)
                continue
            }
            putCustom(label: field.label, field.value, entry: entry, tally: &tally, custom: true, cleaned: field.label, kept: sectioned[index])
        }
        for index in renamed {
            // A name the reader chose is one of the builder's own (`username`): taken, so numbered, never reserved-renamed.
            putCustom(label: list[index].label, list[index].value, entry: entry, tally: &tally, custom: names[index] == nil, cleaned: cleaned[index],
                      kept: sectioned[index])
        }
    }

    /// Puts a field under its label made a field name, numbered when taken; each change tallied.
    /// A `custom` field (the source's own, not a fact the reader set) whose name vaultfile reads
    /// as more than a field (`ForeignBuilder.reservedMeaning`) is numbered too. An empty value puts
    /// nothing unless `keepEmpty` (an attachment). `cleaned`: the label made a field name, when the
    /// caller already made it (`putCustomFields`), so that it is not made twice per field.
    /// `kept`: the label `labels` keeps in place of `label` (`SECTION / LABEL`), whatever the name.
    mutating func putCustom(label: String, _ value: [UInt8], entry: String, tally: inout FieldRenamingTally, keepEmpty: Bool = false,
                            custom: Bool = false, cleaned given: String? = nil, kept: String? = nil) {
        guard keepEmpty || !value.isEmpty else { return }
        let cleaned = given ?? ImportedNameCleaner.fieldName(fromLabel: label)
        var field = cleaned
        func suffixed(_ number: Int) -> String {
            let suffix = "_\(number)"
            return String(cleaned.prefix(VaultLimits.maxFieldNameLength - suffix.count)) + suffix
        }
        if custom, ForeignBuilder.reservedMeaning(of: cleaned) != nil {
            if cleaned.hasPrefix(ForeignBuilder.attachmentPrefix) {
                // `attachment.x_2` would still be an attachment: the mark itself is numbered.
                let rest = cleaned.dropFirst(ForeignBuilder.attachmentPrefix.count)
                field = firstFree("a\u{0}" + cleaned) { number in
                    let head = "attachment_\(number)."
                    return head + String(rest.prefix(VaultLimits.maxFieldNameLength - head.count))
                }
            } else {
                field = firstFree("n\u{0}" + cleaned, suffixed)
            }
            tally.add(label: label, field: field, entry: entry, reason: .reserved)
        } else if has(field) || field == ForeignBuilder.labelsField {
            field = firstFree("n\u{0}" + cleaned, suffixed)
            tally.add(label: label, field: field, entry: entry, reason: .taken)
        } else if !sameUTF8(field, label) {
            tally.add(label: label, field: field, entry: entry, reason: .cleaned)
        }
        if let kept {
            labels.append("\(field)\t\(ImportedLabels.storable(kept))")
        } else if !sameUTF8(field, label) {
            labels.append("\(field)\t\(ImportedLabels.storable(label))")
        }
        importFields.append(ImportField(name: .string(field), value: .owned(value)))
    }

    /// Sets the field `notes` to `text`, in place of the notes put before (`putOwn`) if any.
    mutating func putNotes(_ text: String) {
        guard !text.isEmpty else { return }
        let notes = ImportField(name: .literal("notes"), value: .string(text))
        if let index = importFields.firstIndex(where: { Self.isCalled($0, "notes") }) { importFields[index] = notes } else { importFields.append(notes) }
    }

    /// Puts the field `labels` when a label was not kept as its field's name: its lines in the
    /// order of their field names' bytes (each name once, and a tab before any name character, so
    /// the lines' own bytes), never the file's, so that an export listing the same fields in
    /// another order gives the same `labels` and `--skip-existing` or `--overwrite` sees no change
    /// (cold63 F2).
    mutating func putLabels() {
        guard !labels.isEmpty else { return }
        if labels.count > 1 { labels.sort { compareUTF8($0, $1) < 0 } }
        importFields.append(ImportField(name: .string(ForeignBuilder.labelsField), value: .owned(Array((labels.joined(separator: "\n") + "\n").utf8))))
    }
}

// MARK: - The order of the fields that would take one name

extension ForeignBuilder {
    /// The positions `0..<names.count` in the order their fields are put and numbered: the file's,
    /// except that the positions of the fields that would take one name (`names`, before
    /// numbering) are filled again with those fields sorted by `before`, so that `API_Key` and
    /// `API_Key_2` hold the same values whatever order the file lists them in (cold62 L3; titles
    /// are numbered by account for the same reason, `ForeignNaming`). Nil when no two names are
    /// equal (most items: then the file's order, and no array is made).
    static func numberingOrder(names: [String], before: (Int, Int) -> Bool) -> [Int]? {
        guard names.count > 1 else { return nil }
        if names.count <= 16 {
            // A few fields: compared in pairs, with no dictionary made.
            var repeated = false
            for first in names.indices where !repeated {
                repeated = names[(first + 1)...].contains(names[first])
            }
            guard repeated else { return nil }
        }
        var groups: [String: [Int]] = [:]
        for (index, name) in names.enumerated() { groups[name, default: []].append(index) }
        guard groups.count < names.count else { return nil }
        var order = Array(names.indices)
        for positions in groups.values where positions.count > 1 {
            // Equal by `before`: the file's order (a stable sort, said rather than assumed).
            let sorted = positions.sorted { before($0, $1) || (!before($1, $0) && $0 < $1) }
            for (position, index) in zip(positions, sorted) { order[position] = index }
        }
        return order
    }

    /// The labels `labels` keeps for fields (by position in `list`) that would take one name
    /// (`names`, before numbering) under different headings: `SECTION / LABEL` for each such
    /// field under a heading a person wrote (a 1pux section's title, an Enpass heading; never a
    /// 1pux section's id), so that `API_Key` of "Prod" and of "Dev" are told apart, found by
    /// `get --field 'Prod / API_Key'`, and exported under those labels (cold63 F6). Empty when no
    /// such group (most items: no dictionary made).
    static func sectionedLabels(_ list: [ForeignField], names: [String]) -> [Int: String] {
        func heading(_ field: ForeignField) -> String? {
            guard !field.sectionUntitled, let section = field.section, !section.isEmpty else { return nil }
            return section
        }
        guard list.contains(where: { heading($0) != nil }) else { return [:] }
        var groups: [String: [Int]] = [:]
        for (index, name) in names.enumerated() { groups[name, default: []].append(index) }
        var kept: [Int: String] = [:]
        for positions in groups.values where positions.count > 1 {
            // Headings compared by bytes (`Set<String>` would take canonically equal ones as one).
            let first = heading(list[positions[0]]) ?? ""
            guard positions.contains(where: { !sameUTF8(heading(list[$0]) ?? "", first) }) else { continue }
            for index in positions {
                if let section = heading(list[index]) { kept[index] = "\(section) / \(list[index].label)" }
            }
        }
        return kept
    }

    /// `attachments` in the order they are put and numbered (`numberingOrder`): two that would
    /// take one field name (`attachment.a.txt`, `attachment.a.txt_2`) by name, then the file's order.
    static func inNumberingOrder(_ attachments: [ForeignAttachment]) -> [ForeignAttachment] {
        guard attachments.count > 1 else { return attachments }
        let names = attachments.map { ImportedNameCleaner.fieldName(fromLabel: attachmentPrefix + $0.name) }
        let order = numberingOrder(names: names) { ForeignAttachment.numberedBefore(attachments[$0], attachments[$1]) }
        return order.map { $0.map { attachments[$0] } } ?? attachments
    }
}

extension ForeignField {
    /// Whether `first` is numbered before `second` when both would take one name: by label (two
    /// labels can be cleaned to one name), then section (`section`: a 1pux section's title, an
    /// Enpass heading), each compared by bytes; fields equal in both keep the file's order
    /// (`numberingOrder`). Never by value: then a changed value could move its neighbour's name
    /// (att63 F2: rotating the dev key moved the unchanged prod key from `API_Key_2` to
    /// `API_Key`), and a secret rotated is far likelier than an export reordered.
    static func numberedBefore(_ first: ForeignField, _ second: ForeignField) -> Bool {
        let label = compareUTF8(first.label, second.label)
        if label != 0 { return label < 0 }
        return compareUTF8(first.section ?? "", second.section ?? "") < 0
    }
}

extension ForeignAttachment {
    /// Whether `first` is numbered before `second` when both would take one field name: by name;
    /// equal names keep the file's order, never their bytes' (`ForeignField.numberedBefore`).
    static func numberedBefore(_ first: ForeignAttachment, _ second: ForeignAttachment) -> Bool {
        compareUTF8(first.name, second.name) < 0
    }
}

// MARK: - Field renamings, counted

/// Field renamings of one import, counted by label, field and reason, in the order first seen:
/// one warning each, however many entries had it. Each renaming's entries are kept (a name
/// shared, not copied), so that `--skip-existing` can leave out the entries it skips (cold63 F10).
struct FieldRenamingTally: Sendable {
    private struct Key: Hashable, Sendable {
        var label: [UInt8]
        var field: String
        var reason: ForeignFieldRenaming
    }

    private var order: [Key] = []
    private var found: [Key: (label: String, entries: [String])] = [:]

    mutating func add(label: String, field: String, entry: String, reason: ForeignFieldRenaming) {
        let key = Key(label: Array(label.utf8), field: field, reason: reason)
        if found[key] != nil {
            found[key]!.entries.append(entry)
        } else {
            order.append(key)
            found[key] = (label, [entry])
        }
    }

    /// Whether no field was renamed.
    var isEmpty: Bool { order.isEmpty }

    var warnings: [ImportWarning] { warnings(keeping: { _ in true }, renaming: { $0 }) }

    /// The warnings of the entries `isKept` keeps, each named as `rename` names it; a renaming
    /// none of them had gives none.
    func warnings(keeping isKept: (String) -> Bool, renaming rename: (String) -> String) -> [ImportWarning] {
        order.compactMap { key in
            let (label, entries) = found[key]!
            let kept = entries.filter(isKept)
            guard let example = kept.first else { return nil }
            return .fieldRenamed(label: label, field: key.field, count: kept.count, example: rename(example), reason: key.reason)
        }
    }
}

// MARK: - The warnings about single entries, for entries left out

/// What the builder's warnings about single entries were made of (`ForeignBuilder.finish`): the
/// field renamings, the unusable TOTPs, and the fields kept in notes, each with its entries, so
/// that `import --skip-existing` says them only for the entries it imports (cold63 F10: before,
/// it warned of renamed fields of items it then skipped).
struct EntryWarningSources: Sendable {
    var fieldRenamings = FieldRenamingTally()
    /// Entries with fields kept as lines of their notes, and how many.
    var fieldsInNotes: [(name: String, count: Int)] = []

    /// `warnings` with those about single entries made again for the entries `isKept` keeps,
    /// named as `rename` names them, in the places the first of their kind held.
    func narrowed(_ warnings: [ImportWarning], keeping isKept: (String) -> Bool, renaming rename: (String) -> String) -> [ImportWarning] {
        var result: [ImportWarning] = []
        var renamingsPlaced = false
        for warning in warnings {
            switch warning {
            case .fieldRenamed:
                if !renamingsPlaced { result += fieldRenamings.warnings(keeping: isKept, renaming: rename) }
                renamingsPlaced = true
            case .totpUnusable(let name, let why):
                if isKept(name) { result.append(.totpUnusable(name: rename(name), why: why)) }
            case .fieldsKeptInNotes:
                var kept = NamedCount()
                for (name, count) in fieldsInNotes where isKept(name) { kept.add(rename(name), count: count) }
                if kept.items > 0 { result.append(.fieldsKeptInNotes(count: kept.count, items: kept.names, itemCount: kept.items)) }
            default:
                result.append(warning)
            }
        }
        return result
    }
}
