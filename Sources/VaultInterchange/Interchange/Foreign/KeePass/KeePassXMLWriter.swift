import FoundationEssentials
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The XML inside a written KDBX 4 file

/// Writes a vault's entries as the XML of a KDBX 4 database (KeePass 2's `KeePassFile`), the
/// inverse of what `KeePassXMLReader` keeps: folders become groups, the value the Password,
/// `username`/`url`/`notes`/`title` the standard strings, `url2`… KeePassXC's `KP2A_URL` strings,
/// `totp` KeePassXC's `otp` attribute, `attachment.NAME` fields attachments (in the inner header's
/// pool, each distinct content once), `tags` the Tags, `expires` the expiry time, every other field
/// a protected custom string, each earlier version an entry of its History.
///
/// Two forms, one writer (`Form`): the XML inside a KDBX 4 file, whose protected values are XORed
/// with the inner stream in document order as they are written (the reader undoes them in the same
/// order), times are base64 seconds and attachments index the inner header's pool; and KeePass 2's
/// XML file (`export --format keepass-xml`, what KeePass's "KeePass XML (2.x)" export and
/// `keepassxc-cli import` take), whose protected values are in the clear (`ProtectInMemory`), times
/// ISO 8601 and attachments in Meta/Binaries. A value or field that is not text (binary, or a character
/// XML 1.0 cannot hold: C0 controls but tab, LF and CR, U+FFFE, U+FFFF) becomes an attachment of its
/// name (the value: `value.bin`), and is counted. A label XML cannot hold gives way to the field's
/// own name (always ASCII), counted; an entry name XML cannot hold refuses the export, naming it.
///
/// Keys are unique within an entry, as KeePassXC requires ("Duplicate custom attribute found"):
/// the standard strings first, then the fields in name order; a string key or attachment name
/// already taken in the entry gets " (2)", " (3)"…, and is counted (extra URLs take the next free
/// `KP2A_URL_n` instead, so that they stay URLs).
struct KeePassXMLWriter {
    /// The XML so far (wiped by the caller after use).
    var xml: [UInt8] = []
    /// The attachments' contents, in pool order (the inner header's binaries).
    private(set) var pool: [[UInt8]] = []
    /// Values and fields written as attachments because they are not text.
    private(set) var binaryAsAttachment = 0
    /// Entries written, history versions not counted.
    private(set) var entries = 0
    /// Keys and attachment names written under another name because the entry had taken theirs.
    private(set) var renamed = 0
    /// Labels (kept by an import) that XML cannot hold, written under the field's own name.
    private(set) var labelsReplaced = 0
    /// Earlier versions written into the entries' histories.
    private(set) var versions = 0
    /// Tags that are not text, written as an attachment `tags` (counted in `binaryAsAttachment` too).
    private(set) var tagsAsAttachment = 0
    private var poolIndex: [[UInt8]: Int] = [:]
    /// The numbered entries whose kept title a re-import would give to another account
    /// (`ForeignNaming.unstableTitles`): their Title is their name's last part.
    private var unstableTitles: Set<String> = []
    /// Random bytes for UUIDs (`uuid`) and how many were used.
    var random: [UInt8] = [], randomAt = 0
    let form: Form
    /// False while an entry's history is written: its versions' losses are their entry's, counted once.
    private var counting = true
    /// Takes the XML written so far (then wiped and emptied here) once it holds `spillSize` bytes,
    /// and the rest at the end (`last`): the KDBX export compresses it as it comes.
    typealias Spill = (_ xml: inout [UInt8], _ last: Bool) throws(VaultError) -> Void
    private var spill: Spill?
    /// How much XML is held before it is spilled.
    static let spillSize = 1 << 20

    /// Which of KeePass's two XML forms is written.
    enum Form {
        /// Inside a KDBX 4 file: protected values XORed with this inner stream.
        case kdbx(KDBXInnerStream)
        /// A KeePass 2 XML file: protected values in the clear, marked `ProtectInMemory`.
        case xmlFile
    }

    /// The standard strings' keys, which a custom field of the same name must not take.
    private static let reserved: Set<String> = ["Title", "UserName", "Password", "URL", "Notes", "otp"]

    /// A writer that protects values with `stream` (KDBX 4's inner ChaCha20).
    init(stream: KDBXInnerStream) { self.form = .kdbx(stream) }

    /// A writer of `form`.
    init(form: Form) { self.form = form }

    /// Overwrites the XML and the attachments with zeros, in place (the index that shares the
    /// attachments' buffers is emptied first, so that no wipe is made on a copy).
    mutating func wipe() {
        poolIndex.removeAll()
        SecureMemory.wipe(&xml)
        for index in pool.indices { SecureMemory.wipe(&pool[index]) }
    }

    /// The XML written, moved out to the caller (who wipes it); the writer keeps none of it.
    mutating func takeXML() -> [UInt8] {
        let taken = xml
        xml = []
        return taken
    }

    // MARK: The document

    /// The document of `vault`'s entries under `prefix` (all of them for ""), with their history
    /// when the vault keeps it; `now` is the time of the groups.
    ///
    /// With `spill` (the KDBX form, whose Meta names no attachment), the head comes first and the
    /// document is handed over in pieces of about `spillSize` bytes: the whole is never held.
    mutating func write(_ vault: Vault, prefix: String, now: Int64, spill: Spill? = nil) throws(VaultError) {
        let root = Group()
        let names = vault.names(withPrefix: prefix)
        for (index, name) in names.enumerated() {
            // A name is a group's or a title: no place to put it aside, so the export stops here.
            guard Self.isXMLText(name) else {
                throw .notExportable(format: "KDBX", why: "the entry '\(Self.shown(name))': its name holds a character that XML 1.0, "
                                     + "and so KeePass, cannot hold (a control character, U+FFFE or U+FFFF)")
            }
            var parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            parts.removeLast()
            var group = root
            for part in parts { group = group.child(part) }
            group.entries.append(Int32(truncatingIfNeeded: index))
        }
        if let spill {
            self.spill = spill
            xml.reserveCapacity(Self.spillSize + (64 << 10))
            head()
            text("</Meta><Root>")
        }
        unstableTitles = ForeignNaming.unstableTitles(names: names, vault: vault)
        try writeGroup(root, name: "Root", names: names, vault: vault, now: now)
        text("</Root></KeePassFile>\n")
        if let spill {
            try spill(&xml, true)
            SecureMemory.wipe(&xml)
            xml.removeAll(keepingCapacity: true)
            return
        }
        // The head last, so that an XML file's Meta can hold the attachments the entries named.
        var body = xml
        xml = []
        xml.reserveCapacity(body.count + pool.reduce(1024) { $0 + $1.count * 4 / 3 + 64 })
        head()
        if case .xmlFile = form, !pool.isEmpty {
            text("<Binaries>")
            for (index, binary) in pool.enumerated() {
                text("<Binary ID=\"\(index)\" Compressed=\"False\">")
                base64(binary)
                text("</Binary>")
            }
            text("</Binaries>")
        }
        text("</Meta><Root>")
        xml.append(contentsOf: body)
        SecureMemory.wipe(&body)
    }

    /// The XML declaration and Meta up to its attachments.
    private mutating func head() {
        text("<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n<KeePassFile><Meta><Generator>vaultfile</Generator>")
        text("<DatabaseName>vaultfile export</DatabaseName><MemoryProtection><ProtectTitle>False</ProtectTitle>"
             + "<ProtectUserName>False</ProtectUserName><ProtectPassword>True</ProtectPassword><ProtectURL>False</ProtectURL>"
             + "<ProtectNotes>False</ProtectNotes></MemoryProtection><RecycleBinEnabled>False</RecycleBinEnabled>")
    }

    /// One group of the tree the names make, in name order.
    private final class Group {
        var children: [(name: String, group: Group)] = []
        /// Its entries, as indices into the names exported (an entry's title is its name's last component).
        var entries: [Int32] = []
        private var index: [String: Int] = [:]

        func child(_ name: String) -> Group {
            if let position = index[name] { return children[position].group }
            let group = Group()
            index[name] = children.count
            children.append((name, group))
            return group
        }
    }

    private mutating func writeGroup(_ group: Group, name: String, names: [String], vault: Vault, now: Int64) throws(VaultError) {
        let id = uuid()
        text("<Group><UUID>\(id)</UUID><Name>")
        escaped(Array(name.utf8))
        text("</Name><Times>\(times(created: now, modified: now))</Times>")
        for index in group.entries {
            let full = names[Int(index)]
            let leaf = full.lastIndex(of: "/").map { String(full[full.index(after: $0)...]) } ?? full
            guard var entry = vault.entry(full) else { continue }
            var history = vault.keepsHistory ? ((try? vault.history(of: full)) ?? []).reversed().map(\.entry) : []
            try writeEntry(entry, title: leaf, history: history, keptTitle: !unstableTitles.contains(full))
            entries += 1
            if !history.isEmpty { versions += history.count }
            // The copies the vault made for this entry (an attachment the pool shares is wiped there).
            Self.wipe(&entry)
            for index in history.indices { Self.wipe(&history[index]) }
            if let spill, xml.count >= Self.spillSize {
                try spill(&xml, false)
                SecureMemory.wipe(&xml)
                xml.removeAll(keepingCapacity: true)
            }
        }
        for (childName, child) in group.children { try writeGroup(child, name: childName, names: names, vault: vault, now: now) }
        text("</Group>")
    }

    // MARK: Entries

    /// One entry, whose `title` field is its Title only when its name was made of it
    /// (`ForeignNaming.title(of:leaf:)`) and `keptTitle` (not `ForeignNaming.unstableTitles`); or one
    /// earlier version of an entry titled `entryTitle`: the version's own `title` field by the same
    /// rule (an import set it when the title was another; a hand-made one stays a field), else the
    /// entry's Title (an imported `Dup (2)`'s versions are `Dup` too).
    private mutating func writeEntry(_ entry: Entry, title: String, history: [Entry], entryTitle: [UInt8]? = nil, keptTitle: Bool = true,
                                     uuid given: String? = nil) throws(VaultError) {
        let id = given ?? uuid()
        text("<Entry><UUID>\(id)</UUID>")
        var expiry: Int64?
        if let expires = entry.fields["expires"], let text = String(validating: expires, as: UTF8.self) { expiry = Timestamps.parse(text) }
        text("<Times>\(times(created: entry.created, modified: entry.modified, expiry: expiry))</Times>")
        var attachments: [(String, [UInt8])] = []
        if let tags = entry.fields["tags"] {
            if Self.isText(tags) {
                self.text("<Tags>")
                escaped(tags)
                self.text("</Tags>")
            } else {
                attachments.append(("tags", tags))
                if counting { binaryAsAttachment += 1; tagsAsAttachment += 1 }
            }
        }
        // Every key once in the entry: a taken one gets " (2)", " (3)"… (`unique`).
        var keys: Set<String> = [], names: Set<String> = []
        func unique(_ key: String, in taken: inout Set<String>) -> String {
            var candidate = key, number = 1
            while taken.contains(candidate) { number += 1; candidate = "\(key) (\(number))" }
            if number > 1 && counting { renamed += 1 }
            taken.insert(candidate)
            return candidate
        }
        func string(_ key: String, _ value: [UInt8], protected: Bool) {
            guard Self.isText(value) else {
                attachments.append((key == "Password" ? "value.bin" : key, value))
                if counting { binaryAsAttachment += 1 }
                return
            }
            self.string(unique(key, in: &keys), value, protected: protected)
        }
        // A version's `title` field is its Title by the entry's rule (a hand-made one is a field).
        // An unstable numbered entry's Title is its name's last part; its import title no field.
        let importTitle = ForeignNaming.title(of: entry, leaf: title)
        let ownTitle = keptTitle ? importTitle ?? entryTitle : entryTitle
        string("Title", ownTitle ?? Array(title.utf8), protected: false)
        string("UserName", entry.fields["username"] ?? [], protected: false)
        string("Password", entry.value, protected: true)
        string("URL", entry.fields["url"] ?? [], protected: false)
        string("Notes", entry.fields["notes"] ?? [], protected: false)
        if let totp = entry.fields["totp"] { string("otp", Self.otp(totp, title: title), protected: true) }
        // An import kept the labels it had to rename (`Recovery PIN` stored as `Recovery_PIN`): the
        // field `labels`, one `stored<TAB>label` line each; KeePass gets the label back.
        var labels: [String: String] = [:], labelsRead = false
        if let kept = entry.fields[ForeignBuilder.labelsField], let text = String(validating: kept, as: UTF8.self) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "\t", maxSplits: 1)
                guard parts.count == 2, entry.fields[String(parts[0])] != nil else { continue }
                labelsRead = true
                // A label XML cannot hold (a NUL an import carried): the field's own name instead.
                if Self.isXMLText(String(parts[1])) { labels[String(parts[0])] = String(parts[1]) } else if counting { labelsReplaced += 1 }
            }
        }
        var extraURLs = 0
        for (field, value) in entry.fields.sorted(by: { $0.key < $1.key }) {
            if ["username", "url", "notes", "totp", "tags"].contains(field) || field == "title" && (importTitle != nil || ownTitle == entry.fields["title"]) { continue }
            if field == ForeignBuilder.labelsField, labelsRead { continue }
            if field == "expires", expiry != nil { continue }
            if field.hasPrefix(ForeignBuilder.attachmentPrefix) {
                // A kept label is the whole `attachment.NAME`: the file's name is NAME.
                let label = labels[field].map { $0.hasPrefix(ForeignBuilder.attachmentPrefix) ? String($0.dropFirst(ForeignBuilder.attachmentPrefix.count)) : $0 }
                attachments.append((label ?? String(field.dropFirst(ForeignBuilder.attachmentPrefix.count)), value))
                continue
            }
            if field.hasPrefix("url"), let number = Int(field.dropFirst(3)), number >= 2 {
                // The name KeePass gave it (kept in `labels` by the import), else the next KP2A_URL
                // name no other string of the entry took: it stays a URL.
                var key = extraURLs == 0 ? "KP2A_URL" : "KP2A_URL_\(extraURLs)"
                if let kept = labels[field], kept == "KP2A_URL" || kept.hasPrefix("KP2A_URL_"), !keys.contains(kept) {
                    string(kept, value, protected: false)
                    continue
                }
                while keys.contains(key) { extraURLs += 1; key = "KP2A_URL_\(extraURLs)" }
                string(key, value, protected: false)
                extraURLs += 1
                continue
            }
            let key = labels[field] ?? field
            string(Self.reserved.contains(key) ? key + " (field)" : key, value, protected: true)
        }
        for (name, bytes) in attachments {
            text("<Binary><Key>")
            escaped(Array(unique(name, in: &names).utf8))
            text("</Key><Value Ref=\"\(reference(bytes))\"/></Binary>")
        }
        if !history.isEmpty {
            text("<History>")
            counting = false
            defer { counting = true }
            for version in history { try writeEntry(version, title: title, history: [], entryTitle: ownTitle ?? Array(title.utf8), keptTitle: keptTitle, uuid: id) }
            text("</History>")
        }
        text("</Entry>")
    }

    /// `<String><Key>key</Key><Value>…</Value></String>`; a protected value XORed with the stream, in base64.
    private mutating func string(_ key: String, _ value: [UInt8], protected: Bool) {
        text("<String><Key>")
        escaped(Array(key.utf8))
        if protected, case .kdbx(let stream) = form {
            var masked = value
            stream.apply(&masked)
            text("</Key><Value Protected=\"True\">" + Data(masked).base64EncodedString() + "</Value></String>")
            SecureMemory.wipe(&masked)
        } else if protected {
            text("</Key><Value ProtectInMemory=\"True\">")
            escaped(value)
            text("</Value></String>")
        } else {
            text("</Key><Value>")
            escaped(value)
            text("</Value></String>")
        }
    }

    /// The pool index of an attachment's contents, added on first use.
    private mutating func reference(_ bytes: [UInt8]) -> Int {
        if let index = poolIndex[bytes] { return index }
        pool.append(bytes)
        poolIndex[bytes] = pool.count - 1
        return pool.count - 1
    }

    /// KeePassXC's `otp` attribute: an `otpauth://` URI as it is; a bare Base32 secret made one;
    /// text with characters outside Base32 as it is (before, `code 1890!` became the "secret"
    /// `CODE1890!`). Letters alone cannot be told from a secret: an import keeps a source's custom
    /// `totp` out of the way instead (`totp_2`, ForeignBuilder.reservedNames).
    static func otp(_ value: [UInt8], title: String) -> [UInt8] {
        if value.starts(with: Array("otpauth://".utf8)) { return value }
        let secret = value.filter { $0 != 0x20 && $0 != 0x2D }.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }
        guard !secret.isEmpty, secret.allSatisfy({ (0x41...0x5A).contains($0) || (0x32...0x37).contains($0) || $0 == 0x3D }) else { return value }
        let label = title.utf8.map { byte in (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) ? String(UnicodeScalar(byte)) : "_" }.joined()
        return Array("otpauth://totp/\(label)?secret=".utf8) + secret
    }
}
