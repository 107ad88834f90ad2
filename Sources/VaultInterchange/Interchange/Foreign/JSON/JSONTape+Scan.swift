#if canImport(Glibc)
import Glibc
#endif
import VaultModel

extension JSONTape {
    // MARK: The scan

    /// Where a scan stopped and why; `fail` makes it a message (it knows the document's name and lines).
    struct ScanFailure: Error {
        let why: String
        let offset: Int
    }

    /// Scans one value from `position` (`depth` containers deep in its document) and the
    /// whitespace after it. Whether a string's literal held a byte of 0x80 or more (its text is
    /// UTF-8 only once checked).
    /// `located`: whether a failure's message names its line (found by counting the lines before it).
    @discardableResult
    mutating func scan(from position: inout Int, depth: Int, located: Bool = true) throws(VaultError) -> Bool {
        var scratch = Scratch()
        return try scan(from: &position, depth: depth, located: located, scratch: &scratch)
    }

    /// `scan(from:depth:located:)` with the working lists of `scratch`.
    mutating func scan(from position: inout Int, depth: Int, located: Bool, scratch: inout Scratch) throws(VaultError) -> Bool {
        // The nodes written through the storage's pointer and the bytes read through one: the
        // loops index them within bounds their own conditions check.
        var count = 0
        defer { nodeCount = count }
        let bytes = self.bytes, storage = self.storage
        if scratch.lists == nil { scratch.lists = ScanLists() }
        let lists = scratch.lists!
        let outcome: Result<Bool, ScanFailure> = bytes.withUnsafeBufferPointer { buffer in
            do throws(ScanFailure) {
                return .success(try Self.scan(buffer, bytes, from: &position, depth: depth, into: storage, count: &count, lists: lists))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let high): return high
        case .failure(let failure): throw located ? fail(failure.why, at: failure.offset) : .malformedInput("not \(what): \(failure.why)")
        }
    }

    /// `scan(from:depth:)` over the document's bytes (`buffer`, and `bytes` for the readers of
    /// literals with escapes), writing `count` nodes to `storage` (grown when full).
    static func scan(_ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8], from position: inout Int, depth: Int,
                             into storage: NodeStorage, count: inout Int, lists: ScanLists) throws(ScanFailure) -> Bool {
        var nodes = storage.base, capacity = storage.capacity
        /// Writes the next node (at `count`), first growing the storage when it is full.
        @inline(__always) func append(_ node: Node) {
            if count == capacity {
                storage.grow(to: count * 2, keeping: count)
                (nodes, capacity) = (storage.base, storage.capacity)
            }
            (nodes + count).initialize(to: node)
            count += 1
        }
        // `stack` (`openCount` of them): open containers: their node, whether an object, and (for
        // objects) where their keys start in `keys`. `keys` (`keyCount`): the keys of the open
        // objects, as ranges of their literals (decoded only to compare), each with whether it is
        // plain. Both empty at the start, their storage kept from an earlier scan; `top` is the
        // innermost open container (`stack[openCount - 1]`).
        let stack = lists.open
        var keys = lists.keys, openCount = 0, keyCount = 0
        var top = Open(node: 0, object: false, keys: 0)
        /// The decoded keys of a large open object, by its depth.
        var keySets: [Int: Set<String>] = [:]
        // `expectKey`: a member's key comes next (after an object's `{` or a comma in it); the
        // member's value is then read in the same step, without a turn of the loop between them.
        var expectValue = true, expectKey = false, high = false
        while true {
            skipWhitespace(buffer, at: &position)
            if expectValue {
                // A key first, inside an object.
                if expectKey, openCount > 0 {
                    guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else { throw ScanFailure(why: "expected a key in quotes", offset: position) }
                    let start = position
                    guard let literal = literal(buffer, bytes, at: &position, high: &high) else { throw ScanFailure(why: "a key that is not a valid string", offset: start) }
                    let key = Key(start: start, end: position, plain: { if case .plain(_, true) = literal { return true } else { return false } }())
                    // Pairwise for a small object; through a set of the decoded keys for a larger
                    // one, so that an object of a million keys costs no more than a million lookups.
                    let repeated: Bool
                    // A plain key whose bit no earlier key of its object has (none with an escape)
                    // is new: most keys are, and are compared with none.
                    let bit = key.plain ? Self.keyBit(buffer, key.start, key.end) : 0
                    if key.plain, !top.escapedKey, top.keyBits & bit == 0, keyCount - top.keys < 16 {
                        repeated = false
                    } else if keyCount - top.keys < 16 {
                        // Two plain literals of different lengths never name one key: only the
                        // others are compared (most keys of an object differ in length).
                        var found = false
                        var earlier = top.keys
                        while earlier < keyCount {
                            let other = keys[earlier]
                            if other.end - other.start == key.end - key.start || !(other.plain && key.plain), sameKey(other, key, buffer, bytes) { found = true; break }
                            earlier += 1
                        }
                        repeated = found
                    } else {
                        if keySets[openCount] == nil {
                            var set = Set<String>()
                            for earlier in top.keys..<keyCount {
                                var at = keys[earlier].start
                                set.insert(JSONString.read(bytes, at: &at) ?? "")
                            }
                            keySets[openCount] = set
                        }
                        var at = start
                        repeated = !keySets[openCount]!.insert(JSONString.read(bytes, at: &at) ?? "").inserted
                    }
                    if repeated {
                        throw ScanFailure(why: "the key '\(displayed(start..<position, in: bytes))' appears twice in one object; refusing to guess which of the two was meant", offset: start)
                    }
                    top.keyBits |= bit
                    if !key.plain { top.escapedKey = true }
                    if keyCount == lists.keyCapacity {
                        lists.growKeys(keeping: keyCount)
                        keys = lists.keys
                    }
                    (keys + keyCount).initialize(to: key)
                    keyCount += 1
                    append(Node(kind: .string, start: start, end: position, plain: key.plain))
                    nodes[top.node].count += 1
                    skipWhitespace(buffer, at: &position)
                    guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else { throw ScanFailure(why: "expected ':' after a key", offset: position) }
                    position += 1
                    expectKey = false
                    skipWhitespace(buffer, at: &position)
                }
                guard position < buffer.count else { throw ScanFailure(why: "the document ends where a value was expected", offset: position) }
                let start = position
                if openCount > 0 { nodes[top.node].count += 1 }
                switch buffer[position] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = buffer[position] == UInt8(ascii: "{")
                    guard depth + openCount < Self.maxDepth else { throw ScanFailure(why: "objects and arrays nest more than \(Self.maxDepth) levels deep", offset: start) }
                    position += 1
                    append(Node(kind: object ? .object : .array, start: start, end: 0))
                    skipWhitespace(buffer, at: &position)
                    if position < buffer.count, buffer[position] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        position += 1
                        nodes[count - 1].end = count
                        expectValue = false
                    } else {
                        // Opened: at most maxDepth are (the guard above), the room `stack` has.
                        if openCount > 0 { stack[openCount - 1] = top }
                        top = Open(node: count - 1, object: object, keys: keyCount)
                        openCount += 1
                        expectKey = object
                    }
                    continue
                case UInt8(ascii: "\""):
                    guard let literal = literal(buffer, bytes, at: &position, high: &high) else {
                        throw ScanFailure(why: "a string that is not valid (an unknown escape, a control character, a lone surrogate or bytes that are not UTF-8)", offset: start)
                    }
                    let plain: Bool = { if case .plain(_, true) = literal { return true } else { return false } }()
                    append(Node(kind: .string, start: start, end: position, plain: plain))
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let kind: Kind
                    if takeWord("true", buffer, at: &position) {
                        kind = .literalTrue
                    } else if takeWord("false", buffer, at: &position) {
                        kind = .literalFalse
                    } else if takeWord("null", buffer, at: &position) {
                        kind = .null
                    } else {
                        throw ScanFailure(why: "an unknown word", offset: start)
                    }
                    append(Node(kind: kind, start: start, end: position))
                default:
                    guard skipNumber(buffer, at: &position) else { throw ScanFailure(why: "expected a value", offset: start) }
                    append(Node(kind: .number, start: start, end: position))
                }
                expectValue = false
                continue
            }
            // After a value: a comma, the end of its container, or the end of the document.
            guard openCount > 0 else { return high }
            let next = position < buffer.count ? buffer[position] : 0
            if next == UInt8(ascii: ",") {
                position += 1
                expectValue = true
                expectKey = top.object
            } else if next == (top.object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                position += 1
                openCount -= 1
                nodes[top.node].end = count
                if top.object {
                    keyCount = top.keys
                    if !keySets.isEmpty { keySets[openCount + 1] = nil }
                }
                if openCount > 0 { top = stack[openCount - 1] }
            } else {
                throw ScanFailure(why: "expected ',' or the end of \(top.object ? "an object" : "an array")", offset: position)
            }
        }
    }

    /// Moves past JSON whitespace (space, LF, CR, tab): `JSONBytes.skipWhitespace` through a pointer.
    @inline(__always)
    static func skipWhitespace(_ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) {
        // Most calls find none: every byte above the space ends it at once.
        guard position < buffer.count, buffer[position] <= 0x20 else { return }
        while position < buffer.count {
            switch buffer[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// The string literal whose quote is at `position`, `JSONString.literal`'s rules: one without
    /// an escape or a control character scanned here (`JSONString.plainRun`), any other read by
    /// `JSONString.literal`. Sets `high` when a plain literal holds a byte of 0x80 or more.
    @inline(__always)
    static func literal(_ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8], at position: inout Int, high: inout Bool) -> JSONString.Literal? {
        let run = JSONString.plainRun(buffer, from: position + 1)
        if run.end < buffer.count, buffer[run.end] == UInt8(ascii: "\"") {
            let range = position + 1..<run.end
            position = run.end + 1
            if run.high { high = true }
            return .plain(range, ascii: !run.high)
        }
        return JSONString.literal(bytes, at: &position)
    }

    /// Moves past `word` (`true`, `null`…) when it is next; whether it was.
    @inline(__always)
    static func takeWord(_ word: StaticString, _ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Bool {
        let count = word.utf8CodeUnitCount
        guard buffer.count - position >= count, memcmp(buffer.baseAddress! + position, word.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// Whether two key literals name the same key: equal bytes, or equal strings once decoded
    /// (two plain keys of different bytes never do).
    static func sameKey(_ a: Key, _ b: Key, _ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8]) -> Bool {
        // A literal's first byte is its quote: the second compared inline, where most keys differ.
        if a.range.count == b.range.count, a.range.count < 3 || buffer[a.range.lowerBound + 1] == buffer[b.range.lowerBound + 1],
           memcmp(buffer.baseAddress! + a.range.lowerBound, buffer.baseAddress! + b.range.lowerBound, a.range.count) == 0 {
            return true
        }
        if a.plain && b.plain { return false }
        var first = a.range.lowerBound, second = b.range.lowerBound
        return JSONString.read(bytes, at: &first) == JSONString.read(bytes, at: &second)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    @inline(__always)
    static func skipNumber(_ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Bool {
        @inline(__always) func digits() -> Int {
            let start = position
            while position < buffer.count, buffer[position] &- UInt8(ascii: "0") < 10 { position += 1 }
            return position - start
        }
        if position < buffer.count, buffer[position] == UInt8(ascii: "-") { position += 1 }
        let start = position
        let integer = digits()
        guard integer > 0, integer == 1 || buffer[start] != UInt8(ascii: "0") else { return false }
        if position < buffer.count, buffer[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { return false }
        }
        if position < buffer.count, buffer[position] == UInt8(ascii: "e") || buffer[position] == UInt8(ascii: "E") {
            position += 1
            if position < buffer.count, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    static func displayed(_ range: Range<Int>, in bytes: [UInt8]) -> String {
        var position = range.lowerBound
        let key = JSONString.read(bytes, at: &position) ?? ""
        return String(key.unicodeScalars.prefix(64).map { $0.value < 0x20 ? "?" : Character($0) })
    }
}
