import SecureMemory
import VaultModel

// MARK: - ssh keys as vault entries

/// How an entry holds an ssh private key (`set NAME --ssh-key`, `vaultfile ssh-keygen NAME`): the
/// value is the unencrypted OpenSSH private key (`-----BEGIN OPENSSH PRIVATE KEY-----`), and four
/// fields say what it is. The marker field `ssh-key` (its value the key type, `ssh-ed25519`…)
/// makes the entry an ssh key: the agent serves those entries and no others.
public enum SSHKeyEntry {
    /// The marker: present on ssh key entries only; its value is the key type (`ssh-ed25519`).
    public static let markerField = "ssh-key"
    /// The `authorized_keys` line (`TYPE BASE64 COMMENT`), as `ssh-keygen -y` prints it.
    public static let publicField = "public"
    /// The key's comment (absent when the key has none).
    public static let commentField = "comment"
    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    public static let fingerprintField = "fingerprint"

    /// The fields written for `key`, in the order the man page lists them.
    public static func fields(of key: SSHPrivateKey) -> [(name: String, value: String)] {
        [(markerField, key.type.rawValue), (publicField, key.authorizedKeysLine), (commentField, key.comment),
         (fingerprintField, key.publicKey.fingerprint)].filter { $0.name != commentField || !$0.value.isEmpty }
    }

    /// Stores `key` as the entry `name`: its value the key re-encoded unencrypted, the four fields
    /// set (a stale `comment` removed when the key has none), the entry's other fields (notes,
    /// url…) kept, one history version for the whole change.
    public static func store(_ key: SSHPrivateKey, as name: String, in vault: inout Vault, now: Int64 = currentTimeMilliseconds()) throws {
        let text = try key.openSSHText()
        var entry = vault.entry(name) ?? Entry(value: [], created: now, modified: now)
        if !entry.value.isEmpty { wipe(&entry.value) }
        entry.value = text.withUnsafeBytes { Array($0) }
        entry.fields[commentField] = nil
        for field in fields(of: key) { entry.fields[field.name] = Array(field.value.utf8) }
        entry.modified = now
        try vault.put(entry, as: name, now: now)
        wipe(&entry.value)
    }

    /// Whether `entry` is an ssh key entry (it has the marker field).
    public static func isSSHKey(_ entry: Entry) -> Bool { entry.fields[markerField] != nil }

    /// The names of the vault's ssh key entries, sorted; with `prefix`, those whose name starts with it.
    public static func names(in vault: Vault, prefix: String = "") -> [String] {
        vault.names(withPrefix: prefix).filter { vault.entry($0).map(isSSHKey) == true }
    }

    /// The comment the agent lists for the entry `name`: its `comment` field as stored (by
    /// `set --ssh-key`, or as a user changed it since), empty when the field is absent; refused
    /// (`SSHKeyError.damaged`) when a key's comment could not be it (not UTF-8, control
    /// characters, over `SSHPrivateKey.maxCommentLength` bytes).
    public static func storedComment(of name: String, in vault: Vault) throws(SSHKeyError) -> String {
        guard let bytes = try? vault.value(of: name, part: .field(commentField)) else { return "" }
        return try SSHPrivateKey.checkedComment(bytes) { SSHKeyError.damaged("the comment field of '\(name)': \($0)") }
    }

    /// The key the entry `name` holds, read and checked as `set --ssh-key` checked it; refuses an
    /// entry without the marker (`SSHKeyError.damaged`: not an ssh key entry).
    public static func key(of name: String, in vault: Vault) throws -> SSHPrivateKey {
        guard var entry = vault.entry(name) else { throw VaultError.entryNotFound(name) }
        defer { wipe(&entry.value) }
        guard isSSHKey(entry) else { throw SSHKeyError.damaged("'\(name)' is not an ssh key entry (it has no '\(markerField)' field)") }
        return try SSHPrivateKey.parse(entry.value, source: "entry '\(name)'")
    }
}
