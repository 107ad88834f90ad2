import FoundationEssentials
import SecureMemory
import VaultModel

// MARK: - enpass-json

/// `--format enpass-json`: Enpass 6's JSON export (File > Export > .json): `folders` (`uuid`,
/// `title`, `parent_uuid`) and `items` (`title`, `note`, `category`, `favorite`, `archived`,
/// `trashed`, `createdAt`, `updated_at` in seconds, `folders` by uuid, `fields` with `label`,
/// `type`, `value`, `sensitive`, `deleted` and each field's `history`, `attachments` in base64).
///
/// The first `username` (or, with none, `email`) field is the login, the first `password` field the
/// value, `url` fields the URLs, the first `totp` field the TOTP; every other field with a value
/// is a field (`sensitive` ones protected); `section` fields are headings, not data. The password
/// field's history becomes the item's history. Items in the trash (`trashed`) are not imported:
/// they are counted, as every source's trash is.
enum EnpassJSONReader {
    /// The loss of an item's section headings, counted by item (`statedInText`: it says what is kept).
    static let sectionHeadings = "Enpass's section headings (the fields under them are kept; a heading only where it tells apart "
        + "fields of one name, in their labels in the field 'labels')"

    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    /// With a `sink`, each item is handed to it as read (`streamed`); anything the stream cannot
    /// read declines the sink, and the import is read again without one.
    static func read(_ bytes: [UInt8], now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        if let sink {
            guard let result = try? streamed(bytes, each: sink) else {
                sink.decline()
                return ForeignImport(format: "enpass-json")
            }
            return result
        }
        // One item's tape at a time (`streamed`); a document that way declines is read whole,
        // whose errors say what is wrong and where.
        if let result = try? streamed(bytes) { return result }
        return try whole(bytes)
    }

    /// `read` with a sink of a file read a window at a time (`ImportWindows`): never whole in
    /// memory, and no page of it made for the import (the kernel zeroes each fresh page of a
    /// 38 MB buffer). Anything the stream cannot read declines the sink, as `read` does; the
    /// caller then reads the file whole.
    static func read(_ windows: ImportWindows, each sink: ForeignItemSink) -> ForeignImport {
        var stream = JSONStream(chunk: windows.windowLength * 4, what: "an Enpass JSON export", source: windows.jsonSource())
        defer { stream.wipeWindow() }
        guard let result = try? streamed(&stream, each: sink) else {
            sink.decline()
            return ForeignImport(format: "enpass-json")
        }
        return result
    }

    /// `read` through a tape of the whole document: the plain reference of `streamed`.
    static func whole(_ bytes: [UInt8]) throws(VaultError) -> ForeignImport {
        let tape = try JSONTape(bytes, what: "an Enpass JSON export")
        guard tape.kind(tape.root) == .object, let items = tape.member(tape.root, "items"), tape.kind(items) == .array else {
            throw .malformedInput("not an Enpass JSON export: no \"items\" array at the top level")
        }
        var result = ForeignImport(format: "enpass-json")
        // Folder paths by uuid, parents followed (a cycle or a missing parent ends the path).
        var folderTitles: [String: (title: String, parent: String)] = [:]
        for folder in tape.elements(tape.member(tape.root, "folders")) {
            guard let uuid = tape.string(tape.member(folder, "uuid")) else { continue }
            folderTitles[uuid] = (tape.string(tape.member(folder, "title")) ?? "", tape.string(tape.member(folder, "parent_uuid")) ?? "")
        }
        func path(_ uuid: String) -> [String] { folderPath(uuid, in: folderTitles) }
        for node in tape.elements(items) {
            guard tape.kind(node) == .object else { throw .malformedInput("not an Enpass JSON export: an item that is not an object") }
            // What the user deleted stays deleted, as for every source (docs/INTERCHANGE.md).
            var folder: String?
            guard let item = try item(node, tape: tape, folder: &folder, result: &result) else {
                result.notKeep("Enpass items in the trash (not imported)", reason: .deletedInSource)
                continue
            }
            result.items.append(item)
            if let folder { result.items[result.items.count - 1].folders = path(folder) }
        }
        return result
    }

    /// `read` one item's tape at a time (`JSONStream`), the folders given once the walk has read
    /// them (they may come after the items). Throws for anything the whole-document reader must judge.
    /// With a `sink`, each item goes to it as read, its folders given at once; an item naming a
    /// folder before the folders are read, or folders after the items, declines the sink.
    static func streamed(_ bytes: [UInt8], each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var stream = JSONStream(bytes, what: "an Enpass JSON export")
        return try streamed(&stream, each: sink)
    }

    /// `streamed` of the document `stream` walks (its bytes in one buffer, or read a window at a time).
    private static func streamed(_ stream: inout JSONStream, each sink: ForeignItemSink?) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "enpass-json")
        var folderTitles: [String: (title: String, parent: String)] = [:]
        /// The first folder of each item that names one, by the index of the item.
        var homes: [(item: Int, folder: String)] = []
        var sawItems = false, sawFolders = false
        do throws(VaultError) {
            try stream.document { (stream) throws(VaultError) in
                guard try stream.peek() == UInt8(ascii: "{") else { throw JSONStream.declined() }
                try stream.object(["items", "folders"]) { (stream, key) throws(VaultError) in
                    if key == 1 {
                        if sawItems { sink?.decline() }  // the folders of items already handed over would change
                        sawFolders = true
                        let tape = try stream.tape()
                        for folder in tape.elements(tape.root) {
                            guard let uuid = tape.string(tape.member(folder, "uuid")) else { continue }
                            folderTitles[uuid] = (tape.string(tape.member(folder, "title")) ?? "", tape.string(tape.member(folder, "parent_uuid")) ?? "")
                        }
                        return
                    }
                    guard key == 0, try stream.peek() == UInt8(ascii: "[") else { try stream.skip(); return }
                    sawItems = true
                    try stream.array { (stream) throws(VaultError) in
                        let tape = try stream.tape()
                        guard tape.kind(tape.root) == .object else { throw JSONStream.declined() }
                        // One binding of the item, changed in place: the sink wipes its secrets, not a copy's.
                        var folder: String?
                        guard var read = try item(tape.root, tape: tape, folder: &folder, result: &result) else {
                            result.notKeep("Enpass items in the trash (not imported)", reason: .deletedInSource)
                            return
                        }
                        if let sink {
                            if let folder {
                                if sawFolders { read.folders = folderPath(folder, in: folderTitles) } else { sink.decline() }
                            }
                            result.add(&read, to: sink)
                            return
                        }
                        if let folder { homes.append((result.items.count, folder)) }
                        result.items.append(read)
                    }
                }
            }
            guard sawItems else { throw JSONStream.declined() }
        } catch {
            result.wipe()
            throw error
        }
        for (index, folder) in homes { result.items[index].folders = folderPath(folder, in: folderTitles) }
        return result
    }

    /// The folder path of `uuid`, parents followed (a cycle or a missing parent ends the path).
    private static func folderPath(_ uuid: String, in folderTitles: [String: (title: String, parent: String)]) -> [String] {
        var path: [String] = [], seen: Set<String> = [], current = uuid
        while let folder = folderTitles[current], seen.insert(current).inserted, path.count < 64 {
            path.insert(folder.title, at: 0)
            current = folder.parent
        }
        return path
    }

    /// What each item starts from.
    private static let emptyItem = ForeignItem()

    /// The keys of an item that Enpass 6 writes and the reader knows besides those it reads (the
    /// icon, the auto-submit setting, the template, the category's display name, the time a field
    /// last changed: nothing an entry keeps). Any other key is counted in a warning `not kept:
    /// unknown key 'X' of Enpass items` (a later format's), as for Bitwarden (cold58 L2).
    private static let knownItemKeys: [StaticString] = ["uuid", "icon", "auto_submit", "template_type", "category_name", "field_updated_at"]

    /// One item, and the uuid of its first folder in `firstFolder`; nil for an item in the trash
    /// (`trashed`), of which nothing is read. Its members and each field's are found in one pass over their keys
    /// (`JSONTape.forEachMember`), as `member` would find them; words the reader only compares
    /// (a field's `type`, the `category`) are compared as bytes, never made a `String`.
    private static func item(_ node: Int, tape: JSONTape, folder firstFolder: inout String?, result: inout ForeignImport) throws(VaultError) -> ForeignItem? {
        var folders: Int?, title: Int?, note: Int?, createdAt: Int?, updatedAt: Int?, fields: Int?, attachments: Int?
        var favorite: Int?, archived: Int?, category: Int?, subtitle: Int?, trashed: Int?
        tape.forEachMember(node) { key, value in
            if JSONTape.matches(key, "title") { title = value }
            else if JSONTape.matches(key, "trashed") { trashed = value }
            else if JSONTape.matches(key, "fields") { fields = value }
            else if JSONTape.matches(key, "note") { note = value }
            else if JSONTape.matches(key, "createdAt") { createdAt = value }
            else if JSONTape.matches(key, "updated_at") { updatedAt = value }
            else if JSONTape.matches(key, "folders") { folders = value }
            else if JSONTape.matches(key, "attachments") { attachments = value }
            else if JSONTape.matches(key, "favorite") { favorite = value }
            else if JSONTape.matches(key, "archived") { archived = value }
            else if JSONTape.matches(key, "category") { category = value }
            else if JSONTape.matches(key, "subtitle") { subtitle = value }
            else if !Self.knownItemKeys.contains(where: { JSONTape.matches(key, $0) }) {
                result.notKeep("unknown key '\(String(decoding: key.prefix(64), as: UTF8.self))' of Enpass items", reason: .laterFormat)
            }
        }
        // What the user deleted stays deleted, as for every source (docs/INTERCHANGE.md).
        if tape.flag(trashed) { return nil }
        firstFolder = nil
        var folderCount = 0
        tape.forEachElement(folders) { folder in
            guard tape.isString(folder) else { return }
            if firstFolder == nil { firstFolder = tape.string(folder) }
            folderCount += 1
        }
        // A copy of an empty item, then its title: `ForeignItem.init` built each item in a
        // temporary and copied it out.
        var item = Self.emptyItem
        item.title = tape.string(title) ?? ""
        if folderCount > 1 { result.notKeep("Enpass's second and further folders of an item") }
        item.notes = tape.string(note).flatMap { $0.isEmpty ? nil : $0 }
        item.created = tape.integer(createdAt).map { $0 * 1000 }
        item.modified = tape.integer(updatedAt).map { $0 * 1000 } ?? item.created
        var email: (text: String, field: Int)?, passwordSeen = false
        // The heading over the fields that follow it: it orders fields of one label for their numbers.
        var heading: String?, headed = false
        tape.forEachElement(fields) { field in
            var typeNode: Int?, labelNode: Int?, valueNode: Int?, deleted: Int?, historyNode: Int?, sensitive: Int?
            tape.forEachMember(field) { key, value in
                if JSONTape.matches(key, "type") { typeNode = value }
                else if JSONTape.matches(key, "value") { valueNode = value }
                else if JSONTape.matches(key, "label") { labelNode = value }
                else if JSONTape.matches(key, "deleted") { deleted = value }
                else if JSONTape.matches(key, "sensitive") { sensitive = value }
                else if JSONTape.matches(key, "history") { historyNode = value }
            }
            // The type as a word compared (`"text"` when it has none); its text only for a label.
            let type: FieldType = tape.isString(typeNode) ? FieldType(tape, typeNode!) : .text
            /// The field's label: its own, else its type's name.
            func label() -> String { tape.string(labelNode) ?? tape.string(typeNode) ?? "text" }
            guard type != .section else {
                // A heading over the fields after it: the fields are kept, its words are not.
                heading = tape.string(labelNode)
                headed = headed || !(heading ?? "").isEmpty
                return
            }
            // A username, URL or TOTP is kept as text: read as one straight from the tape (no
            // array of its bytes first), with the same checks as every other value below.
            if type == .username && item.username == nil || type == .url || type == .android || type == .totp && item.totp == nil {
                let text = tape.string(valueNode) ?? tape.text(valueNode) ?? ""
                if tape.flag(deleted) {
                    if !text.isEmpty { result.notKeep("Enpass's deleted fields", reason: .deletedInSource) }
                    return
                }
                if tape.elementCount(historyNode) > 0 { result.notKeep("Enpass's history of fields other than the password", count: 1) }
                guard !text.isEmpty else { return }
                if type == .username { item.username = text } else if type == .totp { item.totp = text } else { item.urls.append(text) }
                return
            }
            var value = tape.stringBytes(valueNode) ?? Array((tape.text(valueNode) ?? "").utf8)
            if tape.flag(deleted) {
                if !value.isEmpty { result.notKeep("Enpass's deleted fields", reason: .deletedInSource) }
                SecureMemory.wipe(&value)
                return
            }
            if type == .password && !passwordSeen {
                passwordSeen = true
                item.value = value
                tape.forEachElement(historyNode) { version in
                    item.history.append(ForeignVersion(value: tape.stringBytes(tape.member(version, "value")) ?? [],
                                                       modified: tape.integer(tape.member(version, "updated_at")).map { $0 * 1000 }))
                }
                return
            }
            if tape.elementCount(historyNode) > 0 { result.notKeep("Enpass's history of fields other than the password", count: 1) }
            guard !value.isEmpty else { return }
            switch type {
            case .username where item.username == nil: item.username = String(decoding: value, as: UTF8.self)
            case .email where email == nil:
                email = (String(decoding: value, as: UTF8.self), item.fields.count)
                item.fields.append(ForeignField(label: label(), value: value, section: heading))
            case .url, .android: item.urls.append(String(decoding: value, as: UTF8.self))
            case .totp where item.totp == nil: item.totp = String(decoding: value, as: UTF8.self)
            default: item.fields.append(ForeignField(label: label(), value: value, protected: tape.flag(sensitive), section: heading))
            }
        }
        // Counted by item, as the warning says (cold63 F6: before, by heading).
        if headed { result.notKeep(EnpassJSONReader.sectionHeadings, reason: .statedInText) }
        item.history.sort { ($0.modified ?? .min) < ($1.modified ?? .min) }
        // An item with an e-mail field and no username field logs in with the e-mail.
        if item.username == nil, let email {
            item.username = email.text
            item.fields.remove(at: email.field)
        }
        for attachment in tape.elements(attachments) {
            let name = tape.string(tape.member(attachment, "name")) ?? "attachment"
            guard let data = tape.string(tape.member(attachment, "data")), let bytes = Data(base64Encoded: data) else {
                result.notKeep("Enpass attachments without their data")
                continue
            }
            item.attachments.append(ForeignAttachment(name: name, bytes: Array(bytes)))
        }
        if tape.flag(favorite) { item.extras.append((label: "favorite", value: "yes")) }
        if tape.flag(archived) { item.extras.append((label: "archived", value: "yes")) }
        if tape.isString(category), !tape.isString(category, "login"), !tape.isString(category, "password"), !tape.isString(category, "note"),
           !tape.isString(category, ""), let category = tape.string(category) {
            item.extras.append((label: "category", value: category))
        }
        if tape.isString(subtitle), !tape.isString(subtitle, ""), tape.string(subtitle) != item.username {
            result.notKeep("Enpass's subtitles")
        }
        return item
    }

    /// A field's `type`, as the reader tells them apart.
    private enum FieldType {
        case text, section, password, username, email, url, android, totp, other

        /// The type the string at `node` names (compared decoded, as `String`s compare): a plain
        /// one by its bytes, told apart by its length first.
        init(_ tape: JSONTape, _ node: Int) {
            if let type = tape.withPlainBytes(node, { bytes -> FieldType in
                func equals(_ word: StaticString) -> Bool { JSONTape.same(bytes.baseAddress!, word.utf8Start, word.utf8CodeUnitCount) }
                switch bytes.count {
                case 8: return equals("password") ? .password : equals("username") ? .username : .other
                case 4: return equals("text") ? .text : equals("totp") ? .totp : .other
                case 7: return equals("section") ? .section : .other
                case 5: return equals("email") ? .email : .other
                case 3: return equals("url") ? .url : .other
                case 9: return equals(".Android#") ? .android : .other
                default: return .other
                }
            }) {
                self = type
            } else if tape.isString(node, "password") { self = .password }
            else if tape.isString(node, "username") { self = .username }
            else if tape.isString(node, "text") { self = .text }
            else if tape.isString(node, "section") { self = .section }
            else if tape.isString(node, "email") { self = .email }
            else if tape.isString(node, "url") { self = .url }
            else if tape.isString(node, ".Android#") { self = .android }
            else if tape.isString(node, "totp") { self = .totp }
            else { self = .other }
        }
    }
}
