import FoundationEssentials
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
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
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
        func path(_ uuid: String) -> [String] {
            var path: [String] = [], seen: Set<String> = [], current = uuid
            while let folder = folderTitles[current], seen.insert(current).inserted, path.count < 64 {
                path.insert(folder.title, at: 0)
                current = folder.parent
            }
            return path
        }
        for node in tape.elements(items) {
            guard tape.kind(node) == .object else { throw .malformedInput("not an Enpass JSON export: an item that is not an object") }
            // What the user deleted stays deleted, as for every source (docs/INTERCHANGE.md).
            if tape.flag(tape.member(node, "trashed")) { result.notKeep("Enpass items in the trash (not imported)"); continue }
            result.items.append(try item(node, tape: tape, path: path, result: &result))
        }
        return result
    }

    private static func item(_ node: Int, tape: JSONTape, path: (String) -> [String], result: inout ForeignImport) throws(VaultError) -> ForeignItem {
        let folderIDs = tape.elements(tape.member(node, "folders")).compactMap { tape.string($0) }
        var item = ForeignItem(folders: folderIDs.first.map(path) ?? [], title: tape.string(tape.member(node, "title")) ?? "")
        if folderIDs.count > 1 { result.notKeep("Enpass's second and further folders of an item") }
        item.notes = tape.string(tape.member(node, "note")).flatMap { $0.isEmpty ? nil : $0 }
        item.created = tape.integer(tape.member(node, "createdAt")).map { $0 * 1000 }
        item.modified = tape.integer(tape.member(node, "updated_at")).map { $0 * 1000 } ?? item.created
        var email: (text: String, field: Int)?, passwordSeen = false
        for field in tape.elements(tape.member(node, "fields")) {
            let type = tape.string(tape.member(field, "type")) ?? "text"
            let label = tape.string(tape.member(field, "label")) ?? type
            guard type != "section" else { continue }
            let value = tape.stringBytes(tape.member(field, "value")) ?? Array((tape.text(tape.member(field, "value")) ?? "").utf8)
            if tape.flag(tape.member(field, "deleted")) {
                if !value.isEmpty { result.notKeep("Enpass's deleted fields") }
                continue
            }
            let history = tape.elements(tape.member(field, "history"))
            if type == "password" && !passwordSeen {
                passwordSeen = true
                item.value = value
                for version in history {
                    item.history.append(ForeignVersion(value: tape.stringBytes(tape.member(version, "value")) ?? [],
                                                       modified: tape.integer(tape.member(version, "updated_at")).map { $0 * 1000 }))
                }
                continue
            }
            if !history.isEmpty { result.notKeep("Enpass's history of fields other than the password", count: 1) }
            guard !value.isEmpty else { continue }
            let text = String(decoding: value, as: UTF8.self)
            switch type {
            case "username" where item.username == nil: item.username = text
            case "email" where email == nil:
                email = (text, item.fields.count)
                item.fields.append(ForeignField(label: label, value: value))
            case "url", ".Android#": item.urls.append(text)
            case "totp" where item.totp == nil: item.totp = text
            default: item.fields.append(ForeignField(label: label, value: value, protected: tape.flag(tape.member(field, "sensitive"))))
            }
        }
        item.history.sort { ($0.modified ?? .min) < ($1.modified ?? .min) }
        // An item with an e-mail field and no username field logs in with the e-mail.
        if item.username == nil, let email {
            item.username = email.text
            item.fields.remove(at: email.field)
        }
        for attachment in tape.elements(tape.member(node, "attachments")) {
            let name = tape.string(tape.member(attachment, "name")) ?? "attachment"
            guard let data = tape.string(tape.member(attachment, "data")), let bytes = Data(base64Encoded: data) else {
                result.notKeep("Enpass attachments without their data")
                continue
            }
            item.attachments.append(ForeignAttachment(name: name, bytes: Array(bytes)))
        }
        if tape.flag(tape.member(node, "favorite")) { item.extras.append((label: "favorite", value: "yes")) }
        if tape.flag(tape.member(node, "archived")) { item.extras.append((label: "archived", value: "yes")) }
        if let category = tape.string(tape.member(node, "category")), !["login", "password", "note", ""].contains(category) {
            item.extras.append((label: "category", value: category))
        }
        if tape.string(tape.member(node, "subtitle")).map({ !$0.isEmpty && $0 != item.username }) == true {
            result.notKeep("Enpass's subtitles")
        }
        return item
    }
}
