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
    }
    /// A login's URI and its match rule (`match`: null for the default, 0–5 for domain, host,
    /// starts with, exact, regular expression, never), which vaultfile does not keep.
    struct URI: Decodable, Equatable { var uri: String?; var match: Int? = nil }
    /// A custom field: `type` 0 text, 1 hidden, 2 boolean, 3 linked (no value: `linkedId` names the
    /// item property it shows, e.g. 100 the login's username).
    struct CustomField: Decodable, Equatable { var name: String?; var value: String?; var type: Int? = nil; var linkedId: Int? = nil }
}
