import VaultModel

// MARK: - Bitwarden JSON

/// Bitwarden's unencrypted JSON export: folders, and items of type login (1), secure note (2), card (3), identity (4),
/// SSH key (5), as `BitwardenJSONReader` reads it directly (or `JSONDocument` decodes it); `BitwardenJSON.read`
/// (BitwardenJSON+Items.swift) makes items of it for the one builder.
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
        var sshKey: SSHKeyItem? = nil
        /// The organization a shared item belongs to, and its collections: not kept, counted.
        var organizationId: String? = nil
        var collectionIds: [String]? = nil
        /// When the item was archived (Bitwarden 2025): kept as the field `archived`.
        var archivedDate: String? = nil
        /// The keys of the item (and of its login, URIs, custom fields, earlier passwords and SSH
        /// key, as `login.KEY`…) that the reader does not know (`BitwardenJSON.knownKeys`), each
        /// once, in name order: counted as not kept. Filled by the reader (`BitwardenJSONReader`, `KeyScan`).
        var unknownKeys: [String]? = nil
    }
    /// An SSH key item's key (Bitwarden's `SshKeyExport`): the private key as an unencrypted
    /// OpenSSH private key, the public key as an `authorized_keys` line, and its fingerprint.
    struct SSHKeyItem: Decodable, Equatable { var privateKey: String?; var publicKey: String?; var keyFingerprint: String? }
    /// An earlier password of a login, with the time it was replaced.
    struct PasswordVersion: Decodable, Equatable { var password: String?; var lastUsedDate: String? }
    struct Login: Decodable, Equatable {
        var username: String?
        var password: String?
        var totp: String?
        var uris: [URI]?
        /// The login's passkeys (`Fido2CredentialExport`: `credentialId`, `keyType`, `keyAlgorithm`,
        /// `keyCurve`, `keyValue` (the private key), `rpId`, `userHandle`, `userName`, `counter`,
        /// `rpName`, `userDisplayName`, `discoverable`, `creationDate`, each a string), each
        /// member as text: kept as the fields `passkey.KEY` (BitwardenJSON+Passkeys.swift).
        var fido2Credentials: [[String: PasskeyText]]? = nil
    }
    /// A passkey's member as text: Bitwarden writes strings; a number or a boolean (another
    /// tool's export) is kept as its JSON text, `null` as nothing.
    struct PasskeyText: Decodable, Equatable {
        var text: String
        init(text: String) { self.text = text }
        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { text = "" }
            else if let string = try? single.decode(String.self) { text = string }
            else if let flag = try? single.decode(Bool.self) { text = flag ? "true" : "false" }
            else if let number = try? single.decode(Int64.self) { text = String(number) }
            else { text = String(try single.decode(Double.self)) }
        }
    }
    /// A login's URI and its match rule (`match`: null for the default, 0–5 for domain, host,
    /// starts with, exact, regular expression, never), which vaultfile does not keep.
    struct URI: Decodable, Equatable { var uri: String?; var match: Int? = nil }
    /// A custom field: `type` 0 text, 1 hidden, 2 boolean, 3 linked (no value: `linkedId` names the
    /// item property it shows, e.g. 100 the login's username).
    struct CustomField: Decodable, Equatable { var name: String?; var value: String?; var type: Int? = nil; var linkedId: Int? = nil }
}
