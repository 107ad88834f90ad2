import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Bitwarden's SSH key items (type 5), read

extension BitwardenJSON {
    /// Fills `item` from the SSH key item `source` (type 5, `sshKey: {privateKey, publicKey,
    /// keyFingerprint}`, Bitwarden's `SshKeyExport`) as `set NAME --ssh-key` fills an entry
    /// (`SSHKeyEntry`): the private key, as the item holds it, is the value; the fields `ssh-key`
    /// (the key type), `public`, `comment` and `fingerprint` follow. The public key line is kept as
    /// the item has it when it is the private key's, as is the fingerprint when it is the key's
    /// SHA-256 one; otherwise the key's own are stored and a warning says so. The comment is the
    /// custom field `comment` when the item has one (what `export --format bitwarden-json` writes
    /// for a comment changed after the key was stored), else the private key's own.
    ///
    /// A key the agent could not serve is kept all the same, as an ordinary entry (the value the
    /// item's private key, `public` and `fingerprint` as the item has them, no `ssh-key` marker),
    /// with a warning: a key protected by a passphrase (Bitwarden's own exports hold unencrypted
    /// keys; the library cannot ask for a passphrase), or one that is no OpenSSH private key of a
    /// kept type. An item without a private key is refused, as Bitwarden's import refuses it.
    ///
    /// Returns whether the custom field `comment` was taken as the key's comment.
    static func readSSHKey(_ source: Item, index: Int, into item: inout ForeignItem, result: inout ForeignImport) throws(VaultError) -> Bool {
        let title = source.name ?? ""
        guard let privateText = source.sshKey?.privateKey, !privateText.isEmpty else {
            throw .malformedInput("item \(index + 1) ('\(title)') is an SSH key (type 5) without 'sshKey.privateKey' (Bitwarden's import refuses it too)")
        }
        item.value = Array(privateText.utf8)
        let publicText = source.sshKey?.publicKey.map(lineWithoutBreaks) ?? ""
        let fingerprintText = source.sshKey?.keyFingerprint.map(lineWithoutBreaks) ?? ""
        func put(_ field: String, _ text: String) {
            if !text.isEmpty { item.fields.append(ForeignField(label: field, value: Array(text.utf8))) }
        }
        func asIs(_ why: String) {
            put(SSHKeyEntry.publicField, publicText)
            put(SSHKeyEntry.fingerprintField, fingerprintText)
            result.warnings.append(.sshKeyNotServed(item: title, why: why))
        }
        let file: SSHKeyFile
        do throws(SSHKeyError) { file = try SSHKeyFile.read(item.value, source: "the private key of item \(index + 1)") } catch {
            asIs("its private key could not be read (\(error.description))")
            return false
        }
        guard case .plain(let key) = file else {
            asIs("its private key is protected by a passphrase; 'vaultfile get NAME | vaultfile set NAME --ssh-key' asks for it and makes the entry one the agent serves")
            return false
        }
        let sameKey = (try? SSHPublicKey.parse(line: publicText))?.key == key.publicKey
        if !sameKey || fingerprintText != key.publicKey.fingerprint {
            result.notKeep("Bitwarden SSH keys' public keys or fingerprints that are not the private key's (its own are stored)", reason: .statedInText)
        }
        let commentField = source.fields?.first { $0.name == SSHKeyEntry.commentField && $0.value != nil }
        item.extras.append((label: SSHKeyEntry.markerField, value: key.type.rawValue))  // the reader's mark, not a custom field
        put(SSHKeyEntry.publicField, sameKey ? publicText : key.authorizedKeysLine)
        put(SSHKeyEntry.commentField, commentField?.value ?? key.comment)
        put(SSHKeyEntry.fingerprintField, key.publicKey.fingerprint)
        return commentField != nil
    }

    /// `text` without the line breaks and spaces that end it (a public key file's newline).
    private static func lineWithoutBreaks(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars
        while let last = scalars.last, [" ", "\t", "\r", "\n"].contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

// MARK: - Bitwarden's SSH key items, written

extension BitwardenJSONExport {
    /// What an SSH key item holds: `sshKey`'s three members.
    struct SSHKeyParts {
        var privateKey: [UInt8]
        var publicKey: String
        var fingerprint: String
    }

    /// The SSH key item of an ssh key entry (`SSHKeyEntry`: the `ssh-key` marker, a value that
    /// is an unencrypted OpenSSH private key), nil for any other entry (a damaged key entry is
    /// written as before, a login). The marker, `public` and `fingerprint` are taken out of
    /// `fields`; so is `comment` when it is the key's own (one changed since stays, a custom
    /// field the reader takes back as the comment). A `public` or `fingerprint` that is not the
    /// key's is replaced by the key's own and counted.
    static func sshKeyParts(of entry: Entry, fields: inout [String: [UInt8]], tally: inout ExportLossTally) -> SSHKeyParts? {
        guard SSHKeyEntry.isSSHKey(entry), case .plain(let key)? = try? SSHKeyFile.read(entry.value, source: "the entry") else { return nil }
        let stored = fields[SSHKeyEntry.publicField].flatMap { String(validating: $0, as: UTF8.self) }
        let sameKey = stored.flatMap { try? SSHPublicKey.parse(line: $0) }?.key == key.publicKey
        if !sameKey || fields[SSHKeyEntry.fingerprintField] != Array(key.publicKey.fingerprint.utf8) {
            tally.add("ssh_public_replaced", 1) {
                "\(ExportLossTally.counted($0, "ssh key entry's", "ssh key entries'")) public key or fingerprint is not its private key's: the key's own written"
            }
        }
        for field in [SSHKeyEntry.markerField, SSHKeyEntry.publicField, SSHKeyEntry.fingerprintField] { fields[field] = nil }
        if fields[SSHKeyEntry.commentField] == Array(key.comment.utf8) { fields[SSHKeyEntry.commentField] = nil }
        return SSHKeyParts(privateKey: entry.value, publicKey: sameKey ? stored! : key.authorizedKeysLine, fingerprint: key.publicKey.fingerprint)
    }
}
