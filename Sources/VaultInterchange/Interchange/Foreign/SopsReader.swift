import SecureMemory
import VaultFormat
import VaultModel

// MARK: - sops files encrypted to an age key

/// Reads a sops file (YAML or JSON) whose data key is encrypted to age recipients, as sops 3
/// writes it (getsops/sops: `sops.go` Tree.Decrypt, `aes/cipher.go`, `stores/`):
///
/// - the data key (32 bytes) is an armored age file in `sops.age[].enc`; the CLI decrypts it
///   with the user's age identities (this library never runs a program) and hands it to `read`;
/// - every leaf is `ENC[AES256_GCM,data:B64,iv:B64,tag:B64,type:T]`: AES-256-GCM with a 32-byte
///   IV, the associated data the leaf's path of mapping keys joined with ':' plus a trailing ':'
///   (list items take their list's path), the type one of str, int, float, bool, bytes;
/// - leaves sops leaves in plaintext (`unencrypted_suffix`, by default `_unencrypted`, or
///   `encrypted_suffix`) are read as they are;
/// - the MAC: SHA-512 over the values in document order (all, or only the encrypted ones with
///   `mac_only_encrypted`, then after 32 fixed bytes), upper-case hex, is `sops.mac`, itself
///   encrypted with `sops.lastmodified` as associated data. It is checked before any item is
///   returned: a value moved, removed or replaced fails it.
///
/// Items are named `NAME/path/to/key`, list items by their index (`NAME/hosts/0`).
public enum SopsReader {
    /// What `parse` finds: the tree without its `sops` key, and the metadata.
    public struct Document: Sendable {
        /// The armored age files of the data key (`sops.age[].enc`), in file order.
        public var ageDataKeys: [String]
        /// The age recipients they are encrypted to (`sops.age[].recipient`), for messages.
        public var ageRecipients: [String]
        var tree: [(key: String, value: ConfigNode, line: Int)]
        var lastModified: String
        var mac: String
        var rule: Rule
        var macOnlyEncrypted: Bool
        /// YAML comments sops encrypted (`#ENC[…]` lines): not imported, counted.
        var encryptedComments: Int
        /// Other key groups the file has (pgp, kms…), which vaultfile cannot use.
        public var otherKeyKinds: [String]
    }

    /// Which leaves sops encrypted.
    enum Rule: Sendable {
        case unencryptedSuffix(String)
        case encryptedSuffix(String)
        /// A regular-expression rule: a leaf is encrypted exactly when it is an `ENC[…]` value
        /// (refused with `mac_only_encrypted`, where that would let a plaintext value replace an
        /// encrypted one unnoticed).
        case byContent
    }

    /// The sops file types' data types.
    static let types: Set<String> = ["str", "int", "int64", "float", "bool", "bytes"]
    /// sops' `MACOnlyEncryptedInitialization`.
    static let macOnlyEncryptedInitialization: [UInt8] = [0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47,
                                                          0xbe, 0x0b, 0x0b, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81,
                                                          0x76, 0xf2, 0x7d, 0x69]

    /// Whether `bytes` looks like a sops file (a `sops` key holding `mac` and `lastmodified`).
    public static func looksLikeSops(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
        return (text.contains("\nsops:") || text.contains("\"sops\":")) && text.contains("ENC[AES256_GCM,")
    }

    /// Parses `bytes` (JSON when it starts with '{', else YAML) and its `sops` metadata; `file`
    /// names it in messages.
    public static func parse(_ bytes: [UInt8], file: String) throws(VaultError) -> Document {
        let first = bytes.first { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        let root = first == UInt8(ascii: "{") ? try OrderedJSON.parse(bytes, what: file) : try ConfigYAML.parse(bytes, what: file)
        guard case .mapping(var items) = root else { throw .malformedInput("\(file): a sops file is a mapping at its top level") }
        guard let index = items.firstIndex(where: { $0.key == "sops" }), case .mapping(let metadata) = items[index].value else {
            throw .malformedInput("\(file) has no 'sops' metadata: it is not a file sops encrypted")
        }
        items.remove(at: index)
        func text(_ key: String) throws(VaultError) -> String? {
            guard let node = metadata.first(where: { $0.key == key })?.value else { return nil }
            guard case .scalar(let scalar) = node, scalar.kind != .null else { return nil }
            return scalar.text
        }
        var keys: [String] = [], recipients: [String] = [], others: [String] = []
        for entry in metadata {
            switch (entry.key, entry.value) {
            case ("age", .sequence(let stanzas)):
                for stanza in stanzas {
                    guard case .mapping(let fields) = stanza,
                          case .scalar(let enc)? = fields.first(where: { $0.key == "enc" })?.value else {
                        throw .malformedInput("\(file): line \(entry.line): an age key without 'enc'")
                    }
                    keys.append(enc.text)
                    if case .scalar(let recipient)? = fields.first(where: { $0.key == "recipient" })?.value { recipients.append(recipient.text) }
                }
            case ("kms", .sequence(let list)), ("gcp_kms", .sequence(let list)), ("azure_kv", .sequence(let list)),
                 ("hc_vault", .sequence(let list)), ("pgp", .sequence(let list)), ("hckms", .sequence(let list)), ("key_groups", .sequence(let list)):
                if !list.isEmpty { others.append(entry.key) }
            default: break
            }
        }
        guard let lastModified = try text("lastmodified"), let mac = try text("mac"), !mac.isEmpty else {
            throw .malformedInput("\(file): the sops metadata has no 'mac' or 'lastmodified'; vaultfile does not import a file whose MAC it cannot check")
        }
        let rules = [("unencrypted_suffix", false), ("encrypted_suffix", false), ("unencrypted_regex", true), ("encrypted_regex", true),
                     ("unencrypted_comment_regex", true), ("encrypted_comment_regex", true)]
        var rule = Rule.unencryptedSuffix("_unencrypted")
        var ruleCount = 0
        for (key, isRegex) in rules {
            guard let value = try text(key), !value.isEmpty else { continue }
            ruleCount += 1
            rule = isRegex ? .byContent : key == "unencrypted_suffix" ? .unencryptedSuffix(value) : .encryptedSuffix(value)
        }
        guard ruleCount <= 1 else { throw .malformedInput("\(file): the sops metadata has more than one encryption rule, which sops itself refuses") }
        let macOnly = try text("mac_only_encrypted").map { $0 == "true" || $0 == "True" } ?? false
        if macOnly, case .byContent = rule {
            throw .unsupportedFeature("sops' mac_only_encrypted with a regular-expression rule (in \(file)); decrypt it with sops and import the result")
        }
        // The YAML reader drops comments (sops leaves them out of the MAC too); the encrypted ones are counted.
        let comments = first == UInt8(ascii: "{") ? 0 : String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter {
            $0.drop { $0 == " " }.hasPrefix("#ENC[AES256_GCM,")
        }.count
        return Document(ageDataKeys: keys, ageRecipients: recipients, tree: items, lastModified: lastModified, mac: mac, rule: rule,
                        macOnlyEncrypted: macOnly, encryptedComments: comments, otherKeyKinds: others)
    }

    /// The items of `document`, decrypted with the 32-byte `dataKey`, named under `name`; the MAC
    /// is checked before they are returned.
    public static func read(_ document: Document, dataKey: SecureBytes, file: String, name: String) throws(VaultError) -> ForeignImport {
        guard dataKey.count == AES256GCM.keyLength else {
            throw .sourceDamaged(file: file, why: "its data key is \(dataKey.count) bytes, not 32")
        }
        var walk = Walk(document: document, key: dataKey, file: file, name: name)
        for item in document.tree {
            try walk.visit(item.value, aad: [item.key], path: [item.key], line: item.line)
        }
        let computed = hexUpper(walk.hasher.finish())
        // The MAC's associated data is lastmodified as Go's RFC 3339 prints it: without fractions of a second.
        let aad = Self.withoutFraction(document.lastModified)
        guard let stored = try decryptLeaf(document.mac, aad: aad, key: dataKey, file: file, line: 0) else {
            throw .sourceDamaged(file: file, why: "its MAC is not an ENC[AES256_GCM,…] value")
        }
        let matches = stored.bytes.withUnsafeBytes { Array($0) }.count == computed.count
            && zip(stored.bytes.withUnsafeBytes { Array($0) }, computed).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        guard matches else {
            throw .sourceDamaged(file: file, why: "its MAC does not match its values (a value was changed, moved or removed)")
        }
        var result = ForeignImport(format: "sops")
        result.items = walk.items
        result.notKeep("sops null values", count: walk.nulls)
        // An empty value adds no byte to the MAC: anyone could have added one, and --overwrite
        // would then empty an entry (att58 F4). Not imported, and counted.
        result.notKeep("sops empty values (the file's MAC does not cover an empty value)", count: walk.empty, reason: .statedInText)
        if walk.plain > 0 { result.warnings.append(.namesNotAuthenticated(file: file, count: walk.plain)) }
        result.notKeep("sops encrypted comments", count: document.encryptedComments)
        return result
    }

    // MARK: The walk

    private struct Walk {
        let document: Document
        let key: SecureBytes
        let file: String
        let name: String
        let hasher = SHA512Hasher()
        var items: [ForeignItem] = []
        var nulls = 0
        /// Empty values, left out; unencrypted values, imported with a warning.
        var empty = 0, plain = 0

        init(document: Document, key: SecureBytes, file: String, name: String) {
            self.document = document
            self.key = key
            self.file = file
            self.name = name
            if document.macOnlyEncrypted { macOnlyEncryptedInitialization.withUnsafeBytes { hasher.update($0) } }
        }

        mutating func visit(_ node: ConfigNode, aad: [String], path: [String], line: Int) throws(VaultError) {
            switch node {
            case .mapping(let entries):
                for entry in entries { try visit(entry.value, aad: aad + [entry.key], path: path + [entry.key], line: entry.line) }
            case .sequence(let elements):
                // sops' walkSlice passes the list's own path on: list items share it in the associated data.
                for (index, element) in elements.enumerated() { try visit(element, aad: aad, path: path + [String(index)], line: line) }
            case .scalar(let scalar):
                try leaf(scalar, aad: aad, path: path)
            }
        }

        private func isEncrypted(_ aad: [String], _ scalar: ConfigScalar) -> Bool {
            switch document.rule {
            case .unencryptedSuffix(let suffix): return !aad.contains { $0.hasSuffix(suffix) }
            case .encryptedSuffix(let suffix): return aad.contains { $0.hasSuffix(suffix) }
            case .byContent: return scalar.kind == .string && scalar.text.hasPrefix("ENC[")
            }
        }

        private mutating func leaf(_ scalar: ConfigScalar, aad: [String], path: [String]) throws(VaultError) {
            if scalar.tag == "!flow" {
                guard scalar.text == "[]" || scalar.text == "{}" else {
                    throw .malformedInput("\(file): line \(scalar.line): a flow collection ('\(scalar.text.prefix(20))'), which sops does not write")
                }
                return
            }
            if scalar.kind == .null { nulls += 1; return }  // sops' walk skips nil: not in the MAC either
            let encrypted = isEncrypted(aad, scalar)
            var value: [UInt8]
            var macBytes: [UInt8]
            if encrypted {
                guard scalar.kind == .string else {
                    throw .sourceDamaged(file: file, why: "line \(scalar.line): '\(aad.joined(separator: "."))' should be encrypted and is a plain \(scalar.kind)")
                }
                if scalar.text.isEmpty {
                    value = []; macBytes = []  // sops leaves an empty string as it is
                } else {
                    guard let opened = try SopsReader.decryptLeaf(scalar.text, aad: aad.joined(separator: ":") + ":", key: key, file: file, line: scalar.line) else {
                        throw .sourceDamaged(file: file, why: "line \(scalar.line): '\(aad.joined(separator: "."))' is not an ENC[AES256_GCM,…] value")
                    }
                    value = opened.bytes.withUnsafeBytes { Array($0) }
                    macBytes = try SopsReader.macBytes(of: value, type: opened.type, file: file, line: scalar.line)
                }
            } else {
                value = Array(scalar.text.utf8)
                macBytes = SopsReader.macBytes(ofPlain: scalar)
            }
            if !document.macOnlyEncrypted || encrypted { macBytes.withUnsafeBytes { hasher.update($0) } }
            wipe(&macBytes)
            guard let title = path.last else { return }
            if value.isEmpty { empty += 1; return }
            if !encrypted { plain += 1 }
            var item = ForeignItem(folders: [name] + path.dropLast(), title: title)
            item.value = value
            wipe(&value)
            items.append(item)
        }
    }

    // MARK: One value

    /// The plaintext and type of an `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]` value, or nil when
    /// `text` is not one; `.sourceDamaged` when it does not authenticate.
    static func decryptLeaf(_ text: String, aad: String, key: SecureBytes, file: String, line: Int) throws(VaultError) -> (bytes: SecureBytes, type: String)? {
        guard text.hasPrefix("ENC[AES256_GCM,"), text.hasSuffix("]") else { return nil }
        let body = text.dropFirst("ENC[AES256_GCM,".count).dropLast()
        var parts: [String: Substring] = [:]
        for part in body.split(separator: ",", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":") else { return nil }
            parts[String(part[..<colon])] = part[part.index(after: colon)...]
        }
        let place = line > 0 ? "line \(line)" : "the MAC"
        guard let data = parts["data"].flatMap(ForeignBase64.decode), let iv = parts["iv"].flatMap(ForeignBase64.decode),
              let tag = parts["tag"].flatMap(ForeignBase64.decode), let type = parts["type"].map(String.init) ?? (line == 0 ? "str" : nil) else {
            throw .sourceDamaged(file: file, why: "\(place): an ENC value whose data, iv, tag or type is missing or not Base64")
        }
        guard types.contains(type) else { throw .sourceDamaged(file: file, why: "\(place): the unknown sops type '\(type.prefix(12))'") }
        guard let plaintext = key.withUnsafeBytes({ AES256GCM.open(data, tag: tag, key: $0, iv: iv, associatedData: Array(aad.utf8)) }) else {
            throw .sourceDamaged(file: file, why: "\(place): a value does not authenticate under the data key and its path")
        }
        return (plaintext, type)
    }

    /// The bytes sops' `ToBytes` gives a decrypted value of `type` (bool as True/False, int canonical).
    static func macBytes(of value: [UInt8], type: String, file: String, line: Int) throws(VaultError) -> [UInt8] {
        let text = String(decoding: value, as: UTF8.self)
        switch type {
        case "bool":
            switch text {
            case "1", "t", "T", "TRUE", "true", "True": return Array("True".utf8)
            case "0", "f", "F", "FALSE", "false", "False": return Array("False".utf8)
            default: throw .sourceDamaged(file: file, why: "line \(line): a bool value that is not a boolean")
            }
        case "int", "int64":
            guard let number = Int64(text) else { throw .sourceDamaged(file: file, why: "line \(line): an int value that is not an integer") }
            return Array(String(number).utf8)
        default: return value
        }
    }

    /// The bytes sops' `ToBytes` gives a value it left in plaintext, as go-yaml or Go's JSON resolved it.
    static func macBytes(ofPlain scalar: ConfigScalar) -> [UInt8] {
        switch scalar.kind {
        case .bool: return Array((scalar.text.first == "t" || scalar.text.first == "T" ? "True" : "False").utf8)
        case .int: return Array((Int64(scalar.text.filter { $0 != "_" && $0 != "+" }).map(String.init) ?? scalar.text).utf8)
        default: return Array(scalar.text.utf8)
        }
    }

    static func hexUpper(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
    }

    /// `2024-09-04T13:43:30.123Z` → `2024-09-04T13:43:30Z` (Go's `time.RFC3339` has no fraction).
    static func withoutFraction(_ time: String) -> String {
        guard let dot = time.firstIndex(of: ".") else { return time }
        let rest = time[time.index(after: dot)...].drop { $0.isASCII && $0.isNumber }
        return String(time[..<dot]) + rest
    }
}
