import SecureMemory
import VaultModel

// MARK: - pass and passage stores (one decrypted file each)

/// Reads the decrypted files of a pass, gopass or passage store into items, by the rules of
/// issue 44 (docs/INTERCHANGE.md, "pass and passage"):
///
/// - the file's path in the store is the name (folders, then the title);
/// - line 1 is the value, unless it is a `KEY: value` line whose key is login, user, username,
///   url, comments or notes (then the item has no value, as pass-import reads it);
/// - `KEY: value` lines: login/user/username → the username, url → a URL, comments/notes → the
///   notes, totp → the TOTP, tags/expires/favorite (and a title the file's name was made of) →
///   those facts, as `export --format pass` writes them; any other key → a custom field with that label;
/// - lines that start with `otpauth://` → the TOTP;
/// - lines after `comments:`/`notes:` that are not `KEY: value` lines continue the notes, and any
///   other line is kept in the notes too, so nothing is lost;
/// - empty files and notes-only files are items all the same.
///
/// The spawning of gpg/age and the walk of the folder live in the CLI (Support/Import/); this
/// type only parses bytes, which are untrusted.
public enum PassReader {
    /// The keys a first line may start with and still not be the value.
    static let fieldKeysOfFirstLine: Set<String> = ["login", "user", "username", "url", "comments", "notes"]
    /// The keys whose value is the username.
    static let usernameKeys: Set<String> = ["login", "user", "username"]
    /// The keys whose value starts the notes; the lines after them that are not `KEY: value` continue them.
    static let notesKeys: Set<String> = ["comments", "notes"]
    /// The keys read as the facts vaultfile keeps as fields (`ForeignBuilder.reservedNames`), as
    /// `export --format pass` writes them; with `title` when it is the title the file's name was
    /// made of, and `totp` (a TOTP that is no `otpauth://` line). Any other `title`, like any key
    /// vaultfile reads as more than a field, is a custom field the builder stores under another name.
    static let metadataKeys: Set<String> = ["tags", "expires", "favorite"]
    /// The longest key of a `KEY: value` line; a longer text before ':' is a line of notes.
    static let maxKeyLength = 64

    /// The items of `files`, in their order, as format `format` ("pass" or "passage").
    /// `skipped` carries what the walk of the store saw and did not read (e.g. ".gpg-id files") → count
    /// and why, which the builder reports as losses.
    public static func read(_ files: [ForeignStoreFile], format: String,
                            skipped: [String: (count: Int, reason: NotKeptReason)] = [:]) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: format)
        result.items.reserveCapacity(files.count)
        for file in files {
            result.items.append(try item(file))
        }
        for (what, skip) in skipped { result.notKeep(what, count: skip.count, reason: skip.reason) }
        return result
    }

    /// The item of one decrypted file; an error names the file (its path in the store) and the line.
    public static func item(_ file: ForeignStoreFile) throws(VaultError) -> ForeignItem {
        guard let title = file.path.last, !title.isEmpty else {
            throw .malformedInput("a file of the store has an empty name")
        }
        guard file.bytes.count <= VaultLimits.maxValueLength else {
            throw .limitExceeded("\(file.path.joined(separator: "/")): the decrypted file holds \(file.bytes.count) bytes; the most an entry holds is \(VaultLimits.maxValueLength)")
        }
        var item = ForeignItem(folders: Array(file.path.dropLast()), title: title)
        var notes: [String] = []
        for (index, line) in lines(file.bytes).enumerated() {
            let lineNumber = index + 1
            if lineNumber == 1 {
                if let (key, _) = keyValue(line), fieldKeysOfFirstLine.contains(key.lowercased()) {
                    // A first line that names a field: this item has no value (pass-import's reading).
                } else {
                    item.value = Array(line)
                    continue
                }
            }
            let text = try self.text(line, file: file, line: lineNumber)
            if text.hasPrefix("otpauth://") {
                if item.totp == nil { item.totp = text } else { item.fields.append(ForeignField(label: "otpauth", value: Array(text.utf8), protected: true)) }
                continue
            }
            if let (key, value) = keyValue(Array(text.utf8)[...]) {
                let lower = key.lowercased()
                if usernameKeys.contains(lower) {
                    // A second login, user or username line is a second username: kept beside the
                    // first as `username_2`, which the builder numbers and reports (cold58 L5), its
                    // key as written (`login`) its label (recheck58 N5).
                    if item.username == nil {
                        item.username = value
                    } else {
                        item.fieldNames[item.fields.count] = "username"
                        item.fields.append(ForeignField(label: key, value: Array(value.utf8), protected: false))
                    }
                } else if lower == "url" {
                    item.urls.append(value)
                } else if notesKeys.contains(lower) {
                    if !value.isEmpty { notes.append(value) }
                } else if lower == "totp", item.totp == nil, !value.isEmpty {
                    item.totp = value
                } else if metadataKeys.contains(lower) || lower == "title" && ForeignNaming.explains(value, leaf: title) {
                    // What vaultfile's pass export writes of its own fields: the same fields again.
                    item.extras.append((label: lower, value: value))
                } else {
                    item.fields.append(ForeignField(label: key, value: Array(value.utf8), protected: false))
                }
                continue
            }
            // A line of notes: the continuation of `comments:`/`notes:`, or a line no rule reads.
            notes.append(text)
        }
        while let last = notes.last, last.allSatisfy({ $0 == " " || $0 == "\t" }) { notes.removeLast() }
        if !notes.isEmpty { item.notes = notes.joined(separator: "\n") }
        return item
    }

    // MARK: Private

    /// The lines of `content` without their '\n'; a final '\n' ends the last line (it starts no
    /// empty one). An empty file has no line.
    static func lines(_ content: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var start = content.startIndex
        while start < content.endIndex {
            let end = content[start...].firstIndex(of: 0x0A) ?? content.endIndex
            result.append(content[start..<end])
            start = end + 1
        }
        return result
    }

    /// `KEY: value` when `line` is one: a key of 1…64 characters that does not start or end with
    /// a space and holds no ':', then ':', then a space, a tab or the end of the line (so that
    /// `https://…` is not a key). The value loses its leading blanks.
    static func keyValue(_ line: ArraySlice<UInt8>) -> (key: String, value: String)? {
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex, colon - line.startIndex <= maxKeyLength else { return nil }
        let after = colon + 1
        guard after == line.endIndex || line[after] == 0x20 || line[after] == 0x09 || line[after] == 0x0D else { return nil }
        let keyBytes = line[line.startIndex..<colon]
        guard keyBytes.first != 0x20, keyBytes.first != 0x09, keyBytes.last != 0x20, keyBytes.last != 0x09,
              let key = String(validating: keyBytes, as: UTF8.self),
              !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        var valueStart = after
        while valueStart < line.endIndex, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        var valueEnd = line.endIndex
        if valueEnd > valueStart, line[valueEnd - 1] == 0x0D { valueEnd -= 1 }
        guard let value = String(validating: line[valueStart..<valueEnd], as: UTF8.self) else { return nil }
        return (key, value)
    }

    /// A line other than the value as text: UTF-8 without NUL, one trailing '\r' dropped.
    private static func text(_ line: ArraySlice<UInt8>, file: ForeignStoreFile, line number: Int) throws(VaultError) -> String {
        var bytes = line
        if bytes.last == 0x0D { bytes = bytes.dropLast() }
        let name = file.path.joined(separator: "/")
        guard !bytes.contains(0) else {
            throw .malformedInput("\(name): line \(number) holds a NUL byte; only the first line (the value) may hold binary data")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformedInput("\(name): line \(number) is not UTF-8; only the first line (the value) may hold binary data")
        }
        return text
    }
}
