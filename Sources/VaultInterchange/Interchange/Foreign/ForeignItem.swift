import SecureMemory
import VaultModel

// MARK: - The shared model of other password managers' exports (docs/INTERCHANGE.md)

/// One item as another password manager holds it, before it becomes an entry.
public struct ForeignItem: Sendable {
    /// Folder path from the source, outermost first, the root group already dropped; may be empty.
    public var folders: [String]
    /// The item's title as the source has it (may be empty: the builder then uses the site, the username, or "untitled").
    public var title: String
    /// The secret (password). Empty when the item has none (a note).
    public var value: [UInt8]
    /// The login name, when the source has one.
    public var username: String?
    /// Every URL in source order; the first becomes field `url`, the next `url2`, `url3`…
    public var urls: [String]
    /// The source's own names of further URLs (position in `urls` → name) where it names them
    /// otherwise than exports do (KeePass's `KP2A_URL_1` as the only further URL): kept in `labels`.
    public var urlLabels: [Int: String] = [:]
    /// The field name (before numbering) of custom fields, by their position in `fields`, where
    /// the reader stores one under another name than its label: pass's second `login:` line is a
    /// second username (`username_2`), its label `login` kept in `labels` (recheck58 N5).
    public var fieldNames: [Int: String] = [:]
    /// Free text the source keeps with the item.
    public var notes: String?
    /// A TOTP as the source holds it: an otpauth:// URI, a bare Base32 secret, or steam://SECRET.
    public var totp: String?
    /// Custom fields in source order, labels as the source has them (any Unicode); `protected` when the source marked them so.
    public var fields: [ForeignField]
    /// Files attached to the item.
    public var attachments: [ForeignAttachment]
    /// Milliseconds since the Unix epoch, when the source has them.
    public var created: Int64?
    /// Milliseconds since the Unix epoch, when the source has them.
    public var modified: Int64?
    /// Earlier versions, oldest first (KeePass entry history, 1Password/Bitwarden password history).
    public var history: [ForeignVersion]
    /// Source-specific facts with no vaultfile home that the reader chose to keep as fields
    /// (e.g. "tags", "favorite", "archived"): label → text; the builder stores them as fields.
    public var extras: [(label: String, value: String)]
    /// Whether the source holds no titles at all (Firefox's CSV): an item named after its site is
    /// then not listed as renamed, as every item of it is so named. An item of a source with
    /// titles whose title is empty (a Chrome row without a name) is listed.
    public var sourceHasNoTitles = false
    /// The reader's warnings that name this item (`Warned`): the builder names it there by its
    /// entry name, after numbering, not by its title in the source (cold62 L5: `Work/db01` was
    /// named for the item that became `Work/db01 (2)`; the vault's `Work/db01` is another account).
    public var warned: Warned = []

    /// The reader's warnings that name items.
    public struct Warned: OptionSet, Sendable {
        public let rawValue: UInt8
        /// Creates the set of `rawValue`'s bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// KeePass's unprotected custom strings (`ImportWarning.unprotectedStringsNotKept`).
        public static let unprotectedStrings = Warned(rawValue: 1)
        /// KeePass attachments without their data (`ImportWarning.attachmentDataMissing`).
        public static let attachmentDataMissing = Warned(rawValue: 2)
        /// 1Password dates kept as written (`ImportWarning.datesKeptAsWritten`).
        public static let datesKeptAsWritten = Warned(rawValue: 4)
        /// 1Password times left out (`ImportWarning.timesReplaced`).
        public static let timesReplaced = Warned(rawValue: 8)
        /// 1Password references to items the export does not hold (`ImportWarning.referencesUnresolved`).
        public static let referencesUnresolved = Warned(rawValue: 16)
        /// Each kind, in the order `WarnedNames` keeps them.
        static let kinds: [Warned] = [.unprotectedStrings, .attachmentDataMissing, .datesKeptAsWritten, .timesReplaced, .referencesUnresolved]
    }

    /// An item with a title and a value, everything else empty.
    public init(folders: [String] = [], title: String = "", value: [UInt8] = []) {
        self.folders = folders
        self.title = title
        self.value = value
        self.username = nil
        self.urls = []
        self.notes = nil
        self.totp = nil
        self.fields = []
        self.attachments = []
        self.created = nil
        self.modified = nil
        self.history = []
        self.extras = []
    }
}

extension ForeignItem {
    /// Overwrites the secrets this item holds (value, fields, attachments, history) with zeros and
    /// empties them: what the streaming build (`ForeignBuilder.build(streaming:)`) does with each
    /// item once its record is written. A buffer another item shares (1pux, KeePass) is not for
    /// this: `ForeignImport.wipe()` wipes those once.
    mutating func wipeSecrets() {
        SecureMemory.wipe(&value)
        for index in fields.indices { SecureMemory.wipe(&fields[index].value) }
        for index in attachments.indices { SecureMemory.wipe(&attachments[index].bytes) }
        for index in history.indices {
            SecureMemory.wipe(&history[index].value)
            for field in history[index].fields.indices { SecureMemory.wipe(&history[index].fields[field].value) }
            for attachment in history[index].attachments.indices { SecureMemory.wipe(&history[index].attachments[attachment].bytes) }
        }
    }
}

/// Where a reader hands each item as it reads it, when it is not to keep them in
/// `ForeignImport.items` (`ForeignBuilder.build(streaming:)`). A reader that cannot give an item
/// as it will stay (a folder named before the folders are read) declines the stream; so does the
/// builder (a repeated name: it then reads the items again for a plan of their numbers, and once
/// more to build them, `ForeignBuilder.build(streaming:)`). A declined sink takes nothing more,
/// and the import is read again (a repeated name) or the plain way (every item first).
final class ForeignItemSink {
    private let body: (inout ForeignItem) -> Bool
    /// Whether the stream was declined.
    private(set) var declined = false

    /// A sink handing each item to `body`, which returns false to decline the stream.
    init(_ body: @escaping (inout ForeignItem) -> Bool) {
        self.body = body
    }

    /// Hands `item` to the body, unless the stream was declined (the item's secrets are then wiped here).
    func take(_ item: inout ForeignItem) {
        guard !declined else {
            item.wipeSecrets()
            return
        }
        if !body(&item) { declined = true }
    }

    /// Declines the stream: nothing more is taken, and the build gives nothing.
    func decline() {
        declined = true
    }
}

/// A custom field of an item: its label as the source has it, its value, and whether the source hid it.
public struct ForeignField: Sendable {
    /// The label as the source has it (any Unicode).
    public var label: String
    /// The field's value.
    public var value: [UInt8]
    /// Whether the source marked it protected (hidden, concealed).
    public var protected: Bool
    /// The heading the source files it under (a 1pux section's title, an Enpass section heading),
    /// when it has one. It orders the fields of one label for their numbers
    /// (`ForeignField.numberedBefore`), and is kept in the label `labels` keeps of fields of one
    /// name under different headings (`ForeignBuilder.sectionedLabels`); otherwise not stored.
    public var section: String?
    /// Whether `section` is only 1Password's name (id) of a section without a title: it orders
    /// fields, but is no heading a person wrote, so it is never shown in `labels`.
    public var sectionUntitled = false
    /// For a field that names another item of the import (a 1pux `reference`): that item's index
    /// in the import's items, whose entry name the build writes as the value (`ForeignBuilder`);
    /// `unresolved` while the reader has not yet found it. Nil for any other field.
    public var reference: Int? = nil
    /// The `reference` of a field whose item is not found yet.
    public static let unresolved = -1

    /// Creates a field.
    public init(label: String, value: [UInt8], protected: Bool = false, section: String? = nil) {
        self.label = label
        self.value = value
        self.protected = protected
        self.section = section
    }
}

/// A file attached to an item.
public struct ForeignAttachment: Sendable {
    /// The file's name as the source has it.
    public var name: String
    /// The file's bytes.
    public var bytes: [UInt8]

    /// Creates an attachment.
    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

/// An earlier version of an item.
public struct ForeignVersion: Sendable {
    /// The secret the item had.
    public var value: [UInt8]
    /// The login name it had, when the source says.
    public var username: String?
    /// The notes it had, when the source says.
    public var notes: String?
    /// When it was modified (or replaced), milliseconds since the Unix epoch, when the source says.
    public var modified: Int64?
    /// What else the version held, for a source whose versions are whole items (KeePass's entry
    /// history): the builder stores them as the item's own are (`ForeignItem`). The title only
    /// when it was not the item's title now.
    public var title: String?
    public var urls: [String] = []
    public var urlLabels: [Int: String] = [:]
    public var totp: String?
    public var fields: [ForeignField] = []
    public var extras: [(label: String, value: String)] = []
    public var attachments: [ForeignAttachment] = []
    /// Whether the version is the whole item it was (KeePass's entry history: its title, URLs,
    /// fields… as above). Otherwise the source keeps only an earlier password (Bitwarden's,
    /// 1Password's and Enpass's password history), and the builder makes the version the item
    /// as it is now with that value (and the `username` and `notes` the version names), as those
    /// managers show it: `history` then lists the password as the one change, and `restore`
    /// brings the password back without taking the other fields away.
    public var wholeItem = false
    /// When the version was replaced, when the source says it of the version itself (Bitwarden's
    /// `lastUsedDate`); otherwise when the next version (or the item as it is now) was modified.
    public var replaced: Int64?

    /// Creates a version.
    public init(value: [UInt8], username: String? = nil, notes: String? = nil, modified: Int64? = nil) {
        self.value = value
        self.username = username
        self.notes = notes
        self.modified = modified
    }
}

/// Everything one reader got out of one source, and everything it saw but could not keep.
public struct ForeignImport: Sendable {
    /// The format's `--format` name ("keepass-xml", "pass"…), used in messages.
    public var format: String
    /// The items in source order.
    public var items: [ForeignItem]
    /// What the source carries that no item keeps, by a human name ("Firefox's guid column",
    /// "1Password's archived flag" …) → how many items had it. The builder prints one warning each,
    /// with its reason.
    public var notKept: [String: Int]
    /// Why each loss of `notKept` is left out, where it is not `.noPlace`: named where the loss is
    /// counted (`notKeep(_:count:reason:)`), never guessed from its text.
    public var notKeptReasons: [String: NotKeptReason] = [:]
    /// Warnings about the source itself (a KDBX 3.1 header without its hash), printed with the builder's.
    public var warnings: [ImportWarning] = []

    /// An import of `format` with no items yet.
    public init(format: String) {
        self.format = format
        self.items = []
        self.notKept = [:]
    }

    /// Adds `count` (one unless said) to the count of something not kept, left out for `reason`.
    public mutating func notKeep(_ what: String, count: Int = 1, reason: NotKeptReason = .noPlace) {
        guard count > 0 else { return }
        notKept[what, default: 0] += count
        if reason != .noPlace { notKeptReasons[what] = reason }
    }

    /// Why the loss `what` of `notKept` is left out.
    public func reason(notKept what: String) -> NotKeptReason { notKeptReasons[what] ?? .noPlace }

    /// Keeps `item` in `items`, or hands it to `sink` when there is one (in place: the sink wipes
    /// the reader's own copy, not a copy of it).
    mutating func add(_ item: inout ForeignItem, to sink: ForeignItemSink?) {
        guard let sink else {
            items.append(item)
            return
        }
        sink.take(&item)
    }

    /// Overwrites every secret the items hold (values, fields, attachments, history) with zeros and
    /// empties them: the caller's copy once the entries are built.
    public mutating func wipe() {
        // A file several items name shares one buffer (1pux, KeePass's pool): each buffer is taken
        // out of its items first, then wiped once in place (wiping a shared array would copy it).
        var files: [[UInt8]] = []
        var seen: Set<UnsafeRawPointer> = []
        for index in items.indices {
            SecureMemory.wipe(&items[index].value)
            for field in items[index].fields.indices { SecureMemory.wipe(&items[index].fields[field].value) }
            for attachment in items[index].attachments.indices {
                let bytes = items[index].attachments[attachment].bytes
                items[index].attachments[attachment].bytes = []
                if let base = bytes.withUnsafeBytes({ $0.baseAddress }), seen.insert(base).inserted { files.append(bytes) }
            }
            for version in items[index].history.indices {
                SecureMemory.wipe(&items[index].history[version].value)
                for field in items[index].history[version].fields.indices { SecureMemory.wipe(&items[index].history[version].fields[field].value) }
                for attachment in items[index].history[version].attachments.indices {
                    let bytes = items[index].history[version].attachments[attachment].bytes
                    items[index].history[version].attachments[attachment].bytes = []
                    if let base = bytes.withUnsafeBytes({ $0.baseAddress }), seen.insert(base).inserted { files.append(bytes) }
                }
            }
        }
        items = []
        for index in files.indices { SecureMemory.wipe(&files[index]) }
    }

    /// Turns the items into entries (the ONE builder: names, fields, TOTP, times, history,
    /// renamings and warnings), checked as every import is (ForeignBuilder.swift).
    public func entries(now: Int64, options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        try ForeignBuilder.build(self, now: now, options: options)
    }
}

/// How the builder makes entries of foreign items.
public struct ForeignBuildOptions: Sendable {
    /// Whether the target vault keeps history: then each item's `history` becomes its earlier
    /// versions; otherwise they are counted in a loss warning.
    public var keepsHistory: Bool
    /// Folders every entry is placed under (`import --prefix`), outermost first; may be empty.
    public var prefix: [String]

    /// The most bytes of a `--prefix` (its folders joined with '/'): room is left after it for a
    /// '/', a title of `ForeignNaming.minShortenedTitle` bytes and the longest number (` (n)`), so
    /// that a long name is shortened rather than refused as the file's fault (cold62 L1).
    public static let maxPrefixBytes = ForeignNaming.maxBaseLength - ForeignNaming.maxNumberBytes - 1 - ForeignNaming.minShortenedTitle

    /// Creates options.
    public init(keepsHistory: Bool = false, prefix: [String] = []) {
        self.keepsHistory = keepsHistory
        self.prefix = prefix
    }
}
