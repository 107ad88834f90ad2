#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - A JSON document read one value at a time

/// Where a `JSONStream` gets the rest of its document: appends at most `room` more bytes to the
/// window (never past its capacity, so the window is never moved unwiped); false once the
/// document has ended (and the source has checked that it ended whole).
typealias JSONStreamSource = (_ window: inout [UInt8], _ room: Int) throws(VaultError) -> Bool

/// Walks a JSON document's outer objects and arrays (the "skeleton" of an export: `accounts` →
/// `vaults` → `items`) and hands over each value a reader wants as a `JSONTape` of that value
/// alone, so that the readers of large exports (Enpass, 1Password's 1pux) never hold a tape of
/// the whole document, and a 1pux reader never holds its whole inflated `export.data`: the bytes
/// come from a `JSONStreamSource` into a window, and what lies behind the position is dropped
/// (wiped) when the window is refilled.
///
/// The rules are the tape's (strict JSON, UTF-8, at most `JSONTape.maxDepth` levels, no key twice
/// in an object, compared decoded), but the messages are not: any error means "not taken here",
/// and the caller reads the document again as a whole (`JSONTape(_:what:)`), whose message names
/// the problem and its line. So a document is accepted here only when the whole-document tape
/// accepts it, and read to the same items (`ForeignJSONReadersTests` ties the two).
struct JSONStream {
    /// Bytes of the document from some offset on; `position` indexes them.
    private(set) var window: [UInt8]
    /// Where the walk is in `window`.
    private(set) var position = 0
    /// Containers open around the position.
    private(set) var depth = 0
    private let source: JSONStreamSource?
    private var ended: Bool
    /// What the next tape reuses of the last one's storage (its nodes, the scan's lists).
    private var scratch = JSONTape.Scratch()
    /// The least the window grows by when refilled.
    private let chunk: Int
    /// What the document is, for a tape's messages ("a 1Password export.data").
    let what: String

    /// A document whose bytes are all in `bytes`.
    init(_ bytes: [UInt8], what: String) {
        window = bytes
        source = nil
        ended = true
        chunk = 0
        self.what = what
    }

    /// A document read from `source`, `chunk` bytes (or more) at a time.
    init(chunk: Int, what: String, source: @escaping JSONStreamSource) {
        window = []
        window.reserveCapacity(chunk)
        self.source = source
        ended = false
        self.chunk = chunk
        self.what = what
    }

    /// Something the walk did not take: the caller reads the document as a whole.
    static func declined() -> VaultError { .malformedInput("not read as a stream") }

    // MARK: The window

    /// Reads more of the document: what lies before `position` is dropped and wiped, the window
    /// grows (into a new buffer, the old one wiped) when the unread rest fills half of it. False at the end.
    private mutating func refill() throws(VaultError) -> Bool {
        guard let source, !ended else { return false }
        let rest = window.count - position
        if position > 0 {
            let dropped = position
            window.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                memmove(base, base + dropped, rest)
                wipe(UnsafeMutableRawBufferPointer(rebasing: buffer[rest...]))
            }
            window.removeLast(dropped)
            position = 0
        }
        if window.capacity - window.count < max(chunk / 2, 1) {
            var larger: [UInt8] = []
            larger.reserveCapacity(max(window.capacity * 2, window.count + chunk))
            larger.append(contentsOf: window)
            wipe(&window)
            window = larger
        }
        let before = window.count
        if try !source(&window, window.capacity - window.count) { ended = true }
        return window.count > before || !ended
    }

    /// Whether the document has a byte at `position`, reading more when it must.
    private mutating func available() throws(VaultError) -> Bool {
        while position >= window.count {
            guard try refill() else { return false }
        }
        return true
    }

    /// Moves past whitespace; the byte after it, or nil at the end of the document.
    mutating func peek() throws(VaultError) -> UInt8? {
        while try available() {
            switch window[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return window[position]
            }
        }
        return nil
    }

    private mutating func take(_ byte: UInt8) throws(VaultError) -> Bool {
        guard try peek() == byte else { return false }
        position += 1
        return true
    }

    // MARK: Values

    /// The value at the position, as a tape of its own; the position moves past it.
    mutating func tape() throws(VaultError) -> JSONTape {
        guard try peek() != nil else { throw Self.declined() }
        while true {
            var end = position
            // A value cut by the window's end may fail, or (a number) seem whole: read more first.
            if let tape = try? JSONTape(value: window, at: &end, depth: depth, what: what, reusing: &scratch), end < window.count || ended {
                position = end
                return tape
            }
            guard try refill() else { throw Self.declined() }
        }
    }

    /// A key and its colon: its text decoded (for the check that no key comes twice) and whether
    /// its literal is exactly one of `names` (the index of that one), as `JSONTape.member` finds keys.
    private mutating func key(_ names: [StaticString]) throws(VaultError) -> (text: String, index: Int?) {
        while true {
            var end = position
            if let text = JSONString.read(window, at: &end) {
                let literal = position + 1..<end - 1
                let index = names.firstIndex { name in
                    literal.count == name.utf8CodeUnitCount && (0..<literal.count).allSatisfy { window[literal.lowerBound + $0] == name.utf8Start[$0] }
                }
                position = end
                guard try take(UInt8(ascii: ":")) else { throw Self.declined() }
                return (text, index)
            }
            guard try refill() else { throw Self.declined() }
        }
    }

    // MARK: The skeleton

    /// The document: an optional byte-order mark, one value that `body` reads, and nothing after it.
    mutating func document(_ body: (inout JSONStream) throws(VaultError) -> Void) throws(VaultError) {
        guard try available() else { throw Self.declined() }
        while window.count - position < 3, try refill() {}
        if window[position...].starts(with: [0xEF, 0xBB, 0xBF]) { position += 3 }
        try body(&self)
        guard try peek() == nil else { throw Self.declined() }
    }

    /// `{ "key": value, … }`: `member` reads each value (it must read it whole), given the key's
    /// index in `names` (nil for any other key). A key given twice is declined.
    mutating func object(_ names: [StaticString], _ member: (inout JSONStream, Int?) throws(VaultError) -> Void) throws(VaultError) {
        guard depth < JSONTape.maxDepth, try take(UInt8(ascii: "{")) else { throw Self.declined() }
        depth += 1
        var seen: [String] = []
        if try !take(UInt8(ascii: "}")) {
            repeat {
                guard try peek() == UInt8(ascii: "\"") else { throw Self.declined() }
                let (text, index) = try key(names)
                guard !seen.contains(text) else { throw Self.declined() }
                seen.append(text)
                try member(&self, index)
            } while try take(UInt8(ascii: ","))
            guard try take(UInt8(ascii: "}")) else { throw Self.declined() }
        }
        depth -= 1
    }

    /// `[ value, … ]`: `element` reads each (whole).
    mutating func array(_ element: (inout JSONStream) throws(VaultError) -> Void) throws(VaultError) {
        guard depth < JSONTape.maxDepth, try take(UInt8(ascii: "[")) else { throw Self.declined() }
        depth += 1
        if try !take(UInt8(ascii: "]")) {
            repeat {
                try element(&self)
            } while try take(UInt8(ascii: ","))
            guard try take(UInt8(ascii: "]")) else { throw Self.declined() }
        }
        depth -= 1
    }

    /// Reads the value at the position and lets it go (checked as any value).
    mutating func skip() throws(VaultError) {
        _ = try tape()
    }

    /// Wipes the window: its bytes are the document's (secrets).
    mutating func wipeWindow() {
        wipe(&window)
        position = 0
    }
}
