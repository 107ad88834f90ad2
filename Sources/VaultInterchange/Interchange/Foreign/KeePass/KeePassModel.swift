// MARK: - KeePass 2 database model (the XML of KeePass 2.x and KeePassXC)

/// One entry of a KeePass database as its XML holds it: what `KeePassXMLParser` hands over for
/// each entry, and what a KDBX reader (whose payload is this XML) reuses.
public struct KeePassEntry: Sendable {
    /// The entry's UUID, as the XML spells it (base64 of 16 bytes).
    public var uuid: String = ""
    /// Every `String` element in document order: the standard keys (Title, UserName, Password,
    /// URL, Notes) and the custom ones, values already unprotected.
    public var strings: [KeePassString] = []
    /// Every `Binary` element: an attachment by name, its bytes inline or by reference to the pool.
    public var attachments: [KeePassAttachment] = []
    /// The entry's `Times`.
    public var times = KeePassTimes()
    /// `Tags`, as written (KeePass separates them with `;`, KeePassXC with `,` or `;`).
    public var tags: String = ""
    /// `IconID` other than 0, or a `CustomIconUUID`.
    public var hasIcon = false
    /// `ForegroundColor`, `BackgroundColor`: either not empty.
    public var hasColors = false
    /// `OverrideURL` not empty.
    public var overrideURL: String = ""
    /// An `AutoType` element that is not KeePass's default (disabled, an own sequence, associations).
    public var hasAutoTypeSettings = false
    /// `CustomData` items (plugin and browser-integration settings).
    public var customDataItems = 0
    /// The names of the elements not read: `QualityCheck` set to False, `PreviousParentGroup`,
    /// others; at most `maxOtherElements` names are kept.
    public var otherElements: Set<String> = []
    /// The most names `otherElements` keeps for one entry.
    public static let maxOtherElements = 16
    /// Earlier versions, oldest first, as `History` lists them.
    public var history: [KeePassEntry] = []

    /// An empty value, filled by the parser.
    public init() {}

    /// The value of the string `key` (exact, case-sensitive as KeePass compares), or nil.
    public func string(_ key: String) -> [UInt8]? { strings.first { $0.key == key }?.value }
}

/// A `String` element: a key and its value.
public struct KeePassString: Sendable {
    /// The attribute's name (Title, UserName, Password, URL, Notes, or a custom one).
    public var key: String
    /// The value, as text's UTF-8 bytes.
    public var value: [UInt8]
    /// `ProtectInMemory="True"` (an XML export) or `Protected="True"` (inside a KDBX).
    public var protected: Bool
    /// What the key is to a reader (`KeePassKey`), told once as it is read: the reader then finds
    /// the standard keys and the TOTP attributes without comparing strings.
    let kind: KeePassKey

    /// A string element.
    public init(key: String, value: [UInt8], protected: Bool) {
        (self.key, self.value, self.protected) = (key, value, protected)
        kind = KeePassKey(key)
    }

    /// A string element whose key's kind is already known (the parser's, from the key's bytes).
    init(key: String, kind: KeePassKey, value: [UInt8], protected: Bool) {
        (self.key, self.kind, self.value, self.protected) = (key, kind, value, protected)
    }
}

/// What a `String` element's key is to the reader: one of the five standard keys, a key that may
/// hold a TOTP (`KeePassTOTP` looks only at those), Keepass2Android's further URLs, or another.
/// Told as `==` and `hasPrefix` of `String` tell it (for ASCII, the bytes'; a key with any other
/// byte is told by those comparisons themselves).
enum KeePassKey: UInt8, Sendable {
    case title, userName, password, url, notes
    /// `otp`, `TimeOtp-…`, `TOTP Seed`, `TOTP Settings`: every key `KeePassTOTP` reads.
    case totp
    /// `KP2A_URL`, `KP2A_URL_…`.
    case kp2aURL
    case other

    /// Whether the key is one of the five the item holds as its own parts (not a field).
    var isStandard: Bool { rawValue <= KeePassKey.notes.rawValue }

    /// The kind of `key`.
    init(_ key: String) {
        var key = key
        self = key.withUTF8 { KeePassKey(bytes: $0) } ?? KeePassKey(unicode: key)
    }

    /// The kind of the key spelled by `bytes` when they are ASCII; nil otherwise.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        if let known = Self.known(bytes) { self = known.kind; return }
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        if Self.starts(bytes, with: "KP2A_URL") && (bytes.count == 8 || bytes[8] == UInt8(ascii: "_")) { self = .kp2aURL; return }
        if Self.starts(bytes, with: "TimeOtp-") || Self.equal(bytes, "TOTP Seed") || Self.equal(bytes, "TOTP Settings") { self = .totp; return }
        self = .other
    }

    /// The kind of a key with a byte that is not ASCII, told by `String`'s own comparisons (a key
    /// canonically equivalent to `KP2A_URL`, spelt with the Kelvin sign, is that key to them).
    private init(unicode key: String) {
        switch key {
        case "Title": self = .title
        case "UserName": self = .userName
        case "Password": self = .password
        case "URL": self = .url
        case "Notes": self = .notes
        case "otp", "TimeOtp-Secret", "TimeOtp-Secret-Hex", "TimeOtp-Secret-Base32", "TimeOtp-Secret-Base64", "TimeOtp-Length",
             "TimeOtp-Period", "TimeOtp-Algorithm", "TOTP Seed", "TOTP Settings":
            self = .totp
        default:
            self = key == "KP2A_URL" || key.hasPrefix("KP2A_URL_") ? .kp2aURL : key.hasPrefix("TimeOtp-") ? .totp : .other
        }
    }

    /// The standard keys and the commonest TOTP key, with the string each is (a literal: no
    /// string made per key read).
    static func known(_ bytes: UnsafeBufferPointer<UInt8>) -> (key: String, kind: KeePassKey)? {
        switch bytes.count {
        case 3:
            if equal(bytes, "URL") { return ("URL", .url) }
            if equal(bytes, "otp") { return ("otp", .totp) }
        case 5:
            if equal(bytes, "Title") { return ("Title", .title) }
            if equal(bytes, "Notes") { return ("Notes", .notes) }
        case 8:
            if equal(bytes, "UserName") { return ("UserName", .userName) }
            if equal(bytes, "Password") { return ("Password", .password) }
        default:
            break
        }
        return nil
    }

    private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && starts(bytes, with: literal)
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        for index in 0..<count where bytes[index] != literal.utf8Start[index] { return false }
        return true
    }
}

/// A `Binary` element of an entry: the attachment's name and where its bytes are.
public struct KeePassAttachment: Sendable {
    /// The file name.
    public var name: String
    /// `Ref="ID"`: an index into the database's binary pool (Meta/Binaries or a KDBX 4 inner header).
    public var reference: Int?
    /// The bytes given inline (older writers), when there is no reference.
    public var bytes: [UInt8]

    /// An attachment.
    public init(name: String, reference: Int?, bytes: [UInt8]) { (self.name, self.reference, self.bytes) = (name, reference, bytes) }
}

/// An entry's or a group's `Times`, in milliseconds since 1970.
public struct KeePassTimes: Sendable {
    /// `CreationTime`.
    public var created: Int64?
    /// `LastModificationTime`.
    public var modified: Int64?
    /// `ExpiryTime` (in force only when `expires`).
    public var expiry: Int64?
    /// `Expires` is True: the expiry time is in force.
    public var expires = false
    /// `LastAccessTime`, `UsageCount` above 0 or `LocationChanged` present.
    public var hasUsage = false

    /// An empty value, filled by the parser.
    public init() {}
}

/// One group as the parser passes through it.
public struct KeePassGroup: Sendable {
    /// The group's UUID as written (base64).
    public var uuid: String = ""
    /// The group's name: a folder of the entries inside it.
    public var name: String = ""
    /// The group's notes, which no entry carries.
    public var notes: String = ""
    /// The database's recycle bin: the group whose UUID is Meta/RecycleBinUUID, or, when the
    /// database names none and RecycleBinEnabled is not False, a group named "Recycle Bin" right
    /// under the root group. Set by the parser before the group's first entry or group is handed on.
    public var isRecycleBin = false

    /// An empty value, filled by the parser.
    public init() {}
}

/// What the database holds besides its groups and entries.
public struct KeePassMeta: Sendable {
    /// `Generator` (KeePass, KeePassXC…).
    public var generator: String = ""
    /// `DatabaseName`.
    public var databaseName: String = ""
    /// `DatabaseDescription`.
    public var databaseDescription: String = ""
    /// `RecycleBinUUID` when `RecycleBinEnabled` is not False.
    public var recycleBin: String?
    /// `RecycleBinEnabled` is not False (KeePass's default: true).
    public var recycleBinEnabled = true
    /// Meta/Binaries, by ID, decompressed (KDBX 3.1 and XML exports).
    public var binaries: [Int: [UInt8]] = [:]
    /// Custom icons and Meta/CustomData items, which no entry carries.
    public var customIcons = 0
    public var customDataItems = 0
    /// `DeletedObjects` records (UUIDs and times of deleted items, for synchronisation).
    public var deletedObjects = 0

    /// An empty value, filled by the parser.
    public init() {}
}
