// MARK: - One walk over a JSON object

/// A reader of a JSON document's bytes from a position: the direct JSON readers
/// (`NativeJSONReader`, `BitwardenJSONReader`, and any reader of another format's JSON) share the
/// walk over objects and arrays through it, and differ only in how they read a key and a value.
///
/// The walk is written once (`walkObject(key:member:)`): the object loop had been written three
/// times, once per reader and once per kind of key, and the copies drifted apart in how they
/// treated a key given twice. A caller says how a key is read (its bytes' place, its text, or
/// nothing at all when any key is refused) and what a repeated key means, in its key reader.
protocol JSONWalker {
    /// The document.
    var bytes: [UInt8] { get }
    /// Where the walk is in `bytes`.
    var position: Int { get set }
}

extension JSONWalker {
    /// `{ "key" : value, … }`: `key` reads each key (its opening quote at `position`; nil refuses
    /// it: a repeated key, a key the caller does not take, bad bytes), `member` each value after the
    /// colon. False on anything else. `key` and `member` move `position` past what they read.
    ///
    /// Inlined, so that each caller's key reader and member are called directly (no slower than
    /// the loops it replaced: `bench/scale.py --only 'import json,import bitwarden-json'`).
    @inline(__always)
    mutating func walkObject<Key>(key readKey: (inout Self) -> Key?, member: (inout Self, Key) -> Bool) -> Bool {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard let key = readKey(&self) else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard member(&self, key) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// `[ element, … ]`, `element` reading each; false on anything else.
    @inline(__always)
    mutating func walkArray(_ element: (inout Self) -> Bool) -> Bool {
        skipWhitespace()
        guard take(UInt8(ascii: "[")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return true }
        while true {
            skipWhitespace()
            guard element(&self) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]"))
        }
    }

    // The steps below read `bytes` and move a local copy of `position`: passing `bytes` beside
    // `&position` (both of a generic `Self`) made the compiler retain the array at every step.

    /// Moves past `byte` when it is next; whether it was.
    @inline(__always)
    mutating func take(_ byte: UInt8) -> Bool {
        let at = position
        guard at < bytes.count, bytes[at] == byte else { return false }
        position = at + 1
        return true
    }

    /// Moves past JSON whitespace.
    @inline(__always)
    mutating func skipWhitespace() {
        var at = position
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x0A, 0x0D, 0x09: at += 1
            default: position = at; return
            }
        }
        position = at
    }

    /// Moves past `literal` (`true`, `null`…) when it is next; whether it was.
    mutating func takeLiteral(_ literal: StaticString) -> Bool {
        var at = position
        defer { position = at }
        return JSONBytes.takeLiteral(literal, in: bytes, at: &at)
    }

    // MARK: Key readers

    /// A key as text (escapes resolved), refused when `seen` holds it already; else added to it.
    /// The plain key reader: compares keys as strings, as `JSONDocument`'s scan compares them.
    mutating func readKeyOnce(in seen: inout [String]) -> String? {
        var at = position
        let read = JSONString.read(bytes, at: &at)
        position = at
        guard let key = read, !seen.contains(key) else { return nil }
        seen.append(key)
        return key
    }

    /// A key that is ASCII without an escape, as the place of its bytes; nil for any other key.
    @inline(__always)
    mutating func readASCIIKey() -> Range<Int>? {
        var at = position
        let read = JSONString.literal(bytes, at: &at)
        position = at
        guard case .plain(let range, ascii: true)? = read else { return nil }
        return range
    }
}
