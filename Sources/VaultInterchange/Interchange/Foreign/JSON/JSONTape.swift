#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - A JSON document as a flat tape

/// A whole JSON document checked and laid out as one array of nodes (a "tape"), for the readers of
/// deeply structured exports (1Password's 1pux, Enpass) that walk it by key.
///
/// One pass over the bytes, an explicit stack, no recursion: strict JSON (RFC 8259) in UTF-8, at most
/// `maxDepth` levels, and no object that names one key twice (compared as `JSONDocument` compares
/// them, escapes decoded) — the same rules as every JSON import. Strings are kept as ranges of the
/// input and decoded when a reader asks (`JSONString`), so the tape costs one small node per value.
///
/// Not a `JSONWalker`: a walker reads a document once, in file order, each key as it comes (vaultfile's
/// and Bitwarden's flat exports), while these readers look members up by name in their own order,
/// several levels down (an item's `overview` after its `details`, a section's fields), which a
/// one-pass walk could only do by keeping what it passed — the tape. The two share the steps
/// between values (`JSONBytes`) and the string reader (`JSONString`).
struct JSONTape {
    static let maxDepth = JSONDocument.maxDepth

    enum Kind: UInt8 { case object, array, string, number, literalTrue, literalFalse, null }

    /// One value: its kind, where it lies in the input, and (for an object or array) the index of
    /// the node after its last descendant and the number of its members or elements. 16 bytes
    /// (offsets and indices in 32 bits: `maxInput`), a node per value of a document of millions.
    struct Node {
        var kind: Kind
        var count: Int32 = 0
        private var startOffset: UInt32
        private var endOffset: UInt32

        init(kind: Kind, start: Int, end: Int) {
            (self.kind, startOffset, endOffset) = (kind, UInt32(start), UInt32(end))
        }

        /// Where the value starts in the input.
        var start: Int { Int(startOffset) }
        /// Where it ends in the input; for an object or array, the node after its last descendant.
        var end: Int {
            get { Int(endOffset) }
            set { endOffset = UInt32(newValue) }
        }
    }

    /// The largest document a tape holds (its offsets are 32 bits): 4 GiB, well above what an
    /// import reads.
    static let maxInput = Int(UInt32.max)

    let bytes: [UInt8]
    private(set) var nodes: [Node] = []
    /// What messages call the document ("the Enpass export").
    let what: String

    /// Reads `bytes`, or throws naming the line of the first problem.
    init(_ bytes: [UInt8], what: String) throws(VaultError) {
        self.bytes = bytes
        self.what = what
        guard bytes.count <= Self.maxInput else { throw .limitExceeded("\(what) is larger than \(Self.maxInput) bytes") }
        // Every string's bytes UTF-8, checked once for the whole document where it lies (a literal
        // without an escape is kept as its bytes and decoded only when read); never a String of
        // it, which would be one more copy of every secret, freed without a wipe.
        guard bytes.withUnsafeBufferPointer(JSONString.isUTF8) else { throw .malformedInput("not \(what): the JSON is not UTF-8") }
        // Exports run at about 10 bytes a value: room for a value every 4 bytes is never copied
        // to a larger array (the copy held both at once), and the pages never written take no memory.
        nodes.reserveCapacity(bytes.count / 4 + 16)
        var position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        try scan(from: &position, depth: 0)
        guard position == bytes.count else { throw fail("more after the end of the document", at: position) }
    }

    /// The one value at `position` of a larger document whose bytes `bytes` hold (a window of
    /// them: `JSONStream`), `depth` containers deep in it; leaves `position` after the value and
    /// the whitespace after it. The same rules as a whole document's tape, the value's bytes
    /// checked as UTF-8 where they lie; the tape's nodes are the value's alone (its root is 0).
    init(value bytes: [UInt8], at position: inout Int, depth: Int, what: String) throws(VaultError) {
        self.bytes = bytes
        self.what = what
        var end = position
        nodes.reserveCapacity(64)  // an item of an export: a few dozen values
        try scan(from: &end, depth: depth)
        let range = position..<end
        guard bytes.withUnsafeBufferPointer({ JSONString.isUTF8(UnsafeBufferPointer(rebasing: $0[range])) }) else {
            throw .malformedInput("not \(what): the JSON is not UTF-8")
        }
        position = end
    }

    private func fail(_ why: String, at offset: Int) -> VaultError {
        .malformedInput("not \(what): line \(XMLReader.line(of: offset, in: bytes)): \(why)")
    }

    // MARK: The scan

    /// Scans one value from `position` (`depth` containers deep in its document) and the
    /// whitespace after it.
    private mutating func scan(from position: inout Int, depth: Int) throws(VaultError) {
        /// Open containers: their node, whether an object, and (for objects) where their keys start in `keys`.
        var stack: [(node: Int, object: Bool, keys: Int)] = []
        /// The keys of the open objects, as ranges of their literals (decoded only to compare),
        /// each with whether it is plain (ASCII without an escape: its bytes are its text).
        var keys: [(range: Range<Int>, plain: Bool)] = []
        stack.reserveCapacity(8)
        keys.reserveCapacity(32)
        /// The decoded keys of a large open object, by its depth.
        var keySets: [Int: Set<String>] = [:]
        var expectValue = true
        while true {
            JSONBytes.skipWhitespace(in: bytes, at: &position)
            if expectValue {
                // A key first, inside an object.
                if let top = stack.last, top.object, nodes[top.node].count % 2 == 0 {
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a key in quotes", at: position) }
                    let start = position
                    guard let literal = JSONString.literal(bytes, at: &position) else { throw fail("a key that is not a valid string", at: start) }
                    let key = (range: start..<position, plain: { if case .plain(_, true) = literal { return true } else { return false } }())
                    // Pairwise for a small object; through a set of the decoded keys for a larger
                    // one, so that an object of a million keys costs no more than a million lookups.
                    let repeated: Bool
                    if keys.count - top.keys < 16 {
                        var found = false
                        for earlier in keys[top.keys...] where sameKey(earlier, key) { found = true; break }
                        repeated = found
                    } else {
                        if keySets[stack.count] == nil {
                            keySets[stack.count] = Set(keys[top.keys...].map { var at = $0.range.lowerBound; return JSONString.read(bytes, at: &at) ?? "" })
                        }
                        var at = start
                        repeated = !keySets[stack.count]!.insert(JSONString.read(bytes, at: &at) ?? "").inserted
                    }
                    if repeated {
                        throw fail("the key '\(displayed(start..<position))' appears twice in one object; refusing to guess which of the two was meant", at: start)
                    }
                    keys.append(key)
                    nodes.append(Node(kind: .string, start: start, end: position))
                    nodes[top.node].count += 1
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    guard JSONBytes.take(UInt8(ascii: ":"), in: bytes, at: &position) else { throw fail("expected ':' after a key", at: position) }
                    continue
                }
                guard position < bytes.count else { throw fail("the document ends where a value was expected", at: position) }
                let start = position
                if let top = stack.last { nodes[top.node].count += 1 }
                switch bytes[position] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = bytes[position] == UInt8(ascii: "{")
                    guard depth + stack.count < Self.maxDepth else { throw fail("objects and arrays nest more than \(Self.maxDepth) levels deep", at: start) }
                    position += 1
                    nodes.append(Node(kind: object ? .object : .array, start: start, end: 0))
                    stack.append((nodes.count - 1, object, keys.count))
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    if JSONBytes.take(object ? UInt8(ascii: "}") : UInt8(ascii: "]"), in: bytes, at: &position) {
                        stack.removeLast()
                        nodes[nodes.count - 1].end = nodes.count
                        expectValue = false
                    }
                    continue
                case UInt8(ascii: "\""):
                    guard JSONString.literal(bytes, at: &position) != nil else { throw fail("a string that is not valid (an unknown escape, a control character, a lone surrogate or bytes that are not UTF-8)", at: start) }
                    nodes.append(Node(kind: .string, start: start, end: position))
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let literals: [(StaticString, Kind)] = [("true", .literalTrue), ("false", .literalFalse), ("null", .null)]
                    guard let (literal, kind) = literals.first(where: { JSONBytes.takeLiteral($0.0, in: bytes, at: &position) }) else { throw fail("an unknown word", at: start) }
                    _ = literal
                    nodes.append(Node(kind: kind, start: start, end: position))
                default:
                    guard skipNumber(at: &position) else { throw fail("expected a value", at: start) }
                    nodes.append(Node(kind: .number, start: start, end: position))
                }
                expectValue = false
                continue
            }
            // After a value: a comma, the end of its container, or the end of the document.
            guard let top = stack.last else { return }
            if JSONBytes.take(UInt8(ascii: ","), in: bytes, at: &position) {
                expectValue = true
            } else if JSONBytes.take(top.object ? UInt8(ascii: "}") : UInt8(ascii: "]"), in: bytes, at: &position) {
                stack.removeLast()
                nodes[top.node].end = nodes.count
                if top.object {
                    keys.removeSubrange(top.keys...)
                    keySets[stack.count + 1] = nil
                }
            } else {
                throw fail("expected ',' or the end of \(top.object ? "an object" : "an array")", at: position)
            }
        }
    }

    /// Whether two key literals name the same key: equal bytes, or equal strings once decoded
    /// (two plain keys of different bytes never do).
    private func sameKey(_ a: (range: Range<Int>, plain: Bool), _ b: (range: Range<Int>, plain: Bool)) -> Bool {
        let equalBytes = a.range.count == b.range.count && bytes.withUnsafeBufferPointer { $0[a.range].elementsEqual($0[b.range]) }
        if equalBytes { return true }
        if a.plain && b.plain { return false }
        var first = a.range.lowerBound, second = b.range.lowerBound
        return JSONString.read(bytes, at: &first) == JSONString.read(bytes, at: &second)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private func skipNumber(at position: inout Int) -> Bool {
        func digits() -> Int {
            let start = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - start
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let start = position
        let integer = digits()
        guard integer > 0, integer == 1 || bytes[start] != UInt8(ascii: "0") else { return false }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { return false }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    private func displayed(_ range: Range<Int>) -> String {
        var position = range.lowerBound
        let key = JSONString.read(bytes, at: &position) ?? ""
        return String(key.unicodeScalars.prefix(64).map { $0.value < 0x20 ? "?" : Character($0) })
    }

    // MARK: Reading the tape

    /// The root value.
    var root: Int { 0 }

    func kind(_ node: Int) -> Kind { nodes[node].kind }

    /// The node after `node` and its descendants.
    func next(after node: Int) -> Int {
        let kind = nodes[node].kind
        return kind == .object || kind == .array ? nodes[node].end : node + 1
    }

    /// The members of an object, in order: each key decoded and its value's node.
    func members(_ node: Int) -> [(key: String, value: Int)] {
        guard nodes[node].kind == .object else { return [] }
        var result: [(key: String, value: Int)] = []
        var child = node + 1
        for _ in 0..<Int(nodes[node].count) / 2 {
            var position = nodes[child].start
            let key = JSONString.read(bytes, at: &position) ?? ""
            result.append((key, child + 1))
            child = next(after: child + 1)
        }
        return result
    }

    /// The value of `key` in the object `node`, if it has one.
    func member(_ node: Int?, _ key: StaticString) -> Int? {
        guard let node, nodes[node].kind == .object else { return nil }
        var child = node + 1
        let length = key.utf8CodeUnitCount
        return bytes.withUnsafeBufferPointer { buffer -> Int? in
            for _ in 0..<Int(nodes[node].count) / 2 {
                let literal = nodes[child]
                if literal.end - literal.start == length + 2, memcmp(buffer.baseAddress! + literal.start + 1, key.utf8Start, length) == 0 {
                    return child + 1
                }
                child = next(after: child + 1)
            }
            return nil
        }
    }

    /// The elements of the array `node` (none when it is not an array).
    func elements(_ node: Int?) -> [Int] {
        guard let node, nodes[node].kind == .array else { return [] }
        var result: [Int] = []
        result.reserveCapacity(Int(nodes[node].count))
        var child = node + 1
        for _ in 0..<Int(nodes[node].count) {
            result.append(child)
            child = next(after: child)
        }
        return result
    }

    /// The string at `node`, decoded; nil when it is not a string.
    func string(_ node: Int?) -> String? {
        guard let node, nodes[node].kind == .string else { return nil }
        var position = nodes[node].start
        return JSONString.read(bytes, at: &position)
    }

    /// The string at `node` as its UTF-8 bytes.
    func stringBytes(_ node: Int?) -> [UInt8]? {
        guard let node, nodes[node].kind == .string else { return nil }
        var position = nodes[node].start
        return JSONString.readBytes(bytes, at: &position)
    }

    /// A number, a string, true or false as text (`null` and containers: nil).
    func text(_ node: Int?) -> String? {
        guard let node else { return nil }
        switch nodes[node].kind {
        case .string: return string(node)
        case .number: return String(decoding: bytes[nodes[node].start..<nodes[node].end], as: UTF8.self)
        case .literalTrue: return "true"
        case .literalFalse: return "false"
        case .null, .object, .array: return nil
        }
    }

    /// An integer number (a fraction dropped), or nil.
    func integer(_ node: Int?) -> Int64? {
        guard let node, nodes[node].kind == .number else { return nil }
        // An integer of at most 18 digits (every time and flag of an export) read where it lies.
        var index = nodes[node].start
        let end = nodes[node].end, negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        if end - index <= 18 {
            var value: Int64 = 0
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            if index == end { return negative ? -value : value }
        }
        guard let text = text(node) else { return nil }
        if let exact = Int64(text) { return exact }
        return Double(text).flatMap { $0.isFinite && abs($0) < 9e18 ? Int64($0) : nil }
    }

    /// Whether `node` is `true`, or a number other than 0 (Enpass writes flags as 0 and 1).
    func flag(_ node: Int?) -> Bool {
        guard let node else { return false }
        switch nodes[node].kind {
        case .literalTrue: return true
        case .number: return integer(node).map { $0 != 0 } ?? false
        default: return false
        }
    }
}
