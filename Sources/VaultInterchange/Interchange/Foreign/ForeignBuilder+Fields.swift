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

    /// The fields by name, for an `Entry`.
    var values: [String: [UInt8]] {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)  // no field is a range of an input
        return Dictionary(importFields.map { ($0.name.string(in: none), $0.value.array(in: none)) }, uniquingKeysWith: { $1 })
    }

    /// Whether a field is called `name` (names are ASCII: `==` is their bytes').
    private func has(_ name: String) -> Bool {
        importFields.contains { field in
            switch field.name {
            case .string(let given): return given == name
            case .literal(let given):
                return name.utf8.elementsEqual(UnsafeBufferPointer(start: given.utf8Start, count: given.utf8CodeUnitCount))
            case .input, .owned: return false
            }
        }
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
    /// label kept in `labels`.
    mutating func putCustomFields(_ list: [ForeignField], names: [Int: String] = [:], entry: String, tally: inout FieldRenamingTally) {
        var renamed: [Int] = []
        for (index, field) in list.enumerated() {
            guard names.isEmpty || names[index] == nil,
                  sameUTF8(ImportedNameCleaner.fieldName(fromLabel: field.label), field.label),
                  ForeignBuilder.reservedMeaning(of: field.label) == nil else {
                renamed.append(index)
                continue
            }
            putCustom(label: field.label, field.value, entry: entry, tally: &tally, custom: true, cleaned: field.label)
        }
        for index in renamed {
            // A name the reader chose is one of the builder's own (`username`): taken, so numbered, never reserved-renamed.
            putCustom(label: list[index].label, list[index].value, entry: entry, tally: &tally, custom: names[index] == nil, cleaned: names[index])
        }
    }

    /// Puts a field under its label made a field name, numbered when taken; each change tallied.
    /// A `custom` field (the source's own, not a fact the reader set) whose name vaultfile reads
    /// as more than a field (`ForeignBuilder.reservedMeaning`) is numbered too. An empty value puts
    /// nothing unless `keepEmpty` (an attachment). `cleaned`: the label made a field name, when the
    /// caller already made it (`putCustomFields`), so that it is not made twice per field.
    mutating func putCustom(label: String, _ value: [UInt8], entry: String, tally: inout FieldRenamingTally, keepEmpty: Bool = false,
                            custom: Bool = false, cleaned given: String? = nil) {
        guard keepEmpty || !value.isEmpty else { return }
        let cleaned = given ?? ImportedNameCleaner.fieldName(fromLabel: label)
        var field = cleaned
        if custom, ForeignBuilder.reservedMeaning(of: cleaned) != nil {
            var number = 2
            repeat {
                if cleaned.hasPrefix(ForeignBuilder.attachmentPrefix) {
                    // `attachment.x_2` would still be an attachment: the mark itself is numbered.
                    let rest = cleaned.dropFirst(ForeignBuilder.attachmentPrefix.count)
                    let head = "attachment_\(number)."
                    field = head + String(rest.prefix(VaultLimits.maxFieldNameLength - head.count))
                } else {
                    let suffix = "_\(number)"
                    field = String(cleaned.prefix(VaultLimits.maxFieldNameLength - suffix.count)) + suffix
                }
                number += 1
            } while has(field)
            tally.add(label: label, field: field, entry: entry, reason: .reserved)
        } else if has(field) || field == ForeignBuilder.labelsField {
            var number = 2
            repeat {
                let suffix = "_\(number)"
                field = String(cleaned.prefix(VaultLimits.maxFieldNameLength - suffix.count)) + suffix
                number += 1
            } while has(field)
            tally.add(label: label, field: field, entry: entry, reason: .taken)
        } else if !sameUTF8(field, label) {
            tally.add(label: label, field: field, entry: entry, reason: .cleaned)
        }
        if !sameUTF8(field, label) { labels.append("\(field)\t\(ImportedLabels.storable(label))") }
        importFields.append(ImportField(name: .string(field), value: .owned(value)))
    }

    /// Puts the field `labels` when a label was not kept as its field's name.
    mutating func putLabels() {
        guard !labels.isEmpty else { return }
        importFields.append(ImportField(name: .string(ForeignBuilder.labelsField), value: .owned(Array((labels.joined(separator: "\n") + "\n").utf8))))
    }
}

// MARK: - Field renamings, counted

/// Field renamings of one import, counted by label, field and reason, in the order first seen:
/// one warning each, however many entries had it.
struct FieldRenamingTally {
    private struct Key: Hashable {
        var label: [UInt8]
        var field: String
        var reason: ForeignFieldRenaming
    }

    private var order: [Key] = []
    private var counts: [Key: (label: String, count: Int, example: String)] = [:]

    mutating func add(label: String, field: String, entry: String, reason: ForeignFieldRenaming) {
        let key = Key(label: Array(label.utf8), field: field, reason: reason)
        if let found = counts[key] {
            counts[key] = (found.label, found.count + 1, found.example)
        } else {
            order.append(key)
            counts[key] = (label, 1, entry)
        }
    }

    var warnings: [ImportWarning] {
        order.map { key in
            let found = counts[key]!
            return .fieldRenamed(label: found.label, field: key.field, count: found.count, example: found.example, reason: key.reason)
        }
    }
}
