import VaultFormat
import VaultModel

// MARK: - Bitwarden JSON as items of the one builder

extension BitwardenJSON {
    /// The items of an unencrypted Bitwarden export for the one builder (`ForeignImport.entries`),
    /// which names, numbers and fills them as it does for every other manager's export (a custom
    /// field `username` beside the login becomes `username_2`, a bare Base32 TOTP an otpauth://
    /// URI, a URL title its site). Folders split at '/'. Logins: password → value, username, every
    /// URI, TOTP, notes. Secure notes: notes → notes, no value (as Bitwarden's CSV export and every
    /// other manager's note read). Cards: number → value, the other card properties → fields.
    /// Identities: each property → a field. SSH keys: an ssh key entry (`readSSHKey`,
    /// BitwardenJSON+SSHKey.swift). Custom fields in order, labels as
    /// they are. `creationDate` and `revisionDate` are kept; `passwordHistory` becomes the item's
    /// history, `favorite` the field `favorite`, and a master-password re-prompt, linked custom fields,
    /// URI match rules and an organization's item's organization and collections are counted as not kept.
    /// A login's passkeys become the fields `passkey.KEY` (BitwardenJSON+Keys.swift); `archivedDate` the
    /// field `archived`; each key the reader does not know is counted as not kept (`knownKeys`).
    ///
    /// The document is read directly when `BitwardenJSONReader.export` takes it, else decoded
    /// (`JSONDocument.decode`), whose messages name the problem.
    ///
    /// With a `sink`, each item read directly goes to it as read; an item in a folder (its folder's
    /// name is known only after the walk), or a document the direct reader declines, declines the sink.
    static func read(_ bytes: [UInt8], now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var folders: [String: String] = [:]
        var result = ForeignImport(format: InterchangeFormat.bitwardenJSON.rawValue)
        /// Makes the `index`th item for the builder (its folder from `folders`, or given after the
        /// walk when the items are made as they are read).
        func make(_ index: Int, _ source: Item) throws(VaultError) {
            let folder = source.folderId.flatMap { folders[$0] }.map { $0.split(separator: "/").map(String.init) } ?? []
            var item = ForeignItem(folders: folder, title: source.name ?? "")
            var commentTaken = false
            func field(_ label: String, _ text: String??) {
                guard let text = text ?? nil, !text.isEmpty else { return }
                item.fields.append(ForeignField(label: label, value: Array(text.utf8)))
            }
            switch source.type {
            case 1:
                item.value = Array((source.login?.password ?? "").utf8)
                item.username = source.login?.username
                item.urls = (source.login?.uris ?? []).compactMap { uri in uri.uri.flatMap { $0.isEmpty ? nil : $0 } }
                item.totp = source.login?.totp.flatMap { $0.isEmpty ? nil : $0 }
                // Passkeys as the fields `passkey.KEY` (BitwardenJSON+Keys.swift), which the export gives back.
                item.extras += passkeyExtras(source.login?.fido2Credentials ?? [])
            case 2:
                break  // the notes are the note's text, kept as `notes` below
            case 3:
                item.value = Array(((source.card?["number"] ?? nil) ?? "").utf8)
                for (key, text) in (source.card ?? [:]).sorted(by: { $0.key < $1.key }) where key != "number" { field(key, text) }
            case 4:
                // The identity's username is the entry's; its `title` (Mr, Ms…) a field that the
                // builder stores as `title_2`, so that no export takes it for the item's name.
                item.username = (source.identity?["username"] ?? nil).flatMap { $0.isEmpty ? nil : $0 }
                for (key, text) in (source.identity ?? [:]).sorted(by: { $0.key < $1.key }) where key != "username" { field(key, text) }
            case 5:
                commentTaken = try readSSHKey(source, index: index, into: &item, result: &result)
            default:
                throw .malformedInput("item \(index + 1) ('\(source.name ?? "")') has unknown type \(source.type)")
            }
            item.notes = source.notes
            var linked = false
            for custom in source.fields ?? [] where !(commentTaken && custom.name == SSHKeyEntry.commentField) {
                // A linked field holds no value of its own: it shows another property of the item
                // (`linkedId`), which is imported where it belongs. The link itself is counted.
                guard custom.type != 3 else { linked = true; continue }
                field(custom.name ?? "field", custom.value)
            }
            if linked { result.notKeep("Bitwarden's linked custom fields (each shows another property of its item, which is imported)", reason: .statedInText) }
            if source.type == 1, (source.login?.uris ?? []).contains(where: { $0.match != nil }) { result.notKeep("Bitwarden's URI match rules") }
            if source.organizationId != nil || !(source.collectionIds ?? []).isEmpty {
                result.notKeep("Bitwarden's organization and collections of shared items")
            }
            if source.favorite == true { item.extras.append((label: "favorite", value: "yes")) }
            if source.archivedDate != nil { item.extras.append((label: "archived", value: "yes")) }
            if let reprompt = source.reprompt, reprompt != 0 { result.notKeep("Bitwarden's master-password re-prompt") }
            for key in source.unknownKeys ?? [] { result.notKeep(unknownKeyLoss(key), reason: .laterFormat) }
            item.created = source.creationDate.flatMap(Timestamps.parse) ?? source.revisionDate.flatMap(Timestamps.parse)
            item.modified = source.revisionDate.flatMap(Timestamps.parse) ?? item.created
            // Earlier passwords, oldest first (Bitwarden lists them newest first). Each was replaced
            // at its own `lastUsedDate`, and set when the one before it was replaced (the oldest:
            // when the item was created); the rest of the item is the builder's (the item's
            // fields now, as Bitwarden shows an earlier password: `ForeignVersion.wholeItem`).
            let earlier = (source.passwordHistory ?? []).compactMap { version in
                version.password.map { (password: $0, replaced: version.lastUsedDate.flatMap(Timestamps.parse)) }
            }.sorted { ($0.replaced ?? 0) < ($1.replaced ?? 0) }
            item.history = earlier.indices.map { index in
                var version = ForeignVersion(value: Array(earlier[index].password.utf8), modified: index > 0 ? earlier[index - 1].replaced : item.created)
                version.replaced = earlier[index].replaced
                return version
            }
            result.add(&item, to: sink)
        }
        // Each item made as it is read (no `Export` keeps every item: it held a second copy of the
        // whole export); the first item refused is said once the document is known to be whole,
        // as when every item was read first. A login takes about 200 bytes of JSON: the room
        // reserved is memory only once written.
        if sink == nil { result.items.reserveCapacity(bytes.count / 128) }
        var folderIDs: [(item: Int, id: String)] = [], refused: VaultError?, count = 0
        let streamed = BitwardenJSONReader.export(bytes) { source in
            defer { count += 1 }
            guard refused == nil, sink?.declined != true else { return }
            if let id = source.folderId {
                sink?.decline()
                folderIDs.append((result.items.count, id))
            }
            do throws(VaultError) { try make(count, source) } catch { refused = error }
        }
        let export: Export
        if let streamed {
            export = streamed
        } else {
            if let sink {
                sink.decline()
                return result
            }
            result.wipe()
            (result, folderIDs) = (ForeignImport(format: InterchangeFormat.bitwardenJSON.rawValue), [])
            do throws(VaultError) {
                export = try JSONDocument.decode(Export.self, from: bytes, what: "a Bitwarden JSON export")
            } catch {
                // A type or reprompt of 1e308 is valid JSON that no Int holds: said as such, with its place (att58 F9, recheck60 R3).
                guard case .malformedInput = error, let problem = BitwardenJSONReader.numberProblem(bytes) else { throw error }
                throw .malformedInput("not a Bitwarden JSON export: \(problem)")
            }
        }
        do throws(VaultError) {
            guard export.encrypted != true else {
                throw .malformedInput("this Bitwarden export is encrypted; export it again as unencrypted JSON (then delete that file)")
            }
            // `{}` (or `"items": null`) is no export: importing nothing with success hid a wrong file.
            guard let items = export.items else {
                throw .malformedInput("the document has no 'items' list, so it is not a Bitwarden JSON export (Bitwarden writes \"items\": [] even when empty)")
            }
            for folder in export.folders ?? [] {
                // Bitwarden gives each folder its own id: one named twice cannot say where its items go (att58 F9).
                if let other = folders[folder.id], other != folder.name {
                    throw .malformedInput("the folders '\(other)' and '\(folder.name)' have the same id, so the items of either cannot be placed")
                }
                folders[folder.id] = folder.name
            }
            if let refused { throw refused }
            let unplaced = streamed != nil ? folderIDs.filter { folders[$0.id] == nil }.count
                : items.filter { $0.folderId.map { folders[$0] == nil } ?? false }.count
            result.notKeep("Bitwarden folders the export does not hold (the items' folderId; imported outside any folder)", count: unplaced, reason: .statedInText)
            // The decoder reads only the keys it knows: the others are found by a scan of their own.
            let unknown = streamed == nil ? unknownKeys(of: bytes) : nil
            for (index, source) in items.enumerated() {
                var source = source
                if let unknown, index < unknown.count { source.unknownKeys = unknown[index] }
                try make(index, source)
            }
        } catch {
            result.wipe()
            throw error
        }
        // Handed over as read, in no folder (a folder declined the sink).
        if sink != nil { return result }
        for (item, id) in folderIDs {
            result.items[item].folders = folders[id].map { $0.split(separator: "/").map(String.init) } ?? []
        }
        return result
    }
}
