import SecureMemory
import VaultModel

// MARK: - export --format pass: the plaintext of each file of a pass store

/// The files of a pass store (`export --format pass --out DIR`), one per entry, in the layout
/// `PassReader` reads (issue 44's rules in reverse), so that `pass show` prints the value on its
/// first line and `vaultfile import --format pass` brings the entry back:
///
/// ```
/// VALUE
/// login: USERNAME
/// url: URL            (url, url2, url3…, one line each)
/// otpauth://totp/…    (totp; a bare Base32 secret made a URI, as pass-otp wants)
/// LABEL: VALUE        (every other text field, in name order, under the label an import kept)
/// notes: FIRST LINE   (notes last: the lines after it continue them)
/// MORE NOTES
/// ```
///
/// The library only makes bytes; the CLI pipes each file to the user's gpg (never a file, never
/// argv) and writes the store (Commands/Extensions/Export+Pass.swift). Every file made is read
/// back with `PassReader`: an entry that would not come back as it is (a value of several lines,
/// a first line that reads as a field, a notes line that reads as `KEY: value`…) is still
/// written, and counted in `losses`. What a store cannot hold at all (binary fields, attachments,
/// history, times, the trash) is counted there too.
public struct PassStoreExport {
    /// The entries to write, in name order.
    public let names: [String]
    private let vault: Vault
    private var tally = ExportLossTally()

    /// The export of `vault`'s entries under `prefix`.
    public init(_ vault: Vault, prefix: String) {
        self.vault = vault
        names = vault.names(withPrefix: prefix)
        tally.addTrash(of: vault, prefix: prefix, format: "a pass store")
        tally.add("times", names.count) {
            "the creation and modification times of \(ExportLossTally.counted($0, "entry", "entries")) not written: a pass store keeps none "
                + "(each file gets the time of the export)"
        }
    }

    /// The path of `name`'s file in the store: its folders, then its title with `.gpg`.
    public static func path(of name: String) -> [String] {
        var parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        parts[parts.count - 1] += ".gpg"
        return parts
    }

    /// What the export could not carry as it is, so far (complete once every file was made).
    public var losses: [ExportLoss] { tally.losses }

    /// The plaintext of `name`'s file (the caller pipes it to gpg, then wipes it); nil when the
    /// vault has no such entry.
    public mutating func contents(of name: String) -> [UInt8]? {
        guard var entry = vault.entry(name) else { return nil }
        defer { Self.wipe(&entry) }
        if vault.keepsHistory, let versions = try? vault.history(of: name), !versions.isEmpty {
            tally.add("history", versions.count) {
                "\(ExportLossTally.counted($0, "earlier version", "earlier versions")) not written: a pass store keeps no history "
                    + "(a store kept in git has its own)"
            }
        }
        if name.split(separator: "/").dropLast().contains(where: { $0.hasPrefix(".") }) {
            tally.add("hidden_folders", 1) {
                "\(ExportLossTally.counted($0, "entry lies", "entries lie")) under a folder whose name starts with '.': pass shows "
                    + "\($0 == 1 ? "it" : "them"), but 'vaultfile import --format pass' skips hidden folders"
            }
        }
        var fields = entry.fields
        let labels = BitwardenJSONExport.takeLabels(&fields)
        var out: [UInt8] = []
        out.reserveCapacity(entry.value.count + fields.values.reduce(64) { $0 + $1.count + 16 })
        var expected = ForeignItem(folders: [], title: "", value: entry.value)
        out.append(contentsOf: entry.value)
        out.append(0x0A)
        func text(_ key: String) -> String? {
            guard let value = fields.removeValue(forKey: key) else { return nil }
            if key.hasPrefix(ForeignBuilder.attachmentPrefix) {
                tally.add("attachments", 1) { "\(ExportLossTally.counted($0, "attachment", "attachments")) not written: a pass store holds text only" }
                return nil
            }
            guard let text = String(validating: value, as: UTF8.self), !text.contains("\0") else {
                tally.add("binary_fields", 1) {
                    "\(ExportLossTally.counted($0, "field is", "fields are")) not text (binary data), which a pass file's lines cannot hold: not written"
                }
                return nil
            }
            return text
        }
        func line(_ key: String, _ value: String) { out.append(contentsOf: Array("\(key): \(value)\n".utf8)) }
        if let username = text("username") { line("login", username); expected.username = username }
        for key in fields.keys.filter(BitwardenJSONExport.isURL).sorted(by: { ($0 == "url" ? 1 : Int($0.dropFirst(3)) ?? 0) < ($1 == "url" ? 1 : Int($1.dropFirst(3)) ?? 0) }) {
            if let url = text(key) { line("url", url); expected.urls.append(url) }
        }
        if let totp = text("totp") {
            let title = name.split(separator: "/").last.map(String.init) ?? name
            let uri = String(decoding: KeePassXMLWriter.otp(Array(totp.utf8), title: title), as: UTF8.self)
            // A TOTP that is neither a URI nor a Base32 secret stays as it is, on a `totp:` line.
            if uri.hasPrefix("otpauth://") { out.append(contentsOf: Array(uri.utf8) + [0x0A]) } else { line("totp", uri) }
            expected.totp = uri
        }
        let notes = text("notes")
        for key in fields.keys.sorted() {
            guard let value = text(key) else { continue }
            // A label that a line cannot carry as a key (a ':', a leading or trailing blank, a
            // control, too long), or that the reader takes for one of vaultfile's own fields (a
            // custom `totp` an import stored as `totp_2`), gives way to the field's own name.
            let label = labels[key].flatMap { Self.isKey($0) && !Self.readAsOwn($0) ? $0 : nil } ?? key
            line(label, value)
            expected.fields.append(ForeignField(label: label, value: Array(value.utf8)))
        }
        if let notes {
            out.append(contentsOf: Array("notes: \(notes)\n".utf8))
            expected.notes = notes
        }
        if !Self.readsBack(out, as: expected, path: name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)) {
            tally.add("reads_differently", 1) {
                "\(ExportLossTally.counted($0, "entry holds", "entries hold")) a value of several lines, or a value, field or notes line that "
                    + "reads as a 'KEY: value' line: written, but 'vaultfile import --format pass' (and pass's other readers) will read "
                    + "\($0 == 1 ? "it" : "them") back otherwise"
            }
        }
        return out
    }

    // MARK: Private

    /// Whether `PassReader` reads `bytes` back as `expected`.
    private static func readsBack(_ bytes: [UInt8], as expected: ForeignItem, path: [String]) -> Bool {
        guard var read = try? PassReader.item(ForeignStoreFile(path: path, bytes: bytes)) else { return false }
        defer { SecureMemory.wipe(&read.value) }
        // The reader keeps `tags`, `title`… as facts (extras), the rest as fields: together, by label.
        func sorted(_ pairs: [(String, [UInt8])]) -> [(String, [UInt8])] {
            pairs.sorted { $0.0 != $1.0 ? Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) : $0.1.lexicographicallyPrecedes($1.1) }
        }
        let fields = sorted(read.fields.map { ($0.label, $0.value) } + read.extras.map { ($0.label, Array($0.value.utf8)) })
        let wanted = sorted(expected.fields.map { ($0.label, $0.value) })
        return read.value == expected.value && read.username == expected.username && read.urls == expected.urls
            && read.totp == expected.totp && read.notes == expected.notes
            && fields.map(\.0) == wanted.map(\.0) && fields.map(\.1) == wanted.map(\.1)
    }

    /// Whether the reader takes a line of key `label` for one of vaultfile's own fields.
    private static func readAsOwn(_ label: String) -> Bool {
        let lower = label.lowercased()
        return lower == "totp" || lower == "title" || PassReader.metadataKeys.contains(lower)
    }

    /// Whether `label` can be the key of a `KEY: value` line (`PassReader.keyValue`).
    private static func isKey(_ label: String) -> Bool {
        !label.isEmpty && label.utf8.count <= PassReader.maxKeyLength && !label.contains(":") && label.first != " " && label.last != " "
            && !label.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            && !PassReader.fieldKeysOfFirstLine.contains(label.lowercased())
    }

    private static func wipe(_ entry: inout Entry) {
        SecureMemory.wipe(&entry.value)
        for key in Array(entry.fields.keys) { SecureMemory.wipe(&entry.fields[key]!) }
    }
}
