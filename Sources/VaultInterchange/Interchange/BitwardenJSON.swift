import VaultModel

// MARK: - Bitwarden JSON

/// Bitwarden's unencrypted JSON export: folders, and items of type login (1), secure note (2), card (3), identity (4).
enum BitwardenJSON {
    struct Export: Decodable, Equatable {
        var encrypted: Bool?
        var folders: [Folder]?
        var items: [Item]?
    }
    struct Folder: Decodable, Equatable { var id: String; var name: String }
    struct Item: Decodable, Equatable {
        var type: Int
        var name: String?
        var folderId: String?
        var notes: String?
        var login: Login?
        var card: [String: String?]?
        var identity: [String: String?]?
        var fields: [CustomField]?
        var revisionDate: String?
        var creationDate: String?
        var favorite: Bool? = nil
        var reprompt: Int? = nil
        var passwordHistory: [PasswordVersion]? = nil
    }
    /// An earlier password of a login, with the time it was replaced.
    struct PasswordVersion: Decodable, Equatable { var password: String?; var lastUsedDate: String? }
    struct Login: Decodable, Equatable {
        var username: String?
        var password: String?
        var totp: String?
        var uris: [URI]?
    }
    struct URI: Decodable, Equatable { var uri: String? }
    struct CustomField: Decodable, Equatable { var name: String?; var value: String? }

    /// The entries of an unencrypted Bitwarden export, named `Folder/Name`.
    ///
    /// Read in one pass when `BitwardenJSONReader.entries` takes the document (most exports); else
    /// through `parseReference`.
    static func parse(_ bytes: [UInt8], now: Int64, names: inout ImportedNameCleaner.Names) throws(VaultError) -> [(String, Entry)] {
        if let read = BitwardenJSONReader.entries(bytes, now: now, names: names) {
            names = read.names
            return read.entries
        }
        return try parseReference(bytes, now: now, names: &names)
    }

    /// `parse(_:now:names:)` through an `Export` (read directly or decoded), item by item: the plain reference.
    static func parseReference(_ bytes: [UInt8], now: Int64, names: inout ImportedNameCleaner.Names) throws(VaultError) -> [(String, Entry)] {
        // Read directly when the reader takes it (`BitwardenJSONReader`); else through the scan and the decoder.
        let export: Export
        if let direct = BitwardenJSONReader.export(bytes) {
            export = direct
        } else {
            export = try JSONDocument.decode(Export.self, from: bytes, what: "a Bitwarden JSON export")
        }
        guard export.encrypted != true else {
            throw .malformedInput("this Bitwarden export is encrypted; export it again as unencrypted JSON (then delete that file)")
        }
        // `{}` (or `"items": null`) is no export: importing nothing with success hid a wrong file.
        guard export.items != nil else {
            throw .malformedInput("the document has no 'items' list, so it is not a Bitwarden JSON export (Bitwarden writes \"items\": [] even when empty)")
        }
        let folders = Dictionary((export.folders ?? []).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        var result: [(String, Entry)] = []
        for (index, item) in (export.items ?? []).enumerated() {
            let folder = item.folderId.flatMap { folders[$0] }.map { $0.split(separator: "/").map(String.init) } ?? []
            let name = names.name(fromParts: folder + [item.name ?? "untitled"])
            var fields: [String: [UInt8]] = [:]
            func put(_ field: String, _ text: String?) {
                if let text, !text.isEmpty { fields[ImportedNameCleaner.fieldName(fromLabel: field)] = Array(text.utf8) }
            }
            var value = ""
            switch item.type {
            case 1:
                value = item.login?.password ?? ""
                put("username", item.login?.username)
                put("url", item.login?.uris?.first?.uri)
                put("totp", item.login?.totp)
            case 2:
                value = item.notes ?? ""
            case 3:
                value = (item.card?["number"] ?? nil) ?? ""
                for (key, text) in (item.card ?? [:]).sorted(by: { $0.key < $1.key }) where key != "number" { put(key, text) }
            case 4:
                for (key, text) in (item.identity ?? [:]).sorted(by: { $0.key < $1.key }) { put(key, text) }
            default:
                throw .malformedInput("item \(index + 1) ('\(item.name ?? "")') has unknown type \(item.type)")
            }
            if item.type != 2 { put("notes", item.notes) }
            for custom in item.fields ?? [] { put(custom.name ?? "field", custom.value) }
            let created = item.creationDate.flatMap(Timestamps.parse) ?? item.revisionDate.flatMap(Timestamps.parse) ?? now
            let modified = item.revisionDate.flatMap(Timestamps.parse) ?? created
            if !EntryName.isValid(name) { do { _ = try EntryName.validate(name) } catch { throw .malformedInput("item \(index + 1): \(error.description)") } }
            result.append((name, Entry(value: Array(value.utf8), fields: fields, created: created, modified: modified)))
        }
        return result
    }
}
