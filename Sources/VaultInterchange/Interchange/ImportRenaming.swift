import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What an import brings in

/// An imported name that is not what the file held: `import` prints each one (stderr, and
/// `import --json`), so that no entry is renamed silently.
public struct ImportRenaming: Sendable {
    /// Why a name changed.
    public enum Reason: Sendable {
        /// A character a name cannot hold was replaced ('/' in a title became '-', a control
        /// character a space), spaces were trimmed, an empty folder dropped, '.' or '..' escaped.
        case cleaned
        /// The name was put in Unicode NFC, as every new name is (docs/FORMAT.md §7).
        case normalized
        /// An earlier item of the same import had the name: " (2)", " (3)"… was added.
        case numbered
        /// Other items of the same import have the name: " (2)", " (3)"… was added in the order of
        /// the items' usernames, then URLs, then values, never of the file (other password managers).
        case numberedByAccount
        /// Other items of the same import have the name, one of them exactly as its title (the
        /// file's name for pass and passage), while this item's title had to be cleaned or its
        /// name made: the exact one keeps the name, whatever its folders or the prefix needed, and
        /// this one is numbered after it (att58 F1, att60 F1: a look-alike `db ` never takes `db`),
        /// in the order of the cleaned items' usernames, then URLs.
        case yieldedToExactTitle
        /// Other items of the same import have the name, their titles as exact as this one's, and
        /// one of them in folders exactly as its source named them while this item's folders had
        /// to be cleaned to the same text (`Email/Web` to `Email-Web`): two different source
        /// folders met on one name, and the exact one keeps it (att62 F2).
        case yieldedToExactFolders
        /// The title could not be the name as it is (a URL, a '/', spaces at an end…): the
        /// original title is kept in the field `title` (imports of other password managers).
        case titleKept
        /// The name, or the name and its number (` (n)`), passed the name limit
        /// (`VaultLimits.maxNameLength`): the title, then if need be its folders, were cut at a
        /// character boundary as far as the limit needs, the title kept in the field `title` (att60 F6, att62 F8).
        case shortened
        /// With `shortened`: the folders were cut too (at a character boundary, a part at their end
        /// dropped when the cut left it empty, `.` or `..`), so the item stands in the folder the cut
        /// left, not its own (att62 F3); the source's folders are kept in the field `folder` (cold62 L1).
        case foldersCut
        /// `import --skip-existing`: the vault's entry of the name holds another account, so this
        /// new one was numbered after the vault's entries of its title (cold60 M2 d).
        case vaultHoldsAnotherAccount

        /// The reason in `import --json` (docs/JSON.md).
        public var name: String {
            switch self {
            case .cleaned: return "cleaned"
            case .normalized: return "normalized"
            case .numbered, .numberedByAccount, .yieldedToExactTitle, .yieldedToExactFolders, .vaultHoldsAnotherAccount: return "numbered"
            case .titleKept: return "title_kept"
            case .shortened: return "shortened"
            case .foldersCut: return "folders_cut"
            }
        }

        /// The reason in `import --json`'s `renamed[].reasons`: `name`, then for a numbering with a
        /// cause of its own that cause (`yields_to_exact_title`, `yields_to_exact_folders`, `vault_holds_another_account`),
        /// added after `numbered` so that a script that looks for `numbered` finds it (cold60 L6).
        public var jsonNames: [String] {
            switch self {
            case .yieldedToExactTitle: return [name, "yields_to_exact_title"]
            case .yieldedToExactFolders: return [name, "yields_to_exact_folders"]
            case .vaultHoldsAnotherAccount: return [name, "vault_holds_another_account"]
            default: return [name]
            }
        }

        /// The reason in a message (a literal: appended to a line without a string made).
        public var explanation: StaticString {
            switch self {
            case .cleaned: return "characters a name cannot hold were replaced"
            case .normalized: return "put in Unicode NFC"
            case .numbered: return "an earlier item has that name"
            case .numberedByAccount: return "other items have that name: numbered in the order of their usernames, then URLs, then values"
            case .yieldedToExactTitle: return "another item's title is exactly that name: it keeps the name"
            case .yieldedToExactFolders: return "another item's folders are exactly that name's: it keeps the name; this item's folders were cleaned to the same text"
            case .titleKept: return "the original title is kept in the field 'title'"
            case .shortened: return "too long for a name: cut short"
            case .foldersCut: return "its folders were cut short too: it stands in the folder the cut left, not its own; its folders are kept in the field 'folder'"
            case .vaultHoldsAnotherAccount: return "the vault's entries of that title hold other accounts: numbered after them"
            }
        }
    }

    /// The host of `url` as a renaming's `account` names it when the URL has no scheme, and as
    /// `--skip-existing` tells accounts apart (`ForeignNaming.accountHost(of:)`): one spelling in both (cold60 L9).
    public static func accountHost(of url: String?) -> String? { ForeignNaming.accountHost(of: url) }

    /// `TITLE (n)`: `title` (an imported name without its number) numbered `number`, cut at a
    /// character boundary only when the name and its number pass the name limit, never in the
    /// `prefix` (`ForeignNaming.numberedFitting`): what `--skip-existing` numbers a new account
    /// by, as the import numbers its items.
    public static func numbered(_ title: String, _ number: Int, prefix: [String]) -> String {
        ForeignNaming.numberedFitting(title, UInt32(clamping: number), prefixBytes: ForeignNaming.prefixBytes(prefix)).name
    }

    /// The key that groups an imported name without its number (`title`) with the names the
    /// import numbered after it: itself, or for a name so long that its numbered names were cut
    /// to fit (`numbered`), its first bytes that every such cut keeps (the limit less the longest
    /// number, at a character boundary). `--skip-existing` matches accounts within one key.
    public static func numberingKey(of title: String) -> String {
        let room = VaultLimits.maxNameLength - ForeignNaming.maxNumberBytes
        return title.utf8.count <= room ? title : ForeignNaming.cut(title, to: room)
    }

    /// The title an import made `name` of (an item of this import): the entry's `title` field
    /// when it is the title the name's last part was made of (`ForeignNaming.title(of:leaf:)`: a
    /// cleaned, numbered or cut title kept whole), else the name's last part, which is then the
    /// title as it was.
    public static func importedTitle(of entry: Entry, name: String) -> [UInt8] {
        keptTitle(of: entry, name: name) ?? Array(ForeignNaming.leaf(of: name).utf8)
    }

    /// How the vault's entry `name` is of the title `title` (an item's `importedTitle`).
    public enum TitleMatch: Sendable {
        /// Its kept `title` field, or its name's last part without one, is `title`.
        case exact
        /// It has no kept `title` field (made by hand, or by an earlier release) and its name's
        /// last part is `title` cleaned, numbered or cut as an import does: perhaps that title.
        case loose
    }

    /// The title the vault's entry `name` keeps (`entry`'s `title` field when it is the title
    /// its name's last part was made of: `ForeignNaming.title(of:leaf:)`), nil when it keeps none.
    public static func keptTitle(of entry: Entry, name: String) -> [UInt8]? {
        ForeignNaming.title(of: entry, leaf: String(ForeignNaming.leaf(of: name)))
    }

    /// Whether the vault's entry `name` (the title it keeps, `kept`: `keptTitle`) is of the title
    /// `title`: nil when it is of another title. `--skip-existing` takes an item for an entry only
    /// of its own title, exact ones first: never one of another title that shares the first
    /// bytes a cut name keeps (att63 F1), nor another file's entry that a look-alike's cleaned
    /// name equals (att63 F3).
    public static func titleMatch(_ title: [UInt8], kept: [UInt8]?, name: String) -> TitleMatch? {
        if let kept { return kept == title ? .exact : nil }
        let leaf = ForeignNaming.leaf(of: name)
        if leaf.utf8.elementsEqual(title) { return .exact }
        guard let text = String(validating: title, as: UTF8.self), ForeignNaming.explains(text, leaf: String(leaf)) else { return nil }
        return .loose
    }

    /// The name as the file held it (folders and title joined with '/').
    public var original: String {
        get { switch storage { case .given(let given): given.original; case .packed(let packed, let index): packed.original(at: Int(index)) } }
        set { storage = .given(Given(original: newValue, name: name, reasons: reasons, account: account, madeOf: madeOf)) }
    }
    /// The name the entry is stored under.
    public var name: String {
        get { switch storage { case .given(let given): given.name; case .packed(let packed, let index): packed.name(at: Int(index)) } }
        set { storage = .given(Given(original: original, name: newValue, reasons: reasons, account: account, madeOf: madeOf)) }
    }
    /// Why, in the order the changes were made.
    public var reasons: [Reason] {
        get { switch storage { case .given(let given): given.reasons; case .packed(let packed, let index): packed.reasons(at: Int(index)) } }
        set { storage = .given(Given(original: original, name: name, reasons: newValue, account: account, madeOf: madeOf)) }
    }
    /// Which account the item is, for a name numbered among others (`user zed, example.com`:
    /// its username and its first URL's host, never a secret); nil otherwise.
    public var account: String? {
        get { switch storage { case .given(let given): given.account; case .packed(let packed, let index): packed.account(at: Int(index)) } }
        set { storage = .given(Given(original: original, name: name, reasons: reasons, account: newValue, madeOf: madeOf)) }
    }
    /// What the name was made of when the item had no title (`its site auth.example.com`); nil
    /// when it had one.
    public var madeOf: String? {
        get { switch storage { case .given(let given): given.madeOf; case .packed(let packed, let index): packed.madeOf(at: Int(index)) } }
        set { storage = .given(Given(original: original, name: name, reasons: reasons, account: account, madeOf: newValue)) }
    }

    /// Creates a renaming.
    public init(original: String, name: String, reasons: [Reason], account: String? = nil, madeOf: String? = nil) {
        storage = .given(Given(original: original, name: name, reasons: reasons, account: account, madeOf: madeOf))
    }

    /// Appends the UTF-8 of `original` to `line` (from a row of facts without making the string).
    public func appendOriginal(to line: inout ByteLine) {
        switch storage {
        case .given(let given): line.append(contentsOf: given.original)
        case .packed(let packed, let index): packed.appendOriginal(at: Int(index), to: &line)
        }
    }

    /// Appends the UTF-8 of `name` to `line`.
    public func appendName(to line: inout ByteLine) {
        switch storage {
        case .given(let given): line.append(contentsOf: given.name)
        case .packed(let packed, let index): packed.appendName(at: Int(index), to: &line)
        }
    }

    /// Appends the UTF-8 of `account` to `line`; false, with nothing appended, when it is nil.
    public func appendAccount(to line: inout ByteLine) -> Bool {
        switch storage {
        case .given(let given):
            guard let account = given.account else { return false }
            line.append(contentsOf: account)
            return true
        case .packed(let packed, let index): return packed.appendAccount(at: Int(index), to: &line)
        }
    }

    /// `appendOriginal(to:)` onto an array.
    public func appendOriginal(to bytes: inout [UInt8]) { Self.appending(to: &bytes) { appendOriginal(to: &$0) } }

    /// `appendName(to:)` onto an array.
    public func appendName(to bytes: inout [UInt8]) { Self.appending(to: &bytes) { appendName(to: &$0) } }

    /// `appendAccount(to:)` onto an array.
    public func appendAccount(to bytes: inout [UInt8]) -> Bool {
        var said = false
        Self.appending(to: &bytes) { said = appendAccount(to: &$0) }
        return said
    }

    private static func appending(to bytes: inout [UInt8], _ body: (inout ByteLine) -> Void) {
        var line = ByteLine(capacity: 64)
        body(&line)
        bytes.append(contentsOf: line.bytes)
    }

    /// Calls `body` with each of `reasons` in order (from a row of facts without an array of them).
    public func forEachReason(_ body: (Reason) -> Void) {
        switch storage {
        case .given(let given): given.reasons.forEach(body)
        case .packed(let packed, let index): packed.forEachReason(at: Int(index), body)
        }
    }

    /// The renaming kept as the `index`th row of `packed` (its facts, its text made when asked).
    init(_ packed: PackedRenamings, at index: Int) {
        storage = .packed(packed, Int32(truncatingIfNeeded: index))
    }

    /// The facts: given as text, or a row of a streamed import's `PackedRenamings` (16 bytes a
    /// renaming where the text took about 300: most of an export whose titles repeat is renamed).
    private var storage: Storage

    private enum Storage: Sendable {
        case given(Given)
        case packed(PackedRenamings, Int32)
    }

    /// A renaming given as text.
    private final class Given: Sendable {
        let original: String
        let name: String
        let reasons: [Reason]
        let account: String?
        let madeOf: String?

        init(original: String, name: String, reasons: [Reason], account: String?, madeOf: String?) {
            self.original = original
            self.name = name
            self.reasons = reasons
            self.account = account
            self.madeOf = madeOf
        }
    }
}
