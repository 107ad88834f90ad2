#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - Renamings kept as facts

/// The renamings of a streamed foreign import (`ForeignBuilder.build(streaming:)`), kept as each
/// renamed item's few facts — its name as the file held it, its name before numbering and its
/// number, its username, its first URL's site, and why — in one byte arena, each text made only
/// when it is asked for (`ImportRenaming`'s properties, as `import` prints it). A row whose name
/// as held, name before numbering or site is the row before's (a site's accounts come together)
/// points at that row's bytes: most of a row is then its username.
///
/// An export whose titles repeat has most of its items renamed (`TITLE (n)`), and issue 44 lists
/// every one: kept as text, each renaming took about 300 bytes (four strings and an array); kept
/// so, 40 bytes of row, the bytes it adds and the 16 of its `ImportRenaming`.
/// Immutable once made; the arena (titles, usernames, sites: no secret, but the file's) is zeroed
/// when freed. `PackedRenamingsTests` ties each text to `ForeignNaming.renaming(of:_:prefix:)`'s.
final class PackedRenamings: @unchecked Sendable {
    /// Where a text is in the arena.
    struct Span {
        var start: UInt32
        var count: UInt32
    }

    /// One renaming's facts.
    struct Row {
        var original: Span
        /// The name before numbering.
        var base: Span
        var user: Span
        var site: Span
        /// `TITLE (n)`'s n; 0 when the name is not numbered.
        var number: UInt32
        /// The reasons in order, three bits each (`code(of:)`), the first in the lowest bits.
        var reasons: UInt16
        var flags: UInt8
    }

    /// `Row.flags`: the item has a username (not empty), its first URL a site, the renaming says
    /// which account it is (a numbered name), and the name was made of the site or username.
    static let hasUser: UInt8 = 1, hasSite: UInt8 = 2, saysAccount: UInt8 = 4, derived: UInt8 = 8
    /// `Row.flags`: the site span holds no site but the host of a URL written without a scheme,
    /// which only the account names (`ForeignNaming.accountHost(of:)`, cold60 L9).
    static let hostOnly: UInt8 = 16
    /// The most reasons a row holds (five slots of three bits).
    static let maxReasons = 5

    /// The arena, written once at `init` (never after: the class is shared, hence `@unchecked`).
    private let bytes: UnsafeMutableRawBufferPointer
    private let rows: [Row]

    /// The renamings of `rows` over `arena`, which is copied and wiped.
    fileprivate init(arena: inout [UInt8], rows: [Row]) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(arena.count, 1), alignment: 1)
        arena.withUnsafeBytes { if let source = $0.baseAddress { copy.baseAddress!.copyMemory(from: source, byteCount: $0.count) } }
        bytes = copy
        SecureMemory.wipe(&arena)
        arena = []
        self.rows = rows
    }

    deinit {
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        bytes.deallocate()
    }

    // MARK: The texts

    func original(at index: Int) -> String { text(rows[index].original) }

    func name(at index: Int) -> String {
        let row = rows[index]
        return row.number == 0 ? text(row.base) : "\(text(row.base)) (\(row.number))"
    }

    func reasons(at index: Int) -> [ImportRenaming.Reason] {
        var reasons: [ImportRenaming.Reason] = []
        forEachReason(at: index) { reasons.append($0) }
        return reasons
    }

    func forEachReason(at index: Int, _ body: (ImportRenaming.Reason) -> Void) {
        var packed = rows[index].reasons
        while packed != 0 {
            body(Self.reason(of: UInt8(packed & 0x7)))
            packed >>= 3
        }
    }

    func account(at index: Int) -> String? {
        let row = rows[index]
        guard row.flags & Self.saysAccount != 0 else { return nil }
        return ForeignNaming.account(user: user(of: row), site: site(of: row), host: row.flags & Self.hostOnly != 0 ? text(row.site) : nil)
    }

    func madeOf(at index: Int) -> String? {
        let row = rows[index]
        guard row.flags & Self.derived != 0 else { return nil }
        return ForeignNaming.madeOf(user: user(of: row), site: site(of: row))
    }

    // MARK: The texts' bytes, appended without making them

    func appendOriginal(at index: Int, to out: inout ByteLine) { append(rows[index].original, to: &out) }

    func appendName(at index: Int, to out: inout ByteLine) {
        let row = rows[index]
        append(row.base, to: &out)
        guard row.number != 0 else { return }
        out.append(" (")
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0, number = row.number
        withUnsafeMutableBytes(of: &digits) { digits in
            repeat {
                digits[9 - count] = UInt8(ascii: "0") + UInt8(number % 10)
                number /= 10
                count += 1
            } while number > 0
            out.append(UnsafeRawBufferPointer(rebasing: digits[(10 - count)...]))
        }
        out.append(UInt8(ascii: ")"))
    }

    /// `account(at:)`'s bytes (`ForeignNaming.account(user:site:)`); false when it is nil.
    func appendAccount(at index: Int, to out: inout ByteLine) -> Bool {
        let row = rows[index]
        guard row.flags & Self.saysAccount != 0 else { return false }
        let start = out.count
        if row.flags & Self.hasUser != 0 {
            out.append("user ")
            append(row.user, to: &out)
        }
        if row.flags & Self.hasSite != 0 {
            if out.count > start { out.append(", ") }
            let site = UnsafeRawBufferPointer(start: bytes.baseAddress! + Int(row.site.start), count: Int(row.site.count))
            // An ASCII site's host by its bytes, up to its first '/'.
            var high: UInt8 = 0
            for byte in site { high |= byte }
            if high < 0x80 {
                var host = site.count
                if let base = site.baseAddress, let slash = memchr(base, Int32(UInt8(ascii: "/")), site.count) {
                    host = base.distance(to: UnsafeRawPointer(slash))
                }
                out.append(UnsafeRawBufferPointer(rebasing: site[..<host]))
            } else {
                out.append(contentsOf: ForeignNaming.host(ofSite: text(row.site)))
            }
        } else if row.flags & Self.hostOnly != 0 {
            if out.count > start { out.append(", ") }
            append(row.site, to: &out)
        }
        if out.count == start { out.append("no username or URL") }
        return true
    }

    private func append(_ span: Span, to out: inout ByteLine) {
        out.append(UnsafeRawBufferPointer(start: bytes.baseAddress! + Int(span.start), count: Int(span.count)))
    }

    private func user(of row: Row) -> String? { row.flags & Self.hasUser != 0 ? text(row.user) : nil }
    private func site(of row: Row) -> String? { row.flags & Self.hasSite != 0 ? text(row.site) : nil }

    private func text(_ span: Span) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[Int(span.start)..<Int(span.start) + Int(span.count)]), as: UTF8.self)
    }

    // MARK: Reasons as codes

    static func code(of reason: ImportRenaming.Reason) -> UInt16 {
        switch reason {
        case .cleaned: return 1
        case .normalized: return 2
        case .numbered: return 3
        case .numberedByAccount: return 4
        case .titleKept: return 5
        case .yieldedToExactTitle: return 6
        case .vaultHoldsAnotherAccount: return 7
        case .shortened, .foldersCut, .yieldedToExactFolders: return 0  // no code: a row of it is kept as text (`Builder.add`)
        }
    }

    private static func reason(of code: UInt8) -> ImportRenaming.Reason {
        switch code {
        case 1: return .cleaned
        case 2: return .normalized
        case 3: return .numbered
        case 4: return .numberedByAccount
        case 6: return .yieldedToExactTitle
        case 7: return .vaultHoldsAnotherAccount
        default: return .titleKept
        }
    }

    // MARK: - Building

    /// The renamings of one streamed build, in item order, as they come.
    struct Builder {
        private var arena: [UInt8] = []
        private var rows: [Row] = []
        /// Renamings the rows cannot hold (more reasons than five, a name shortened, an arena past 4 GiB), by index.
        private var given: [Int: ImportRenaming] = [:]

        /// The last URL whose site was asked for, and its site (`site(of:)`).
        private var lastURL: String?
        private var lastSite: String?

        /// Whether no renaming was added.
        var isEmpty: Bool { rows.isEmpty }

        /// `ForeignNaming.site(of:)` of `url`, the one before's when `url` has the same bytes (a
        /// site's accounts come together).
        mutating func site(of url: String?) -> String? {
            guard let url else { return nil }
            if let lastURL, sameUTF8(lastURL, url) { return lastSite }
            lastURL = url
            lastSite = ForeignNaming.site(of: url)
            return lastSite
        }

        /// Room for `count` rows at once: the rows never grow by copies, each of which left the
        /// one before as a hole in the heap that the peak kept (2.6 MB at 100,000 items).
        mutating func reserve(_ count: Int) { rows.reserveCapacity(count) }

        /// Adds the renaming of an item named `base` (before numbering) and `number` (0: not
        /// numbered), held in the file as `original`, with its username and its first URL's site
        /// (else `host`: a URL without a scheme, as the account names it); `account` when the renaming says which account it is, `derived` when the name was made
        /// of the site or username.
        mutating func add(original: String, base: String, number: UInt32, reasons: [ImportRenaming.Reason],
                          user: String?, site: String?, host: String? = nil, account: Bool, derived: Bool) {
            let previous = rows.last
            var packed: UInt16 = 0
            for (slot, reason) in reasons.enumerated() where slot < PackedRenamings.maxReasons { packed |= PackedRenamings.code(of: reason) << (3 * slot) }
            if reasons.count <= PackedRenamings.maxReasons, rows.count < Int32.max, !reasons.contains(.shortened), !reasons.contains(.yieldedToExactFolders),
               let originalSpan = span(original, reusing: previous?.original, previous?.base),
               let baseSpan = span(base, reusing: originalSpan, previous?.base),
               let userSpan = span(user ?? "", reusing: nil, nil),
               let siteSpan = span(site ?? host ?? "", reusing: previous?.site, nil) {
                var flags: UInt8 = 0
                if user != nil { flags |= PackedRenamings.hasUser }
                if site != nil { flags |= PackedRenamings.hasSite }
                if account { flags |= PackedRenamings.saysAccount }
                if derived { flags |= PackedRenamings.derived }
                if site == nil && host != nil { flags |= PackedRenamings.hostOnly }
                rows.append(Row(original: originalSpan, base: baseSpan, user: userSpan, site: siteSpan, number: number, reasons: packed, flags: flags))
                return
            }
            // A row it cannot be: kept as text (the row is a placeholder).
            given[rows.count] = ImportRenaming(original: original, name: number == 0 ? base : "\(base) (\(number))", reasons: reasons,
                                               account: account ? ForeignNaming.account(user: user, site: site, host: host) : nil,
                                               madeOf: derived ? ForeignNaming.madeOf(user: user, site: site) : nil)
            let none = Span(start: 0, count: 0)
            rows.append(Row(original: none, base: none, user: none, site: none, number: 0, reasons: 0, flags: 0))
        }

        /// Where `text` is: `first` or `second` when either holds its bytes, else appended; nil past 4 GiB.
        private mutating func span(_ text: String, reusing first: Span?, _ second: Span?) -> Span? {
            // In place (no copy of the string, a retain) when its bytes are contiguous, as a native string's are.
            if let found = text.utf8.withContiguousStorageIfAvailable({ span(UnsafeRawBufferPointer($0), reusing: first, second) }) {
                return found
            }
            var text = text
            return text.withUTF8 { span(UnsafeRawBufferPointer($0), reusing: first, second) }
        }

        /// `span(_:reusing:_:)` of the bytes `raw`.
        private mutating func span(_ raw: UnsafeRawBufferPointer, reusing first: Span?, _ second: Span?) -> Span? {
            func holds(_ candidate: Span?) -> Bool {
                guard let candidate, Int(candidate.count) == raw.count else { return false }
                return arena.withUnsafeBytes { compareBytes(UnsafeRawBufferPointer(rebasing: $0[Int(candidate.start)..<Int(candidate.start) + raw.count]), raw) } == 0
            }
            if holds(first) { return first }
            if holds(second) { return second }
            guard arena.count + raw.count <= UInt32.max else { return nil }
            let start = UInt32(arena.count)
            arena.append(contentsOf: raw)
            return Span(start: start, count: UInt32(raw.count))
        }

        /// The renamings, in the order added; the builder is emptied (its arena wiped).
        mutating func finish() -> [ImportRenaming] {
            guard !rows.isEmpty else { return [] }
            let packed = PackedRenamings(arena: &arena, rows: rows)
            let count = rows.count
            rows = []
            var renamings: [ImportRenaming] = []
            renamings.reserveCapacity(count)
            for index in 0..<count { renamings.append(given[index] ?? ImportRenaming(packed, at: index)) }
            given = [:]
            return renamings
        }
    }
}
