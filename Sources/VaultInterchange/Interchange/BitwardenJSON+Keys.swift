import VaultModel

// MARK: - Bitwarden JSON: passkeys, and the keys the reader knows

extension BitwardenJSON {
    /// The keys Bitwarden's export writes (bitwarden/clients, libs/common/src/models/export:
    /// `CipherExport`, `LoginExport`, `LoginUriExport`, `FieldExport`, `PasswordHistoryExport`,
    /// `SshKeyExport`) that the reader knows, by the path of their object (`""` the item,
    /// `login.`…). Each is kept, or named in a warning of its own when it says something (URI
    /// match rules, linked fields, organizations and collections, re-prompt), or says nothing an
    /// entry could keep: the item's `id` (a new one is made on every import), `key` (the item's
    /// own encryption key, of no use once decrypted), `secureNote` (`{type: 0}`, the one kind of
    /// note) and `deletedDate` (Bitwarden exports no item in its trash). Any other key is counted
    /// in a warning `not kept: unknown key 'login.X' of Bitwarden items` (a later format's).
    /// A card's and an identity's properties are all kept, as fields; so are a passkey's.
    static let knownKeys: [String: Set<String>] = [
        "": ["type", "name", "folderId", "notes", "login", "card", "identity", "fields", "revisionDate", "creationDate", "favorite",
             "reprompt", "passwordHistory", "sshKey", "organizationId", "collectionIds", "archivedDate",
             "id", "key", "secureNote", "deletedDate"],
        "login.": ["username", "password", "totp", "uris", "fido2Credentials"],
        "login.uris.": ["uri", "match"],
        "fields.": ["name", "value", "type", "linkedId"],
        "passwordHistory.": ["password", "lastUsedDate"],
        "sshKey.": ["privateKey", "publicKey", "keyFingerprint"],
    ]

    /// Whether the reader knows `key` of an object at `path` (`knownKeys`).
    static func isKnown(_ key: String, in path: String) -> Bool {
        knownKeys[path]?.contains(key) ?? true
    }

    /// The name of the loss of an unknown key (`Item.unknownKeys`).
    static func unknownKeyLoss(_ key: String) -> String {
        "unknown key '\(key)' of Bitwarden items"
    }

    /// The unknown keys of each item of a document the direct reader declined (the decoder reads
    /// only the keys it knows), in item order; nil when `items` is no list.
    static func unknownKeys(of bytes: [UInt8]) -> [[String]]? {
        (try? JSONDocument.decode(KeyScan.self, from: bytes, what: "a Bitwarden JSON export"))?.items?.map { $0.unknown.sorted() }
    }

    /// A document's items' keys (`unknownKeys(of:)`).
    private struct KeyScan: Decodable {
        var items: [ItemKeys]?
    }

    /// Any key.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The unknown keys of one item, as `BitwardenJSONReader` notes them.
    private struct ItemKeys: Decodable {
        var unknown: [String] = []

        init(from decoder: any Decoder) throws {
            let item = try decoder.container(keyedBy: AnyKey.self)
            note(item, path: "")
            if let login = try? item.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "login")) {
                note(login, path: "login.")
                each(in: login, "uris", path: "login.uris.")
            }
            each(in: item, "fields", path: "fields.")
            each(in: item, "passwordHistory", path: "passwordHistory.")
            if let key = try? item.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "sshKey")) { note(key, path: "sshKey.") }
        }

        private mutating func note(_ object: KeyedDecodingContainer<AnyKey>, path: String) {
            for key in object.allKeys where !BitwardenJSON.isKnown(key.stringValue, in: path) && !unknown.contains(path + key.stringValue) {
                unknown.append(path + key.stringValue)
            }
        }

        private mutating func each(in object: KeyedDecodingContainer<AnyKey>, _ list: String, path: String) {
            guard var elements = try? object.nestedUnkeyedContainer(forKey: AnyKey(stringValue: list)) else { return }
            while !elements.isAtEnd {
                guard let element = try? elements.nestedContainer(keyedBy: AnyKey.self) else { return }
                note(element, path: path)
            }
        }
    }

    // MARK: Passkeys

    /// A passkey's members in the order Bitwarden writes them (`Fido2CredentialExport`).
    static let passkeyOrder = ["credentialId", "keyType", "keyAlgorithm", "keyCurve", "keyValue", "rpId", "userHandle", "userName",
                               "counter", "rpName", "userDisplayName", "discoverable", "creationDate"]

    /// The field that keeps member `key` of a login's `index`th passkey: `passkey.KEY`, then
    /// `passkey2.KEY`, `passkey3.KEY`…
    static func passkeyField(_ index: Int, _ key: String) -> String {
        index == 0 ? "passkey.\(key)" : "passkey\(index + 1).\(key)"
    }

    /// The passkey (from 0) and member a field `passkey.KEY`, `passkeyN.KEY` (N ≥ 2) names; nil for
    /// any other field. A source's custom field so named, even `passkey.KEY_2`, is stored under a
    /// numbered name with its label kept in `labels` (`ForeignBuilder.reservedMeaning`), which a
    /// member never has: an export tells the two apart by that line (`takePasskeys`; recheck58 N7,
    /// recheck60 R8: a member `ext_2` stays a member).
    static func passkeyField(_ field: String) -> (index: Int, key: String)? {
        guard field.hasPrefix("passkey"), let dot = field.firstIndex(of: ".") else { return nil }
        let number = field[field.index(field.startIndex, offsetBy: 7)..<dot]
        let key = String(field[field.index(after: dot)...])
        guard !key.isEmpty else { return nil }
        if number.isEmpty { return (0, key) }
        guard number.first != "0", number.count <= 2, number.allSatisfy(\.isASCII), let value = Int(number), value >= 2 else { return nil }
        return (value - 1, key)
    }

    /// The passkeys of a login as facts of its item (`passkey.KEY` fields), every member kept as
    /// its text, the private key (`keyValue`) included: `export --format bitwarden-json` writes
    /// them back as `fido2Credentials` (`takePasskeys`).
    static func passkeyExtras(_ passkeys: [[String: PasskeyText]]) -> [(label: String, value: String)] {
        var extras: [(label: String, value: String)] = []
        for (index, passkey) in passkeys.enumerated() {
            let keys = passkeyOrder.filter { passkey[$0] != nil } + passkey.keys.filter { !passkeyOrder.contains($0) }.sorted()
            for key in keys { extras.append((label: passkeyField(index, key), value: passkey[key]!.text)) }
        }
        return extras
    }
}

extension BitwardenJSONExport {
    /// The passkeys an entry's `passkey.KEY` fields keep, taken out of `fields`: each passkey's
    /// members in Bitwarden's order (then any other, by name), passkeys in their order. A field
    /// with a line in `labels` is a custom field an import renamed (`passkey.rpId_2`, labelled
    /// `passkey.rpId`), never a member: it stays in `fields`.
    static func takePasskeys(_ fields: inout [String: [UInt8]], labels: [String: String]) -> [[(key: String, value: [UInt8])]] {
        var found: [Int: [(key: String, value: [UInt8])]] = [:]
        for name in fields.keys.sorted() where labels[name] == nil {
            guard let (index, key) = BitwardenJSON.passkeyField(name) else { continue }
            found[index, default: []].append((key, fields.removeValue(forKey: name)!))
        }
        func rank(_ key: String) -> Int { BitwardenJSON.passkeyOrder.firstIndex(of: key) ?? BitwardenJSON.passkeyOrder.count }
        return found.keys.sorted().map { index in found[index]!.sorted { (rank($0.key), $0.key) < (rank($1.key), $1.key) } }
    }
}
