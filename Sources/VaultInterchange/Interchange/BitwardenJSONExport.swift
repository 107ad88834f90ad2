import SecureMemory
import VaultModel

// MARK: - export --format bitwarden-json

/// `export --format bitwarden-json`: Bitwarden's unencrypted JSON export (`"encrypted": false`,
/// `folders`, `items`), which Bitwarden's importer ("Bitwarden (json)") and vaultfile's own
/// bitwarden-json reader take. The inverse of `BitwardenJSON.read`:
///
/// - an entry's folders are one Bitwarden folder, named `a/b` as Bitwarden names nested folders;
///   its last part (or its `title` field, when the name was made of it) the item's name;
/// - an ssh key entry (`SSHKeyEntry`) is an SSH key (type 5: `sshKey` holds the private key, the
///   public key line and the fingerprint; BitwardenJSON+SSHKey.swift);
/// - an entry with a card's own fields (`cardholderName`, `brand`, `expMonth`, `expYear`), no
///   username, URL or TOTP, and a value that is a card number (Luhn) or no value and two of those
///   fields, is a card (type 3, the value its number); one without a value, URL or TOTP with two
///   of an identity's own fields an identity (type 4: with its `username` and the `title_2`
///   an import kept under the label `title`), tested before the login (an identity has a
///   username); other fields of either are its custom fields; an entry with a value, a username,
///   a URL or a TOTP is a login (type 1:
///   value → password, username, url/url2… → uris, totp); any other (no value) a secure note (type
///   2: notes);
/// - `notes` the notes, `favorite: yes` the favourite mark, every other text field a custom field
///   (hidden, type 1, but `tags`, `expires` and `email`: text, type 0), under the label an import
///   kept in `labels`; the `passkey.KEY` fields an import kept of a login's passkeys its
///   `fido2Credentials` (BitwardenJSON+Keys.swift);
/// - earlier passwords the `passwordHistory` (newest first, `lastUsedDate` when each was replaced;
///   an edit of fields only adds none); `created`/`modified` the creation and revision dates.
///
/// What Bitwarden's JSON cannot hold is counted (`losses`): binary values and fields, attachments
/// (a JSON export carries none), earlier versions' fields other than the value, the trash.
public enum BitwardenJSONExport {
    /// The document and what it could not carry.
    public struct Written {
        /// The JSON (every secret in the clear: the caller writes, then wipes it).
        public var bytes: [UInt8]
        /// Items written.
        public var entries: Int
        /// What was written otherwise than the vault holds it, or not at all.
        public var losses: [ExportLoss]
    }

    /// A card's properties in Bitwarden's export (the number is the value).
    static let cardKeys: Set<String> = ["cardholderName", "brand", "expMonth", "expYear", "code"]
    /// An identity's properties in Bitwarden's export, but `title` and `username`, which are
    /// vaultfile's own fields too.
    static let identityKeys: Set<String> = ["firstName", "middleName", "lastName", "address1", "address2", "address3", "city", "state",
                                            "postalCode", "country", "company", "email", "phone", "ssn", "passportNumber", "licenseNumber"]
    /// The fields that make an entry a card: a card's own (`code`, which other entries have too, is not one).
    static let cardOwnKeys: Set<String> = ["cardholderName", "brand", "expMonth", "expYear"]
    /// Whether an entry (without username, URL or TOTP) is a card: a card's own field and the
    /// evidence a card leaves, its value a card number (12–19 digits, spaces or dashes between,
    /// that pass the Luhn check), or no value and two of a card's own fields (an imported card
    /// without a number). A password beside a `brand` (a router's) never becomes a card number.
    static func isCard(value: [UInt8], keys: Set<String>) -> Bool {
        let own = keys.intersection(cardOwnKeys).count
        if value.isEmpty { return own >= 2 }
        return own >= 1 && isCardNumber(value)
    }

    /// 12–19 digits (spaces or dashes between them allowed) that pass the Luhn check.
    static func isCardNumber(_ value: [UInt8]) -> Bool {
        guard value.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x20 || $0 == 0x2D }) else { return false }
        let digits = value.filter { (0x30...0x39).contains($0) }.map { Int($0 - 0x30) }
        guard (12...19).contains(digits.count) else { return false }
        var sum = 0
        for (position, digit) in digits.reversed().enumerated() {
            let doubled = position % 2 == 1 ? digit * 2 : digit
            sum += doubled > 9 ? doubled - 9 : doubled
        }
        return sum % 10 == 0
    }

    /// The fields that make an entry without a value an identity: an identity's own (a login may
    /// have an `email`, `phone` or `company` field too).
    static let identityOwnKeys: Set<String> = identityKeys.subtracting(["email", "phone", "company"])
    /// Fields written as text (type 0) custom fields; every other is hidden (type 1).
    static let plainFields: Set<String> = ["tags", "expires", "email"]

    /// The entries of `vault` under `prefix` as a Bitwarden JSON export.
    public static func write(_ vault: Vault, prefix: String) throws(VaultError) -> Written {
        var out = ExportBuffer(capacity: 4096)
        var tally = ExportLossTally()
        let names = vault.names(withPrefix: prefix)
        var folderIDs: [String: String] = [:]
        for name in names {
            guard let slash = name.lastIndex(of: "/") else { continue }
            let folder = String(name[..<slash])
            if folderIDs[folder] == nil { folderIDs[folder] = uuid() }
        }
        out.append("{\n  \"encrypted\": false,\n  \"folders\": [")
        for (index, folder) in folderIDs.keys.sorted().enumerated() {
            out.append(index == 0 ? "\n    {\"id\": " : ",\n    {\"id\": ")
            string(folderIDs[folder]!, to: &out)
            out.append(", \"name\": ")
            string(folder, to: &out)
            out.append("}")
        }
        out.append(folderIDs.isEmpty ? "],\n  \"items\": [" : "\n  ],\n  \"items\": [")
        let unstable = ForeignNaming.unstableTitles(names: names, vault: vault)
        for (index, name) in names.enumerated() {
            guard var entry = vault.entry(name) else { continue }
            defer { wipe(&entry) }
            var history = vault.keepsHistory ? ((try? vault.history(of: name)) ?? []) : []
            defer { for position in history.indices { wipe(&history[position].entry) } }
            out.append(index == 0 ? "\n    {" : ",\n    {")
            item(entry, name: name, folderID: name.lastIndex(of: "/").map { folderIDs[String(name[..<$0])]! }, history: history,
                 unstableTitles: unstable, to: &out, tally: &tally)
            out.append("}")
        }
        out.append(names.isEmpty ? "]\n}\n" : "\n  ]\n}\n")
        tally.addTrash(of: vault, prefix: prefix, format: "Bitwarden's JSON")
        return Written(bytes: out.take(), entries: names.count, losses: tally.losses)
    }

    // MARK: One item

    private static func item(_ entry: Entry, name: String, folderID: String?, history: [EntryVersion],
                             unstableTitles: Set<String>, to out: inout ExportBuffer, tally: inout ExportLossTally) {
        var fields = entry.fields
        let labels = takeLabels(&fields)
        func text(_ key: String) -> [UInt8]? {
            guard let value = fields.removeValue(forKey: key) else { return nil }
            guard isText(value) else { binaryField(&tally); return nil }
            return value
        }
        let leaf = name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? name
        // The field `title` is the name only when the entry's name was made of it (an import's);
        // any other (made by hand, or left by `mv`) is a custom field like the others.
        var title = Array(leaf.utf8)
        if let kept = ForeignNaming.title(of: entry, leaf: leaf) {
            // A numbered entry whose re-import would be numbered otherwise keeps its numbered name.
            if !unstableTitles.contains(name) { title = kept }
            fields["title"] = nil
        }
        let notes = text("notes")
        var favorite = false
        if fields["favorite"] == Array("yes".utf8) { fields["favorite"] = nil; favorite = true }
        var value: [UInt8]? = entry.value
        if !isText(entry.value) {
            value = nil
            tally.add("binary_values", 1) { "\(ExportLossTally.counted($0, "value is", "values are")) not text (binary data), which Bitwarden's JSON cannot hold: not written" }
        }
        let attachments = fields.keys.filter { $0.hasPrefix(ForeignBuilder.attachmentPrefix) }
        for key in attachments { fields[key] = nil }
        tally.add("attachments", attachments.count) { "\(ExportLossTally.counted($0, "attachment", "attachments")) not written: a Bitwarden JSON export carries no attachments (attach them in Bitwarden)" }
        let sshKey = sshKeyParts(of: entry, fields: &fields, tally: &tally)
        // The passkeys an import kept (`passkey.KEY` fields) make the entry a login.
        let passkeys = sshKey == nil ? takePasskeys(&fields, labels: labels) : []
        let keys = Set(fields.keys)
        let hasValue = !(value ?? []).isEmpty
        // The type from the fields only a card or an identity holds, before the login's (an
        // identity has a username); custom fields beside them are custom fields of the item.
        let loginOnly = keys.contains("totp") || keys.contains(where: isURL) || !passkeys.isEmpty
        let type: Int
        if sshKey != nil { type = 5 }
        else if !loginOnly, !keys.contains("username"), Self.isCard(value: value ?? [], keys: keys) { type = 3 }
        else if !hasValue, !loginOnly, keys.intersection(identityOwnKeys).count >= 2 { type = 4 }
        else if hasValue || keys.contains("username") || loginOnly { type = 1 }
        else { type = 2 }
        out.append("\"id\": ")
        string(uuid(), to: &out)
        out.append(", \"organizationId\": null, \"folderId\": ")
        if let folderID { string(folderID, to: &out) } else { out.append("null") }
        out.append(", \"type\": ")
        out.appendDecimal(Int64(type))
        out.append(", \"reprompt\": 0, \"name\": ")
        bytes(title, to: &out)
        out.append(", \"notes\": ")
        if let notes { bytes(notes, to: &out) } else { out.append("null") }
        out.append(favorite ? ", \"favorite\": true" : ", \"favorite\": false")
        switch type {
        case 1:
            out.append(", \"login\": {\"fido2Credentials\": [")
            for (index, passkey) in passkeys.enumerated() {
                out.append(index == 0 ? "{" : ", {")
                for (position, member) in passkey.enumerated() {
                    if position > 0 { out.append(", ") }
                    string(member.key, to: &out)
                    out.append(": ")
                    bytes(member.value, to: &out)
                }
                out.append("}")
            }
            out.append("], \"uris\": [")
            let urls = fields.keys.filter(isURL).sorted { urlOrder($0) < urlOrder($1) }
            var first = true
            for key in urls {
                guard let url = text(key) else { continue }
                out.append(first ? "{\"match\": null, \"uri\": " : ", {\"match\": null, \"uri\": ")
                bytes(url, to: &out)
                out.append("}")
                first = false
            }
            out.append("], \"username\": ")
            if let username = text("username") { bytes(username, to: &out) } else { out.append("null") }
            out.append(", \"password\": ")
            if let value, hasValue { bytes(value, to: &out) } else { out.append("null") }
            out.append(", \"totp\": ")
            if let totp = text("totp") { bytes(totp, to: &out) } else { out.append("null") }
            out.append("}")
        case 3:
            out.append(", \"card\": {\"number\": ")
            bytes(value ?? [], to: &out)
            for key in cardKeys.sorted() {
                out.append(", ")
                string(key, to: &out)
                out.append(": ")
                if let field = text(key) { bytes(field, to: &out) } else { out.append("null") }
            }
            out.append("}")
        case 4:
            // The identity's title is the first field an import kept under the label `title`
            // (`title_2`: a custom field `title` of the same item came after it, `title_3`).
            let titleField = fields.keys.filter { $0 != "title" && labels[$0] == "title" }.min { ($0.count, $0) < ($1.count, $1) }
            out.append(", \"identity\": {")
            for (position, key) in (identityKeys.union(["title", "username"])).sorted().enumerated() {
                if position > 0 { out.append(", ") }
                string(key, to: &out)
                out.append(": ")
                if let field = text(key == "title" ? titleField ?? "" : key) { bytes(field, to: &out) } else { out.append("null") }
            }
            out.append("}")
        case 5:
            out.append(", \"sshKey\": {\"privateKey\": ")
            bytes(sshKey!.privateKey, to: &out)
            out.append(", \"publicKey\": ")
            string(sshKey!.publicKey, to: &out)
            out.append(", \"keyFingerprint\": ")
            string(sshKey!.fingerprint, to: &out)
            out.append("}")
        default:
            out.append(", \"secureNote\": {\"type\": 0}")
        }
        out.append(", \"fields\": [")
        var first = true
        for key in fields.keys.sorted() {
            guard let field = text(key) else { continue }
            out.append(first ? "{\"name\": " : ", {\"name\": ")
            string(labels[key] ?? key, to: &out)
            out.append(", \"value\": ")
            bytes(field, to: &out)
            out.append(plainFields.contains(key) ? ", \"type\": 0, \"linkedId\": null}" : ", \"type\": 1, \"linkedId\": null}")
            first = false
        }
        out.append("], \"passwordHistory\": ")
        passwordHistory(history, current: entry, to: &out, tally: &tally)
        out.append(", \"creationDate\": ")
        string(UTCTime.rfc3339(milliseconds: UTCTime.withinFourDigitYears(milliseconds: entry.created)), to: &out)
        out.append(", \"revisionDate\": ")
        string(UTCTime.rfc3339(milliseconds: UTCTime.withinFourDigitYears(milliseconds: entry.modified)), to: &out)
        out.append(", \"deletedDate\": null, \"collectionIds\": null")
    }

    /// Earlier passwords, newest first, each with when it was replaced: a version whose value is
    /// the one after it (an edit of fields only) adds none. What a version held besides its value
    /// is counted, as is a value that is not text.
    private static func passwordHistory(_ history: [EntryVersion], current: Entry, to out: inout ExportBuffer, tally: inout ExportLossTally) {
        var first = true
        var newer = current.value
        for version in history {
            if version.entry.fields != current.fields {
                tally.add("version_fields", 1) {
                    "\(ExportLossTally.counted($0, "earlier version holds", "earlier versions hold")) fields other than the current entry's; "
                        + "Bitwarden's password history keeps passwords only: their other fields not written"
                }
            }
            defer { newer = version.entry.value }
            guard version.entry.value != newer else { continue }
            guard isText(version.entry.value) else {
                tally.add("binary_versions", 1) { "\(ExportLossTally.counted($0, "earlier version's value is", "earlier versions' values are")) not text (binary data): not written" }
                continue
            }
            out.append(first ? "[{\"lastUsedDate\": " : ", {\"lastUsedDate\": ")
            string(UTCTime.rfc3339(milliseconds: UTCTime.withinFourDigitYears(milliseconds: version.replaced)), to: &out)
            out.append(", \"password\": ")
            bytes(version.entry.value, to: &out)
            out.append("}")
            first = false
        }
        out.append(first ? "null" : "]")
    }

    // MARK: Helpers

    /// The labels an import kept (`labels`: `FIELD<TAB>LABEL` lines), taken out of `fields`.
    static func takeLabels(_ fields: inout [String: [UInt8]]) -> [String: String] {
        guard let kept = fields[ForeignBuilder.labelsField], let text = String(validating: kept, as: UTF8.self) else { return [:] }
        var labels: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2, fields[String(parts[0])] != nil { labels[String(parts[0])] = String(parts[1]) }
        }
        if !labels.isEmpty { fields[ForeignBuilder.labelsField] = nil }
        return labels
    }

    private static func binaryField(_ tally: inout ExportLossTally) {
        tally.add("binary_fields", 1) { "\(ExportLossTally.counted($0, "field is", "fields are")) not text (binary data), which Bitwarden's JSON cannot hold: not written" }
    }

    /// `url`, `url2`, `url3`…
    static func isURL(_ key: String) -> Bool { key == "url" || key.hasPrefix("url") && Int(key.dropFirst(3)).map { $0 >= 2 } == true }
    private static func urlOrder(_ key: String) -> Int { key == "url" ? 1 : Int(key.dropFirst(3)) ?? 0 }

    private static func isText(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { UTF8Bytes.isValid($0) } }

    private static func string(_ text: String, to out: inout ExportBuffer) { bytes(Array(text.utf8), to: &out) }

    private static func bytes(_ bytes: [UInt8], to out: inout ExportBuffer) {
        bytes.withUnsafeBytes { NativeJSON.appendString($0, to: &out) }
    }

    private static func wipe(_ entry: inout Entry) {
        SecureMemory.wipe(&entry.value)
        for key in Array(entry.fields.keys) { SecureMemory.wipe(&entry.fields[key]!) }
    }

    /// A random version 4 UUID, as Bitwarden's ids are.
    static func uuid() -> String {
        var bytes = randomBytes(count: 16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
