import SecureMemory
import VaultModel

// MARK: - 1pux: the items of one export

extension OnePUXReader {
    /// What the items of one export share (its archive's files, the growth budget); each item's
    /// tape is given to `item`, never kept.
    struct Reader {
        let archive: ZipArchive
        /// The archive's files by document id (`files/ID__NAME` or `files/ID`).
        let files: [String: Int]
        /// What inflating and copying files may still spend.
        var budget: ExpansionBudget
        /// Each file inflated once, by entry index: every item naming it shares these bytes.
        private var inflated: [Int: [UInt8]] = [:]
        /// Whether items share a file's bytes (`inflated`); otherwise (items handed to a sink,
        /// which wipes each item's bytes in place) each is inflated for every item naming it.
        private let sharesFiles: Bool
        /// The `uuid` of each item kept, in order (`resolveReferences`). Not kept for items handed to
        /// a sink (`sharesFiles` false): a stream declines any item holding a reference, so nothing
        /// resolves one there, and 100,000 ids were 1.6 MB of a 1pux import's peak (26-character
        /// uuids, as 1Password writes them, each a heap string more).
        private(set) var ids: [String] = []
        /// Whether the last item read holds a field of kind `reference` (a stream declines it:
        /// the item it names may come later).
        private(set) var lastHasReference = false
        /// Section dates that are no date 1Password shows (out of range, not whole seconds), kept
        /// as written: how many, in how many items, the first items' names (recheck60 R10).
        private(set) var oddDates = (count: 0, items: 0, names: [String]())
        /// Whether the item being read has an odd date counted already.
        private var oddDateInItem = false
        /// Item and password-history times past the year 9999 (milliseconds written where seconds
        /// belong: year 52671), left out (the item's other time, or the import's, takes their
        /// place): how many, in how many items, the first items' names (cold62 L2).
        private(set) var oddTimes = (count: 0, items: 0, names: [String]())
        /// Whether the item being read has an odd time counted already.
        private var oddTimeInItem = false

        init(archive: ZipArchive, budget: ExpansionBudget, sharesFiles: Bool = true) {
            (self.archive, self.budget, self.sharesFiles) = (archive, budget, sharesFiles)
            var files: [String: Int] = [:]
            for (index, entry) in archive.entries.enumerated() where entry.name.hasPrefix("files/") {
                let rest = entry.name.dropFirst(6)
                let id = rest.firstRange(of: "__").map { String(rest[..<$0.lowerBound]) } ?? String(rest)
                files[id] = files[id] ?? index
            }
            self.files = files
        }

        /// One item, read into `item` (an empty one: `OnePUXReader.emptyItem`); false for an item
        /// in the trash (`state` "trashed"), of which nothing more is read. Its members, its
        /// overview's, its details' and each login field's are found in one pass over their keys
        /// (`JSONTape.forEachMember`), as `member` would find them; words the reader only compares
        /// (`state`, a login field's `designation`, the category) are compared as bytes, never made
        /// a `String`. The caller's binding is filled in place: returned, the item (which the
        /// login fields' closure changes) was copied out and the local destroyed, two of its
        /// fields' retains and releases each (6 % of a 1pux import's instructions).
        mutating func item(_ node: Int, in tape: JSONTape, folders: [String], into item: inout ForeignItem,
                           result: inout ForeignImport) throws(VaultError) -> Bool {
            var overview: Int?, details: Int?, createdAt: Int?, updatedAt: Int?, favIndex: Int?, state: Int?, categoryUuid: Int?, uuid: Int?
            lastHasReference = false
            oddDateInItem = false
            oddTimeInItem = false
            tape.forEachMember(node) { key, value in
                if JSONTape.matches(key, "uuid") { uuid = value }
                else if JSONTape.matches(key, "overview") { overview = value }
                else if JSONTape.matches(key, "details") { details = value }
                else if JSONTape.matches(key, "createdAt") { createdAt = value }
                else if JSONTape.matches(key, "updatedAt") { updatedAt = value }
                else if JSONTape.matches(key, "favIndex") { favIndex = value }
                else if JSONTape.matches(key, "state") { state = value }
                else if JSONTape.matches(key, "categoryUuid") { categoryUuid = value }
                else if !OnePUXReader.knownItemKeys.contains(where: { JSONTape.matches(key, $0) }) {
                    result.notKeep(OnePUXReader.unknownKeyLoss(key, in: ""), reason: .laterFormat)
                }
            }
            if tape.isString(state, "trashed") { return false }
            // A state the reader does not know ("deleted"): the item is imported as an active one,
            // and said, with the state and its count (cold60 L10).
            if state != nil, !tape.isString(state, "active"), !tape.isString(state, "archived") {
                let word = tape.string(state).map { String($0.prefix(24)) } ?? "(not a string)"
                result.notKeep(OnePUXReader.unknownStateLoss + "'\(word)'", reason: .unknownState)
            }
            if sharesFiles { ids.append(tape.string(uuid) ?? "") }
            var title: Int?, primaryURL: Int?, urls: Int?, tagsNode: Int?
            tape.forEachMember(overview) { key, value in
                if JSONTape.matches(key, "title") { title = value }
                else if JSONTape.matches(key, "url") { primaryURL = value }
                else if JSONTape.matches(key, "urls") { urls = value }
                else if JSONTape.matches(key, "tags") { tagsNode = value }
            }
            var loginFields: Int?, password: Int?, notesPlain: Int?, sections: Int?, passwordHistory: Int?, documentAttributes: Int?
            tape.forEachMember(details) { key, value in
                if JSONTape.matches(key, "loginFields") { loginFields = value }
                else if JSONTape.matches(key, "password") { password = value }
                else if JSONTape.matches(key, "notesPlain") { notesPlain = value }
                else if JSONTape.matches(key, "sections") { sections = value }
                else if JSONTape.matches(key, "passwordHistory") { passwordHistory = value }
                else if JSONTape.matches(key, "documentAttributes") { documentAttributes = value }
                else if JSONTape.matches(key, "htmlForm") { result.notKeep("1Password's web form details (the form's action, name and method)") }
                else { result.notKeep(OnePUXReader.unknownKeyLoss(key, in: "details."), reason: .laterFormat) }
            }
            item.folders = folders
            item.title = tape.string(title) ?? ""
            let created = time(tape.integer(createdAt), of: &item)
            let modified = time(tape.integer(updatedAt), of: &item)
            item.created = created
            item.modified = modified ?? created
            // URLs: the primary one, then the others in order, each once.
            if let url = tape.string(primaryURL), !url.isEmpty { item.urls.append(url) }
            for entry in tape.elements(urls) {
                if let url = tape.string(tape.member(entry, "url")), !url.isEmpty, !item.urls.contains(url) { item.urls.append(url) }
                if let label = tape.string(tape.member(entry, "label")), !label.isEmpty { result.notKeep("1Password's URL labels") }
            }
            if tape.elementCount(tagsNode) > 0 {
                let tags = tape.elements(tagsNode).compactMap { tape.string($0) }
                if !tags.isEmpty { item.extras.append((label: "tags", value: tags.joined(separator: ", "))) }
            }
            if (tape.integer(favIndex) ?? 0) > 0 { item.extras.append((label: "favorite", value: "yes")) }
            if tape.isString(state, "archived") { item.extras.append((label: "archived", value: "yes")) }
            if let name = tape.string(categoryUuid).flatMap(OnePUXReader.categoryName) { item.extras.append((label: "category", value: name)) }
            tape.forEachElement(loginFields) { field in
                var valueNode: Int?, designation: Int?, name: Int?, id: Int?, fieldType: Int?
                tape.forEachMember(field) { key, value in
                    if JSONTape.matches(key, "value") { valueNode = value }
                    else if JSONTape.matches(key, "designation") { designation = value }
                    else if JSONTape.matches(key, "name") { name = value }
                    else if JSONTape.matches(key, "id") { id = value }
                    else if JSONTape.matches(key, "fieldType") { fieldType = value }
                }
                // The username as text straight from the tape (no array of its bytes first).
                if item.username == nil, tape.isString(designation, "username") {
                    item.username = tape.string(valueNode) ?? ""
                } else if item.value.isEmpty, tape.isString(designation, "password") {
                    item.value = tape.stringBytes(valueNode) ?? []
                } else {
                    let value = tape.stringBytes(valueNode) ?? []
                    // A web form's other fields (a checkbox, a second name): kept when they hold something.
                    guard !value.isEmpty else { return }
                    let label = tape.string(name) ?? tape.string(id) ?? "form field"
                    item.fields.append(ForeignField(label: label, value: value, protected: tape.string(fieldType) == "P"))
                }
            }
            if item.value.isEmpty, let password = tape.stringBytes(password) { item.value = password }
            item.notes = tape.string(notesPlain).flatMap { $0.isEmpty ? nil : $0 }
            var titled = false
            for section in tape.elements(sections) {
                // A section's title heads its fields: the fields are kept, the title only where it
                // tells apart fields of one name (`ForeignBuilder.sectionedLabels`).
                let title = tape.string(tape.member(section, "title")) ?? ""
                titled = titled || !title.isEmpty
                // Its title (else its name, 1Password's id of it) orders fields of one label for their numbers.
                let heading = title.isEmpty ? tape.string(tape.member(section, "name")) : title
                let first = item.fields.count
                for field in tape.elements(tape.member(section, "fields")) {
                    try sectionField(field, in: tape, section: heading, into: &item, result: &result)
                }
                if title.isEmpty { for index in first..<item.fields.count { item.fields[index].sectionUntitled = true } }
            }
            // Counted by item, as the warning says (cold63 F6: before, by section).
            if titled { result.notKeep(OnePUXReader.sectionTitles, reason: .statedInText) }
            // Earlier passwords, oldest first. Each was replaced at its own `time` (1Password shows
            // it beside the password, as Bitwarden's `lastUsedDate`), and set when the one before
            // it was replaced (the oldest: when the item was created); before, each version took
            // the next one's date (cold58 L1, L9).
            var earlier: [(value: [UInt8], replaced: Int64?)] = []
            for version in tape.elements(passwordHistory) {
                let replaced = time(tape.integer(tape.member(version, "time")), of: &item)
                earlier.append((value: tape.stringBytes(tape.member(version, "value")) ?? [], replaced: replaced))
            }
            earlier.sort { ($0.replaced ?? .min) < ($1.replaced ?? .min) }
            for index in earlier.indices {
                var version = ForeignVersion(value: earlier[index].value, modified: index > 0 ? earlier[index - 1].replaced : item.created)
                version.replaced = earlier[index].replaced
                item.history.append(version)
            }
            if let document = documentAttributes {
                try attach(document, in: tape, to: &item, result: &result)
            }
            return true
        }

        /// Lets go of the files inflated: the items hold them now, and wipe them (`ForeignImport.wipe`).
        mutating func dropInflated() { inflated = [:] }

        /// One field of the section `section` (its title or name): its value object names its kind.
        private mutating func sectionField(_ field: Int, in tape: JSONTape, section: String?, into item: inout ForeignItem,
                                           result: inout ForeignImport) throws(VaultError) {
            let label = tape.string(tape.member(field, "title")).flatMap { $0.isEmpty ? nil : $0 } ?? tape.string(tape.member(field, "id")) ?? "field"
            guard let value = tape.member(field, "value"), let (kind, content) = tape.members(value).first else { return }
            if kind == "file" { try attach(content, in: tape, to: &item, result: &result); return }
            if kind == "totp", item.totp == nil, let totp = tape.string(content), !totp.isEmpty { item.totp = totp; return }
            if kind == "reference", let id = tape.string(content), !id.isEmpty {
                // Another item's uuid: its entry's name once the build has named it (`resolveReferences`).
                var field = ForeignField(label: label, value: Array(id.utf8), section: section)
                field.reference = ForeignField.unresolved
                item.fields.append(field)
                lastHasReference = true
                return
            }
            let text: String
            if kind == "date" || kind == "monthYear", tape.kind(content) == .number {
                // Whole numbers only (`1.5` is no day): any other is kept as written, and said (att60 F8, recheck60 R10).
                let written = tape.text(content) ?? ""
                if let number = Int64(written), let converted = OnePUXReader.dateText(kind: kind, number) {
                    text = converted
                } else {
                    text = written
                    noteOddDate(of: &item)
                }
            } else {
                switch tape.kind(content) {
                case .object:
                    // An address, an e-mail with its provider, an SSH key: its parts, one a line.
                    if kind == "sshKey", let key = tape.string(tape.member(content, "privateKey")) {
                        text = key
                    } else if kind == "email", let address = tape.string(tape.member(content, "email_address")) {
                        text = address
                    } else {
                        text = tape.members(content).compactMap { member in tape.text(member.value).flatMap { $0.isEmpty ? nil : "\(member.key): \($0)" } }
                            .joined(separator: "\n")
                    }
                case .array:
                    text = tape.elements(content).compactMap { tape.text($0) }.joined(separator: "\n")
                default:
                    text = tape.text(content) ?? ""
                }
            }
            guard !text.isEmpty else { return }
            item.fields.append(ForeignField(label: label, value: Array(text.utf8), protected: kind == "concealed" || kind == "sshKey", section: section))
        }

        /// Counts a date of `item` kept as written (`oddDates`).
        private mutating func noteOddDate(of item: inout ForeignItem) {
            oddDates.count += 1
            item.warned.insert(.datesKeptAsWritten)
            guard !oddDateInItem else { return }
            oddDateInItem = true
            oddDates.items += 1
            if oddDates.names.count < OnePUXReader.namedItems { oddDates.names.append((item.folders + [item.title]).joined(separator: "/")) }
        }

        /// `seconds` (an item's or a password's time) in milliseconds; nil, counted in `oddTimes`,
        /// past 9999-12-31T23:59:59Z, which no export can write as a date (cold62 L2).
        private mutating func time(_ seconds: Int64?, of item: inout ForeignItem) -> Int64? {
            guard let seconds else { return nil }
            guard seconds > OnePUXReader.latestTime else { return seconds * 1000 }
            oddTimes.count += 1
            item.warned.insert(.timesReplaced)
            if !oddTimeInItem {
                oddTimeInItem = true
                oddTimes.items += 1
                if oddTimes.names.count < OnePUXReader.namedItems { oddTimes.names.append((item.folders + [item.title]).joined(separator: "/")) }
            }
            return nil
        }

        /// The warning of the dates kept as written, when there were any.
        func warnOddDates(_ result: inout ForeignImport) {
            guard oddDates.count > 0 else { return }
            result.warnings.append(.datesKeptAsWritten(count: oddDates.count, items: oddDates.names, itemCount: oddDates.items))
        }

        /// The warning of the item times left out, when there were any.
        func warnOddTimes(_ result: inout ForeignImport) {
            guard oddTimes.count > 0 else { return }
            result.warnings.append(.timesReplaced(count: oddTimes.count, items: oddTimes.names, itemCount: oddTimes.items))
        }

        /// A file of `files/` (`{ "fileName", "documentId", "decryptedSize" }`) as an attachment.
        private mutating func attach(_ document: Int, in tape: JSONTape, to item: inout ForeignItem, result: inout ForeignImport) throws(VaultError) {
            guard let id = tape.string(tape.member(document, "documentId")), !id.isEmpty else { return }
            let name = tape.string(tape.member(document, "fileName")) ?? id
            guard let index = files[id] else {
                result.notKeep("1Password files the 1pux archive does not hold")
                return
            }
            // Counted for every item that names it (each holds a copy in the vault), inflated once.
            let entry = archive.entries[index]
            try budget.spend(entry.size, on: entry.name)
            guard sharesFiles else {
                item.attachments.append(ForeignAttachment(name: name, bytes: try archive.contents(of: entry)))
                return
            }
            if inflated[index] == nil { inflated[index] = try archive.contents(of: entry) }
            item.attachments.append(ForeignAttachment(name: name, bytes: inflated[index]!))
        }
    }
}
