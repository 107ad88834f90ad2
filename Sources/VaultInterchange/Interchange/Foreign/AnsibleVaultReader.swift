import SecureMemory
import VaultFormat
import VaultModel

// MARK: - ansible-vault files and inline `!vault` values

/// Reads ansible-vault's encrypted files (`$ANSIBLE_VAULT;1.1;AES256`, and `1.2;AES256;ID` with a
/// vault id), and the inline `!vault |` values of a YAML variables file, with one or more vault
/// passwords: each value opens with the first password, in the order given, whose HMAC verifies
/// (as ansible tries each of several `--vault-id`s), so a file whose values are under several
/// vault ids is read in one import.
///
/// The format (ansible's `lib/ansible/parsing/vault/__init__.py`, `VaultAES256`): after the header
/// line, lines of hex; their text decodes to three hex strings on three lines: the salt, the
/// HMAC-SHA256 of the ciphertext and the ciphertext. PBKDF2-HMAC-SHA256 of the password and the
/// salt, 10,000 iterations, gives 80 bytes: the AES-256 key, the HMAC key, the CTR IV. The HMAC
/// is checked (in constant time) before anything is decrypted; then AES-256-CTR, then PKCS#7
/// padding (16-byte blocks) removed and checked.
public enum AnsibleVaultReader {
    /// ansible's PBKDF2 iterations (fixed by the format).
    static let iterations: UInt32 = 10_000
    /// The most bytes of hex text one vault may hold (its plaintext is at most an entry's value).
    static let maxHexLength = 4 * VaultLimits.maxValueLength + 4_096
    /// The longest salt accepted (ansible writes 32 bytes).
    static let maxSaltLength = 1_024

    /// Whether `bytes` is a whole ansible-vault file (it starts with `$ANSIBLE_VAULT;`).
    public static func isVaultFile(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("$ANSIBLE_VAULT;".utf8)) }

    /// How many vault values `bytes` hold, found by the parse `read` makes but without a password:
    /// 1 for a whole vault file (`$ANSIBLE_VAULT;1.x;AES256` on line 1) whose header and body parse,
    /// else the `!vault` values of the YAML file, each one's envelope parsed. 0 for a file that
    /// only mentions `$ANSIBLE_VAULT;` (a comment, a plain string): the caller refuses it before a
    /// password is asked for (cold60 M1). Throws what `read` would throw of the file's structure.
    public static func vaultValueCount(_ bytes: [UInt8], file: String) throws(VaultError) -> Int {
        if isVaultFile(bytes) {
            _ = try parse(envelope: String(decoding: bytes, as: UTF8.self), file: file)
            return 1
        }
        return try vaultValueCount(ConfigYAML.parse(bytes, what: file), path: [], file: file)
    }

    /// The `!vault` values under `node`, each envelope parsed (as `collect` does before decrypting).
    private static func vaultValueCount(_ node: ConfigNode, path: [String], file: String) throws(VaultError) -> Int {
        switch node {
        case .mapping(let items):
            var count = 0
            for item in items { count += try vaultValueCount(item.value, path: path + [item.key], file: file) }
            return count
        case .sequence(let items):
            var count = 0
            for (index, item) in items.enumerated() { count += try vaultValueCount(item, path: path + [String(index)], file: file) }
            return count
        case .scalar(let scalar) where scalar.tag == "!vault":
            _ = try parse(envelope: scalar.text, file: "\(file), line \(scalar.line) ('\(path.joined(separator: "."))')")
            return 1
        case .scalar:
            return 0
        }
    }

    /// The items of one file named `file` (its path as the user gave it, for messages): a whole vault
    /// file is one item named `name`; a YAML file gives one item per `!vault` value, named
    /// `name/key/path` (list items by their index). Plain (unencrypted) values are not imported and
    /// are counted in `notKept`.
    public static func read(_ bytes: [UInt8], file: String, name: String, password: SecureBytes) throws(VaultError) -> ForeignImport {
        try read(bytes, file: file, name: name, passwords: [password])
    }

    /// `read(_:file:name:password:)` with several passwords, each tried on each value in turn.
    public static func read(_ bytes: [UInt8], file: String, name: String, passwords: [SecureBytes]) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "ansible-vault")
        if isVaultFile(bytes) {
            var item = ForeignItem(folders: [], title: name)
            item.value = try decrypt(envelope: String(decoding: bytes, as: UTF8.self), file: file, passwords: passwords)
            result.items.append(item)
            return result
        }
        let root = try ConfigYAML.parse(bytes, what: file)
        var plain = 0
        try collect(root, path: [], file: file, name: name, passwords: passwords, into: &result, plain: &plain)
        guard !result.items.isEmpty else {
            throw .malformedInput("\(file) is neither an ansible-vault file ('$ANSIBLE_VAULT;…' on its first line) nor a YAML file with '!vault' values")
        }
        result.notKeep("plain (unencrypted) YAML values", count: plain, reason: .unencryptedValues)
        return result
    }

    /// The plaintext of one vault (`$ANSIBLE_VAULT;…` header then hex lines), checked.
    public static func decrypt(envelope: String, file: String, password: SecureBytes) throws(VaultError) -> [UInt8] {
        try decrypt(envelope: envelope, file: file, passwords: [password])
    }

    /// The plaintext of one vault, opened by the first of `passwords` whose HMAC verifies.
    public static func decrypt(envelope: String, file: String, passwords: [SecureBytes]) throws(VaultError) -> [UInt8] {
        let parts = try parse(envelope: envelope, file: file)
        var opened: SecureBytes?
        for password in passwords {
            guard let derived = ForeignKeyDerivation.pbkdf2SHA256(password: password, salt: parts.salt, iterations: iterations, outputLength: 80) else {
                throw .sourceDamaged(file: file, why: "PBKDF2 refused the salt")
            }
            let verified = derived.withUnsafeBytes { keys in
                HMACSHA256.verify(parts.hmac, message: parts.ciphertext[...], key: UnsafeRawBufferPointer(rebasing: keys[32..<64]))
            }
            if verified { opened = derived; break }
        }
        guard let derived = opened else {
            let tried = passwords.count == 1 ? "the vault password" : "any of the \(passwords.count) vault passwords given"
            throw .sourceSecretRejected(file: file, what: tried + (parts.vaultID.map { " (vault id '\($0)')" } ?? ""))
        }
        guard let padded = derived.withUnsafeBytes({ keys in
            AES256CTR.decrypt(parts.ciphertext[...], key: UnsafeRawBufferPointer(rebasing: keys[0..<32]), iv: UnsafeRawBufferPointer(rebasing: keys[64..<80]))
        }) else { throw .sourceDamaged(file: file, why: "AES-256-CTR refused the data") }
        return try padded.withUnsafeBytes { (bytes) throws(VaultError) -> [UInt8] in
            // PKCS#7: n bytes of value n, 1 ≤ n ≤ 16. The HMAC passed, so a bad padding is a faulty writer.
            guard let last = bytes.last, (1...16).contains(last), Int(last) <= bytes.count,
                  bytes.suffix(Int(last)).allSatisfy({ $0 == last }) else {
                throw .sourceDamaged(file: file, why: "the decrypted data has no valid PKCS#7 padding")
            }
            return Array(bytes.prefix(bytes.count - Int(last)))
        }
    }

    // MARK: The envelope

    /// The fields of one vault's text.
    struct Envelope {
        var version: String
        var vaultID: String?
        var salt: [UInt8]
        var hmac: [UInt8]
        var ciphertext: [UInt8]
    }

    /// Parses the header and the hex-of-hex body; every size checked before it is used, the
    /// whole text's first (`maxHexLength`: a parameter for the tests).
    static func parse(envelope: String, file: String, maxHexLength: Int = maxHexLength) throws(VaultError) -> Envelope {
        guard envelope.utf8.count <= maxHexLength + 4_096 else {
            throw .limitExceeded("\(file): the vault holds \(envelope.utf8.count) bytes; the most read is \(maxHexLength)")
        }
        var lines = envelope.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { $0.trimmingBlanks() }.filter { !$0.isEmpty }[...]
        guard let header = lines.popFirst() else { throw .sourceDamaged(file: file, why: "it holds no ansible-vault data") }
        let fields = header.split(separator: ";", omittingEmptySubsequences: false)
        guard fields.count >= 3, fields[0] == "$ANSIBLE_VAULT" else {
            throw .malformedInput("\(file): the header '\(header.prefix(40))' is not '$ANSIBLE_VAULT;1.1;AES256' or '$ANSIBLE_VAULT;1.2;AES256;ID'")
        }
        let version = String(fields[1])
        guard version == "1.1" || version == "1.2" else {
            throw .malformedInput("\(file): ansible-vault format \(version.prefix(10)) is not supported (1.1 and 1.2 are)")
        }
        guard fields[2] == "AES256" else { throw .malformedInput("\(file): the cipher '\(fields[2].prefix(20))' is not supported (AES256 is)") }
        var vaultID: String?
        if version == "1.2" {
            guard fields.count == 4, !fields[3].isEmpty else { throw .malformedInput("\(file): a 1.2 header names a vault id: '$ANSIBLE_VAULT;1.2;AES256;ID'") }
            vaultID = String(fields[3])
        } else if fields.count != 3 {
            throw .malformedInput("\(file): a 1.1 header has three fields: '$ANSIBLE_VAULT;1.1;AES256'")
        }
        let hexLength = lines.reduce(0) { $0 + $1.utf8.count }
        guard hexLength <= maxHexLength else {
            throw .limitExceeded("\(file): the vault holds \(hexLength) bytes of hex; the most read is \(maxHexLength)")
        }
        var outer: [UInt8] = []
        outer.reserveCapacity(hexLength / 2)
        for line in lines {
            guard let bytes = hexDecode(line.utf8) else { throw .sourceDamaged(file: file, why: "the vault body is not hexadecimal") }
            outer += bytes
        }
        // From here on the header said "ansible-vault": what does not fit is a damaged (cut,
        // edited) vault, exit 4 as for any other damaged source, not input of another kind.
        guard hexLength > 0 else { throw .sourceDamaged(file: file, why: "the header is followed by no vault body (the file was cut after its first line?)") }
        guard hexLength % 2 == 0 else { throw .sourceDamaged(file: file, why: "the vault body has an odd number of hex digits") }
        let inner = outer.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard inner.count == 3 else {
            let lines = inner.count == 1 ? "1 line" : "\(inner.count) lines"
            throw .sourceDamaged(file: file, why: "the decoded body holds \(lines); an ansible vault holds three (salt, HMAC, ciphertext)")
        }
        guard let salt = hexDecode(inner[0]), let hmac = hexDecode(inner[1]), let ciphertext = hexDecode(inner[2]) else {
            throw .sourceDamaged(file: file, why: "the salt, HMAC or ciphertext is not hexadecimal")
        }
        guard (1...maxSaltLength).contains(salt.count) else { throw .sourceDamaged(file: file, why: "the salt is \(salt.count) bytes") }
        guard hmac.count == 32 else { throw .sourceDamaged(file: file, why: "the HMAC is \(hmac.count) bytes; HMAC-SHA256 has 32") }
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw .sourceDamaged(file: file, why: "the ciphertext is \(ciphertext.count) bytes, not a positive multiple of 16 (the padded block size)")
        }
        return Envelope(version: version, vaultID: vaultID, salt: salt, hmac: hmac, ciphertext: ciphertext)
    }

    /// The bytes of a hex string (either case); nil for an odd length or a non-hex digit.
    static func hexDecode<C: Collection<UInt8>>(_ text: C) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var result = [UInt8]()
        result.reserveCapacity(text.count / 2)
        var high: UInt8?
        for byte in text {
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x41...0x46: nibble = byte - 0x41 + 10
            case 0x61...0x66: nibble = byte - 0x61 + 10
            default: return nil
            }
            if let first = high { result.append(first << 4 | nibble); high = nil } else { high = nibble }
        }
        return result
    }

    // MARK: Inline values

    private static func collect(_ node: ConfigNode, path: [String], file: String, name: String, passwords: [SecureBytes],
                                into result: inout ForeignImport, plain: inout Int) throws(VaultError) {
        switch node {
        case .mapping(let items):
            for item in items { try collect(item.value, path: path + [item.key], file: file, name: name, passwords: passwords, into: &result, plain: &plain) }
        case .sequence(let items):
            for (index, item) in items.enumerated() {
                try collect(item, path: path + [String(index)], file: file, name: name, passwords: passwords, into: &result, plain: &plain)
            }
        case .scalar(let scalar) where scalar.tag == "!vault":
            let place = "\(file), line \(scalar.line) ('\(path.joined(separator: "."))')"
            guard let title = path.last else { throw .malformedInput("\(place): a '!vault' value needs a key") }
            var item = ForeignItem(folders: [name] + path.dropLast(), title: title)
            item.value = try decrypt(envelope: scalar.text, file: place, passwords: passwords)
            result.items.append(item)
        case .scalar(let scalar):
            if scalar.kind != .null { plain += 1 }
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> Substring {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = self[start...].lastIndex { $0 != " " && $0 != "\t" }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
