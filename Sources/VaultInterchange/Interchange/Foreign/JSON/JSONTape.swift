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
/// one-pass walk could only do by keeping what it passed — the tape. The two share the string
/// reader (`JSONString`: the tape scans a literal's plain run with its `plainRun` and hands any
/// literal with an escape to it); the tape takes the steps between values through a pointer.
struct JSONTape {
    static let maxDepth = JSONDocument.maxDepth

    enum Kind: UInt8 { case object, array, string, number, literalTrue, literalFalse, null }

    /// One value: its kind, where it lies in the input, and (for an object or array) the index of
    /// the node after its last descendant and the number of its members or elements. 16 bytes
    /// (offsets and indices in 32 bits: `maxInput`), a node per value of a document of millions.
    struct Node {
        var kind: Kind
        /// A string whose literal is ASCII without an escape: its text is its bytes, read without
        /// a second scan.
        var plain: Bool
        var count: Int32 = 0
        private var startOffset: UInt32
        private var endOffset: UInt32

        /// A node of a value at `start..<end` of an input of at most `maxInput` bytes (the tape
        /// checked its length: the offsets fit).
        init(kind: Kind, start: Int, end: Int, plain: Bool = false) {
            (self.kind, self.plain, startOffset, endOffset) = (kind, plain, UInt32(truncatingIfNeeded: start), UInt32(truncatingIfNeeded: end))
        }

        /// Where the value starts in the input.
        var start: Int { Int(startOffset) }
        /// Where it ends in the input; for an object or array, the node after its last descendant.
        var end: Int {
            get { Int(endOffset) }
            set { endOffset = UInt32(truncatingIfNeeded: newValue) }  // an offset or a node's index: below `maxInput`
        }
    }

    /// The largest document a tape holds (its offsets are 32 bits): 4 GiB, well above what an
    /// import reads.
    static let maxInput = Int(UInt32.max)

    /// Room for nodes, written by the scan through its pointer (no uniqueness or capacity check
    /// of an array per node) and grown by it when full; a stream's next tape reuses it once no
    /// tape holds it (`Scratch`). Uninitialized past the nodes written.
    final class NodeStorage {
        fileprivate(set) var base: UnsafeMutablePointer<Node>
        fileprivate(set) var capacity: Int

        init(capacity: Int) {
            self.capacity = max(capacity, 16)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        /// Room for at least `needed` nodes, the first `count` kept.
        fileprivate func grow(to needed: Int, keeping count: Int) {
            let larger = UnsafeMutablePointer<Node>.allocate(capacity: max(needed, capacity * 2))
            larger.update(from: base, count: count)
            base.deallocate()
            base = larger
            capacity = max(needed, capacity * 2)
        }
    }

    let bytes: [UInt8]
    /// Every value's node, in document order (0 is the root; `nodeAt`), and how many there are.
    private var storage: NodeStorage
    private var nodeCount = 0

    /// The node at `index` (an index the tape gave: within its nodes).
    @inline(__always)
    func nodeAt(_ index: Int) -> Node {
        precondition(index >= 0 && index < nodeCount, "a node of this tape")
        return storage.base[index]
    }

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
        // to a larger buffer (the copy held both at once), and the pages never written take no memory.
        storage = NodeStorage(capacity: bytes.count / 4 + 16)
        var position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        try scan(from: &position, depth: 0)
        guard position == bytes.count else { throw fail("more after the end of the document", at: position) }
    }

    /// The one value at `position` of a larger document whose bytes `bytes` hold (a window of
    /// them: `JSONStream`), `depth` containers deep in it; leaves `position` after the value and
    /// the whitespace after it. The same rules as a whole document's tape, the value's bytes
    /// checked as UTF-8 where they lie; the tape's nodes are the value's alone (its root is 0).
    ///
    /// Its nodes go into the storage of `scratch`'s (the nodes of the stream's previous tape,
    /// reused in place once no tape holds them), and the scan's working lists are `scratch`'s:
    /// no allocation per item. `scratch` shares the nodes after. Its errors name no line: the
    /// stream only asks whether the value is whole and valid (`JSONStream.tape`), and a cut
    /// value fails here at every refill.
    init(value bytes: [UInt8], at position: inout Int, depth: Int, what: String, reusing scratch: inout Scratch) throws(VaultError) {
        self.bytes = bytes
        self.what = what
        guard bytes.count <= Self.maxInput else { throw .limitExceeded("\(what) is larger than \(Self.maxInput) bytes") }
        var end = position
        // The last tape's storage when no tape holds it any more; else room for an item of an
        // export (a few dozen values).
        if scratch.storage == nil || !isKnownUniquelyReferenced(&scratch.storage!) { scratch.storage = NodeStorage(capacity: 64) }
        storage = scratch.storage!
        // Every byte outside a string is ASCII (the scan takes no other), and so is every
        // string's but those the scan marks: only then is the value checked as UTF-8.
        let high = try scan(from: &end, depth: depth, located: false, scratch: &scratch)
        let range = position..<end
        guard !high || bytes.withUnsafeBufferPointer({ JSONString.isUTF8(UnsafeBufferPointer(rebasing: $0[range])) }) else {
            throw .malformedInput("not \(what): the JSON is not UTF-8")
        }
        position = end
        // Room for a large value (a list of every folder) is not kept for the items after it.
        if storage.capacity > Self.sparedNodes { scratch.storage = nil }
    }

    /// The most nodes a stream keeps room for between its tapes.
    private static let sparedNodes = 4096

    /// What a stream keeps between the tapes of its values, so that their storage is reused:
    /// the last tape's nodes and the scan's working lists (offsets only, never a byte of the input).
    struct Scratch {
        fileprivate var storage: NodeStorage?
        fileprivate var lists: ScanLists?
    }

    /// An open container of a scan: its node, whether an object, and (for an object) where its keys start.
    fileprivate struct Open {
        var node: Int
        var object: Bool
        var keys: Int
        /// For an object: a bit for each plain key so far (`keyBit`: equal bytes, equal bits),
        /// and whether a key with an escape came (then every key is compared with the others).
        var keyBits: UInt64 = 0
        var escapedKey = false
    }

    /// The bit of a plain key's literal (`start..<end`, quotes included) in `Open.keyBits`: of its
    /// length and its first and last bytes, so that two keys of equal bytes have one bit.
    @inline(__always)
    private static func keyBit(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UInt64 {
        let length = end &- start
        let mix = length < 3 ? length : length &* 31 &+ Int(buffer[start &+ 1]) &* 7 &+ Int(buffer[end &- 2])
        return 1 << UInt64(mix & 63)
    }

    /// A key of an open object: its literal's range and whether it is plain (ASCII without an
    /// escape: its bytes are its text).
    fileprivate struct Key {
        var start: Int
        var end: Int
        var plain: Bool
        var range: Range<Int> { start..<end }
    }

    /// The scan's working lists, read and written through their pointers: the open containers
    /// (at most `maxDepth`) and the keys of the open objects (grown when full).
    fileprivate final class ScanLists {
        let open = UnsafeMutablePointer<Open>.allocate(capacity: JSONTape.maxDepth + 1)
        private(set) var keys: UnsafeMutablePointer<Key>
        private(set) var keyCapacity = 64

        init() { keys = .allocate(capacity: keyCapacity) }

        deinit {
            open.deallocate()
            keys.deallocate()
        }

        /// Twice the room for keys, the first `count` kept.
        func growKeys(keeping count: Int) {
            let larger = UnsafeMutablePointer<Key>.allocate(capacity: keyCapacity * 2)
            larger.update(from: keys, count: count)
            keys.deallocate()
            keys = larger
            keyCapacity *= 2
        }
    }

    func fail(_ why: String, at offset: Int) -> VaultError {
        .malformedInput("not \(what): line \(XMLReader.line(of: offset, in: bytes)): \(why)")
    }

    // MARK: The scan

    /// Where a scan stopped and why; `fail` makes it a message (it knows the document's name and lines).
    private struct ScanFailure: Error {
        let why: String
        let offset: Int
    }

    /// Scans one value from `position` (`depth` containers deep in its document) and the
    /// whitespace after it. Whether a string's literal held a byte of 0x80 or more (its text is
    /// UTF-8 only once checked).
    /// `located`: whether a failure's message names its line (found by counting the lines before it).
    @discardableResult
    private mutating func scan(from position: inout Int, depth: Int, located: Bool = true) throws(VaultError) -> Bool {
        var scratch = Scratch()
        return try scan(from: &position, depth: depth, located: located, scratch: &scratch)
    }

    /// `scan(from:depth:located:)` with the working lists of `scratch`.
    private mutating func scan(from position: inout Int, depth: Int, located: Bool, scratch: inout Scratch) throws(VaultError) -> Bool {
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
    private static func scan(_ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8], from position: inout Int, depth: Int,
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
    private static func skipWhitespace(_ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) {
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
    private static func literal(_ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8], at position: inout Int, high: inout Bool) -> JSONString.Literal? {
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
    private static func takeWord(_ word: StaticString, _ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Bool {
        let count = word.utf8CodeUnitCount
        guard buffer.count - position >= count, memcmp(buffer.baseAddress! + position, word.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// Whether two key literals name the same key: equal bytes, or equal strings once decoded
    /// (two plain keys of different bytes never do).
    private static func sameKey(_ a: Key, _ b: Key, _ buffer: UnsafeBufferPointer<UInt8>, _ bytes: [UInt8]) -> Bool {
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
    private static func skipNumber(_ buffer: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Bool {
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

    private static func displayed(_ range: Range<Int>, in bytes: [UInt8]) -> String {
        var position = range.lowerBound
        let key = JSONString.read(bytes, at: &position) ?? ""
        return String(key.unicodeScalars.prefix(64).map { $0.value < 0x20 ? "?" : Character($0) })
    }
}
