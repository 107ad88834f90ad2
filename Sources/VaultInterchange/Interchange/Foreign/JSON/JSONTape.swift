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
        func grow(to needed: Int, keeping count: Int) {
            let larger = UnsafeMutablePointer<Node>.allocate(capacity: max(needed, capacity * 2))
            larger.update(from: base, count: count)
            base.deallocate()
            base = larger
            capacity = max(needed, capacity * 2)
        }
    }

    let bytes: [UInt8]
    /// Every value's node, in document order (0 is the root; `nodeAt`), and how many there are.
    var storage: NodeStorage
    var nodeCount = 0

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
        var storage: NodeStorage?
        var lists: ScanLists?
    }

    /// An open container of a scan: its node, whether an object, and (for an object) where its keys start.
    struct Open {
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
    static func keyBit(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UInt64 {
        let length = end &- start
        let mix = length < 3 ? length : length &* 31 &+ Int(buffer[start &+ 1]) &* 7 &+ Int(buffer[end &- 2])
        return 1 << UInt64(mix & 63)
    }

    /// A key of an open object: its literal's range and whether it is plain (ASCII without an
    /// escape: its bytes are its text).
    struct Key {
        var start: Int
        var end: Int
        var plain: Bool
        var range: Range<Int> { start..<end }
    }

    /// The scan's working lists, read and written through their pointers: the open containers
    /// (at most `maxDepth`) and the keys of the open objects (grown when full).
    final class ScanLists {
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
}
