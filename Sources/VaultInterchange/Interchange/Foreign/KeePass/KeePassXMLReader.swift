import SecureMemory
import VaultModel

// MARK: - keepass-xml

/// `--format keepass-xml`: the XML that KeePass 2 (File > Export > KeePass XML (2.x)) and
/// `keepassxc-cli export --format xml` write. Groups become folders (the root group dropped,
/// whatever its name); Title, UserName, Password, URL (and Keepass2Android's `KP2A_URL*`, which
/// KeePassXC uses for more URLs), Notes, the TOTP attributes, custom attributes (protected or not),
/// attachments, tags, the expiry time, creation and modification times and each entry's history
/// are kept; everything else is counted in `notKept`. Entries in the recycle bin (and its groups)
/// are not imported: they are counted as "entries in KeePass's recycle bin".
enum KeePassXMLReader {
    /// How many items without their attachments' data the warning names (then "and N more").
    static let namedMissingData = 3

    /// The start of a warning for an entry element vaultfile does not read, followed by its name.
    static let otherElementPrefix = "KeePass's entry element "
    /// The most element names one import names in its warnings.
    static let maxOtherElementNames = 8

    /// Less than the XML of one entry (`<Entry>`, its UUID, Times and a String or two): the room
    /// reserved for the items is the document's size divided by this, at most `maxItemsReserved`.
    static let bytesPerEntry = 256
    static let maxItemsReserved = 1 << 19

    /// Everything `bytes` holds, as items; with a `sink`, each item is handed to it as read
    /// (`read(_:format:pool:headerHash:documentBytes:each:)`).
    static func read(_ bytes: [UInt8], now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        try read(bytes, now: now, format: "keepass-xml", unprotect: nil, pool: nil,
                 budget: ExpansionBudget(inputBytes: bytes.count, what: "the KeePass XML"), each: sink)
    }

    /// Everything the XML `bytes` holds, as items of `format`: a KDBX file's XML passes the inner
    /// stream that undoes its protected values (`unprotect`) and, for KDBX 4, the binaries of its
    /// inner header (`pool`, which attachments' `Ref` index instead of Meta/Binaries). What Meta's
    /// compressed binaries inflate to and every copy a `Ref` makes into an entry count against
    /// `budget`, which follows the size of the file as read (a KDBX file's, not its XML's).
    static func read(_ bytes: [UInt8], now: Int64, format: String, unprotect: ((inout [UInt8]) throws(VaultError) -> Void)?,
                     pool: [[UInt8]]?, budget: ExpansionBudget, headerHash: [UInt8]? = nil,
                     each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var parser = try KeePassXMLParser(bytes, unprotect: unprotect, budget: budget)
        return try read(&parser, format: format, pool: pool, headerHash: headerHash, documentBytes: bytes.count, each: sink)
    }

    /// Everything the document `parser` reads holds, as items of `format` (`pool` and `headerHash`
    /// as above); a streamed parser's reader is wiped at the end, whatever happened.
    ///
    /// `documentBytes`, the document's size (a KDBX payload's declared size), sets room for the
    /// items before the first is read: an entry takes more than `bytesPerEntry` bytes of XML, so
    /// the items never move to a larger array (which held the old and the new at once). Room
    /// never filled is address space, not memory.
    ///
    /// With a `sink`, each item goes to it as read, none kept in `items` (`ForeignBuilder.build(streaming:)`):
    /// an entry's groups enclose it, so its folders are known when it is read. The sink is
    /// declined where an item could differ from what the plain read gives it: an attachment
    /// referencing Meta/Binaries before Meta was read, or copies by reference beyond the budget
    /// (whose error the plain read gives). The losses, warnings and errors are the plain read's.
    static func read(_ parser: inout KeePassXMLParser, format: String, pool: [[UInt8]]?, headerHash: [UInt8]? = nil,
                     documentBytes: Int = 0, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        defer { parser.wipe() }
        var result = ForeignImport(format: format)
        if sink == nil { result.items.reserveCapacity(min(documentBytes / bytesPerEntry, maxItemsReserved)) }
        parser.expectedHeaderHash = headerHash
        /// Attachments given by reference: item, history version (nil: the item's own), attachment,
        /// pool ID (the pool may come after them).
        var references: [(item: Int, version: Int?, attachment: Int, id: Int)] = []
        var losses = ForeignImport(format: format)  // the entries' (`fill`), each with its reason
        var groupsWithNotes: Set<String> = []
        var inRecycleBin = 0
        var streamed = Streamed(budget: parser.budget)
        // Each item starts as a copy of this one: `ForeignItem.init` built each aside and copied it.
        let blank = ForeignItem()
        // The entries `fill` counted for an unprotected custom string: the first ones named (cold60 L4).
        var unprotectedCounted = 0
        var unprotectedNames: [String] = []
        func noteUnprotected(_ item: inout ForeignItem) {
            let count = losses.notKept[Self.unprotectedMark] ?? 0
            guard count > unprotectedCounted else { return }
            unprotectedCounted = count
            item.warned.insert(.unprotectedStrings)
            if unprotectedNames.count < Self.namedMissingData { unprotectedNames.append((item.folders + [item.title]).joined(separator: "/")) }
        }
        var meta = try parser.parse(metaRead: { streamed.meta = $0 }) { (entry, groups, folders) throws(VaultError) in
            // What the user deleted in KeePass stays deleted: not imported, counted.
            if groups.contains(where: \.isRecycleBin) { inRecycleBin += 1; return }
            for group in groups.dropFirst() where !group.notes.isEmpty { groupsWithNotes.insert(group.uuid + "/" + group.name) }
            if let sink {
                guard !sink.declined else { return }  // read on for the losses and errors; the plain read builds
                var item = blank
                item.folders = folders
                Self.fill(&item, from: &entry, losses: &losses)
                noteUnprotected(&item)
                guard streamed.attach(entry, to: &item, pool: pool) else { sink.decline(); return }
                result.add(&item, to: sink)
                return
            }
            var item = blank
            item.folders = folders
            Self.fill(&item, from: &entry, losses: &losses)
            noteUnprotected(&item)
            for (index, attachment) in entry.attachments.enumerated() {
                if let id = attachment.reference { references.append((result.items.count, nil, index, id)) }
                item.attachments.append(ForeignAttachment(name: attachment.name, bytes: attachment.bytes))
            }
            for (version, earlier) in entry.history.enumerated() {
                for (index, attachment) in earlier.attachments.enumerated() {
                    if let id = attachment.reference { references.append((result.items.count, version, index, id)) }
                    item.history[version].attachments.append(ForeignAttachment(name: attachment.name, bytes: attachment.bytes))
                }
            }
            result.items.append(item)
        }
        // Each reference copies its binary into an entry: counted against the document's budget.
        // KeePassXC's XML export leaves the pool out (its attachments are references to nothing):
        // such attachments are not kept, counted, and the entries imported.
        var budget = parser.budget
        var missing: [(item: Int, version: Int?, attachment: Int)] = []
        if sink != nil {
            // The copies counted in the plain read's order, after the pool's inflation: its error, if any.
            for (count, name) in streamed.copies { try budget.spend(count, on: name) }
            streamed.meta = nil
            if pool == nil { parser.dropPool(); wipePool(&meta) }
        }
        let binaries = pool.map { Dictionary(uniqueKeysWithValues: $0.enumerated().map { ($0.offset, $0.element) }) } ?? meta.binaries
        for reference in references {
            let (item, version, attachment) = (reference.item, reference.version, reference.attachment)
            guard let bytes = binaries[reference.id] else { missing.append((item, version, attachment)); continue }
            if let version {
                try budget.spend(bytes.count, on: result.items[item].history[version].attachments[attachment].name)
                result.items[item].history[version].attachments[attachment].bytes = bytes
            } else {
                try budget.spend(bytes.count, on: result.items[item].attachments[attachment].name)
                result.items[item].attachments[attachment].bytes = bytes
            }
        }
        for gone in missing.reversed() {
            if let version = gone.version {
                result.items[gone.item].history[version].attachments.remove(at: gone.attachment)
            } else {
                result.items[gone.item].attachments.remove(at: gone.attachment)
            }
        }
        // Said with the first entries' names, as attachments without their data are.
        if let count = losses.notKept.removeValue(forKey: Self.unprotectedMark) {
            result.warnings.append(.unprotectedStringsNotKept(items: unprotectedNames, count: count))
        }
        (result.notKept, result.notKeptReasons) = (losses.notKept, losses.notKeptReasons)
        result.notKeep("KeePass's group notes", count: groupsWithNotes.count)
        result.notKeep("KeePass's database name and description", count: meta.databaseName.isEmpty && meta.databaseDescription.isEmpty ? 0 : 1)
        result.notKeep("KeePass's custom icons", count: meta.customIcons)
        result.notKeep("KeePass's database custom data (plugin settings)", count: meta.customDataItems, reason: .statedInText)
        result.notKeep("KeePass's deleted-object records", count: meta.deletedObjects, reason: .deletedInSource)
        result.notKeep("entries in KeePass's recycle bin", count: inRecycleBin, reason: .deletedInSource)
        // Said with the first items' names, so that 'keepassxc-cli attachment-export' can be aimed.
        let itemsMissing = Set(missing.map(\.item)).sorted()
        for index in itemsMissing { result.items[index].warned.insert(.attachmentDataMissing) }
        let missingCount = itemsMissing.count + streamed.itemsMissingData
        if missingCount > 0 {
            let names = streamed.namesMissingData + itemsMissing.prefix(Self.namedMissingData).map { (result.items[$0].folders + [result.items[$0].title]).joined(separator: "/") }
            result.warnings.append(.attachmentDataMissing(items: Array(names.prefix(Self.namedMissingData)), count: missingCount))
        }
        // KDBX 3.1 without Meta/HeaderHash (KeePass before 2.20 wrote none): opened, as KeePass and
        // KeePassXC open it, and said.
        if headerHash != nil, !parser.headerHashSeen { result.warnings.append(.headerNotAuthenticated(file: budget.what)) }
        return result
    }

    /// Zeroes Meta/Binaries in place once nothing else holds them (the streamed read: no item
    /// keeps a share of them for `ForeignImport.wipe()` to wipe).
    private static func wipePool(_ meta: inout KeePassMeta) {
        let ids = Array(meta.binaries.keys)
        for id in ids { SecureMemory.wipe(&meta.binaries[id]!) }
        meta.binaries = [:]
    }

    /// What the streamed read (`read` with a sink) keeps while it reads: Meta once read, the
    /// copies references made (size and attachment name, in document order), the items some of
    /// whose attachments have no data, and the budget the copies are checked against as they come.
    private struct Streamed {
        var meta: KeePassMeta?
        var copies: [(count: Int, name: String)] = []
        var itemsMissingData = 0
        /// The first few of those items, by group path and title (named in the warning).
        var namesMissingData: [String] = []
        /// The copies alone, against the document's budget before the parse: bounds what they put
        /// into the records before the plain count (pool inflation first) is made at the end.
        var budget: ExpansionBudget

        /// Fills the attachments of `item` and its versions from `entry`, each reference resolved
        /// as the plain read resolves it (missing data: the attachment dropped, the item counted);
        /// false when that cannot be told yet (Meta not read) or the copies exceed the budget.
        mutating func attach(_ entry: KeePassEntry, to item: inout ForeignItem, pool: [[UInt8]]?) -> Bool {
            var missing = false
            guard let own = resolved(entry.attachments, pool: pool, missing: &missing) else { return false }
            item.attachments = own
            for (version, earlier) in entry.history.enumerated() {
                guard let kept = resolved(earlier.attachments, pool: pool, missing: &missing) else { return false }
                item.history[version].attachments = kept
            }
            if missing {
                item.warned.insert(.attachmentDataMissing)
                itemsMissingData += 1
                if namesMissingData.count < KeePassXMLReader.namedMissingData { namesMissingData.append((item.folders + [item.title]).joined(separator: "/")) }
            }
            return true
        }

        private mutating func resolved(_ attachments: [KeePassAttachment], pool: [[UInt8]]?, missing: inout Bool) -> [ForeignAttachment]? {
            var kept: [ForeignAttachment] = []
            for attachment in attachments {
                guard let id = attachment.reference else {
                    kept.append(ForeignAttachment(name: attachment.name, bytes: attachment.bytes))
                    continue
                }
                let bytes: [UInt8]?
                if let pool {
                    bytes = pool.indices.contains(id) ? pool[id] : nil
                } else {
                    guard let meta else { return nil }  // Meta after Root: the pool is not known yet
                    bytes = meta.binaries[id]
                }
                guard let bytes else { missing = true; continue }
                guard (try? budget.spend(bytes.count, on: attachment.name)) != nil else { return nil }
                copies.append((bytes.count, attachment.name))
                kept.append(ForeignAttachment(name: attachment.name, bytes: bytes))
            }
            return kept
        }
    }

    /// Fills `item` (its folders set) with one entry; what the entry holds that the item cannot
    /// is counted in `losses`. The password's and the custom attributes' values are taken from
    /// `entry` (moved, not shared: the item's secrets are then its own to wipe in place), which
    /// keeps the rest. (Filled in place: an item returned was copied once more.)
    private static func fill(_ item: inout ForeignItem, from entry: inout KeePassEntry, losses: inout ForeignImport) {
        // The first string of each standard key (as `KeePassEntry.string(_:)` finds it), told by
        // the kinds the parser gave the keys; and whether any key is one a TOTP is read from.
        // A vault's field has no protected flag (every field is encrypted alike), and the kdbx and
        // keepass-xml exports protect every custom string: a protected one comes back protected, an
        // unprotected one (a port, a user name of a second account) does not come back as it was
        // (cold58 L10). Counted per entry (before the values are taken); the flags of earlier versions follow the entry's.
        if entry.strings.contains(where: { $0.kind == .other && !$0.protected && !$0.value.isEmpty }) {
            losses.notKeep(Self.unprotectedMark)
        }
        var title: Int?, userName: Int?, password: Int?, url: Int?, notes: Int?
        var mayHoldTOTP = false
        for index in entry.strings.indices {
            switch entry.strings[index].kind {
            case .title: if title == nil { title = index }
            case .userName: if userName == nil { userName = index }
            case .password: if password == nil { password = index }
            case .url: if url == nil { url = index }
            case .notes: if notes == nil { notes = index }
            case .totp: mayHoldTOTP = true
            case .kp2aURL, .other: break
            }
        }
        func text(_ index: Int?) -> String? {
            guard let index, !entry.strings[index].value.isEmpty else { return nil }
            return String(decoding: entry.strings[index].value, as: UTF8.self)
        }
        let titleText = text(title) ?? ""
        let (userNameText, notesText, urlText) = (text(userName), text(notes), text(url))
        let totp = mayHoldTOTP ? KeePassTOTP.totp(of: entry.strings, title: titleText) : nil
        item.title = titleText
        if let password { item.value = taken(&entry.strings[password].value) }
        item.username = userNameText
        item.notes = notesText
        item.totp = totp?.totp
        if let urlText { item.urls.append(urlText) }
        var furtherURLs: [Int] = []
        for index in entry.strings.indices {
            let kind = entry.strings[index].kind
            // The standard keys are the item's own; the keys the TOTP was made from are no fields.
            if kind.isStandard { continue }
            if kind == .totp, let totp, totp.keys.contains(entry.strings[index].key) { continue }
            if kind == .kp2aURL, !entry.strings[index].value.isEmpty {
                furtherURLs.append(index)
            } else {
                item.fields.append(ForeignField(label: entry.strings[index].key, value: taken(&entry.strings[index].value),
                                                protected: entry.strings[index].protected))
            }
        }
        // In KeePassXC's order, by number (it writes the strings sorted by key: `KP2A_URL_10`
        // before `KP2A_URL_2`), so that `url3` is the second further URL (cold63 F5).
        for index in Self.inURLOrder(furtherURLs, of: entry.strings) {
            // The export names `url2`, `url3`… KP2A_URL, KP2A_URL_1…: another name is kept.
            let position = item.urls.count
            let key = entry.strings[index].key
            if position > 0, key != (position == 1 ? "KP2A_URL" : "KP2A_URL_\(position - 1)") { item.urlLabels[position] = key }
            item.urls.append(String(decoding: entry.strings[index].value, as: UTF8.self))
        }
        item.created = entry.times.created
        item.modified = entry.times.modified ?? entry.times.created
        let tags = entry.tags.trimmingASCIISpaces
        if !tags.isEmpty { item.extras.append((label: "tags", value: tags)) }
        if entry.times.expires, let expiry = entry.times.expiry {
            item.extras.append((label: "expires", value: UTCTime.rfc3339(milliseconds: expiry)))
        }
        // Each version as the whole entry it was (the vault's history keeps an entry's every
        // field): its URLs, custom attributes, TOTP, tags, expiry, attachments (by reference:
        // filled by `read`), and its title when it was not the entry's title now. What only the
        // entry itself carries (icons, colours, UUIDs…) is counted once, for the entry.
        for version in entry.history.indices {
            var counted = ForeignImport(format: "")
            var was = ForeignItem(folders: item.folders)
            Self.fill(&was, from: &entry.history[version], losses: &counted)
            var kept = ForeignVersion(value: was.value, username: was.username, notes: was.notes, modified: entry.history[version].times.modified)
            kept.title = was.title == titleText ? nil : was.title
            kept.wholeItem = true
            (kept.urls, kept.urlLabels, kept.totp) = (was.urls, was.urlLabels, was.totp)
            (kept.fields, kept.extras) = (was.fields, was.extras)
            item.history.append(kept)
        }
        // An entry that carries none of these (an export converted from another manager): one test.
        guard !entry.uuid.isEmpty || entry.hasIcon || entry.hasColors || !entry.overrideURL.isEmpty || entry.hasAutoTypeSettings
                || entry.customDataItems > 0 || entry.times.hasUsage || !entry.otherElements.isEmpty else { return }
        func lost(_ what: String, _ yes: Bool, _ reason: NotKeptReason = .noPlace) { if yes { losses.notKeep(what, reason: reason) } }
        lost("KeePass's entry UUIDs", !entry.uuid.isEmpty)
        lost("KeePass's entry icons", entry.hasIcon)
        lost("KeePass's entry colours", entry.hasColors)
        lost("KeePass's override URLs", !entry.overrideURL.isEmpty)
        lost("KeePass's auto-type settings", entry.hasAutoTypeSettings)
        lost("KeePass's entry custom data (plugin and browser settings)", entry.customDataItems > 0, .statedInText)
        lost("KeePass's last-access times, usage counts and location-change times", entry.times.hasUsage)
        // Each element by name (KeePassXC writes PreviousParentGroup, KeePass QualityCheck), in a
        // warning of its own with its count; beyond `maxOtherElementNames` names in one import
        // (only a made-up file has so many), the rest are counted together.
        for element in entry.otherElements.isEmpty ? [] : entry.otherElements.sorted() {
            let known = losses.notKept.keys.filter { $0.hasPrefix(Self.otherElementPrefix) }.count
            let what = Self.otherElementPrefix + "<\(element.prefix(64))>"
            lost(losses.notKept[what] != nil || known < Self.maxOtherElementNames ? what : "other KeePass entry elements", true)
        }
    }

    /// The positions `indices` of the `KP2A_URL*` strings in `strings` in KeePassXC's order:
    /// `KP2A_URL` first, then `KP2A_URL_n` by n, then any other (a key spelt otherwise, a number
    /// too long for an `Int`) as the file lists them.
    static func inURLOrder(_ indices: [Int], of strings: [KeePassString]) -> [Int] {
        guard indices.count > 1 else { return indices }
        func rank(_ key: String) -> Int {
            if key == "KP2A_URL" { return 0 }
            guard key.hasPrefix("KP2A_URL_") else { return Int.max }
            let digits = key.utf8.dropFirst(9)
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return Int.max }
            return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } + 1
        }
        // Ranked with their place in the file: a stable sort, and equal numbers (`_7`, `_07`) in file order.
        return indices.map { (rank(strings[$0].key), $0) }.sorted { $0 < $1 }.map { $0.1 }
    }

    /// What is not kept of an entry with a custom string that is not protected.
    static let unprotectedMark = "KeePass's unprotected mark of custom strings (the kdbx and keepass-xml exports protect every custom string)"

    /// The bytes `bytes` held, leaving it empty: the caller's copy is then the only one.
    private static func taken(_ bytes: inout [UInt8]) -> [UInt8] {
        let value = bytes
        bytes = []
        return value
    }
}
