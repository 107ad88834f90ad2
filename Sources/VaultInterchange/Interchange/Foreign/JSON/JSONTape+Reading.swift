#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - JSONTape: reading the tape

extension JSONTape {
    /// The root value.
    var root: Int { 0 }

    func kind(_ node: Int) -> Kind { nodeAt(node).kind }

    /// The node after `node` and its descendants.
    func next(after node: Int) -> Int {
        let kind = nodeAt(node).kind
        return kind == .object || kind == .array ? nodeAt(node).end : node + 1
    }

    /// The members of an object, in order: each key decoded and its value's node.
    func members(_ node: Int) -> [(key: String, value: Int)] {
        guard nodeAt(node).kind == .object else { return [] }
        var result: [(key: String, value: Int)] = []
        var child = node + 1
        for _ in 0..<Int(nodeAt(node).count) / 2 {
            var position = nodeAt(child).start
            let key = JSONString.read(bytes, at: &position) ?? ""
            result.append((key, child + 1))
            child = next(after: child + 1)
        }
        return result
    }

    /// The value of `key` in the object `node`, if it has one.
    func member(_ node: Int?, _ key: StaticString) -> Int? {
        guard let node, nodeAt(node).kind == .object else { return nil }
        var child = node + 1
        let length = key.utf8CodeUnitCount
        return bytes.withUnsafeBufferPointer { buffer -> Int? in
            for _ in 0..<Int(nodeAt(node).count) / 2 {
                let literal = nodeAt(child)
                // The first byte compared inline: most keys of one length differ there.
                if literal.end - literal.start == length + 2, length == 0 || buffer[literal.start + 1] == key.utf8Start[0],
                   memcmp(buffer.baseAddress! + literal.start + 1, key.utf8Start, length) == 0 {
                    return child + 1
                }
                child = next(after: child + 1)
            }
            return nil
        }
    }

    /// Each member of the object `node` in order (none when it is not an object): its key's literal
    /// as written, between the quotes (`JSONTape.matches` compares it as `member` does: an escaped
    /// key names no member), and its value's node. One pass for a reader that wants several
    /// members of one object, where `member` would walk the keys again for each.
    func forEachMember(_ node: Int?, _ body: (_ key: UnsafeBufferPointer<UInt8>, _ value: Int) -> Void) {
        guard let node, nodeAt(node).kind == .object else { return }
        bytes.withUnsafeBufferPointer { buffer in
            var child = node + 1
            for _ in 0..<Int(nodeAt(node).count) / 2 {
                let literal = nodeAt(child)
                body(UnsafeBufferPointer(rebasing: buffer[literal.start + 1..<literal.end - 1]), child + 1)
                child = next(after: child + 1)
            }
        }
    }

    /// Whether a key's literal (`forEachMember`) is `name`, byte for byte.
    @inline(__always)
    static func matches(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && (key.isEmpty || same(key.baseAddress!, name.utf8Start, key.count))
    }

    /// Whether `count` bytes at `a` and at `b` are equal: compared here, a byte at a time, for the
    /// short keys and words a reader looks for (a call to `memcmp` costs more than the compare).
    @inline(__always)
    static func same(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var index = 0
        while index < count {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    /// Whether the string at `node` is `word` once decoded (`string(node) == word`), without
    /// making a `String` of a plain one (ASCII without an escape: its bytes are its text).
    func isString(_ node: Int?, _ word: StaticString) -> Bool {
        guard let node, nodeAt(node).kind == .string else { return false }
        let literal = nodeAt(node)
        guard literal.plain else { return string(node) == word.description }
        let count = literal.end - literal.start - 2
        guard count == word.utf8CodeUnitCount else { return false }
        return bytes.withUnsafeBufferPointer { buffer in count == 0 || Self.same(buffer.baseAddress! + literal.start + 1, word.utf8Start, count) }
    }

    /// The index of the first of `words` that the string at `node` is once decoded, as
    /// `isString` compares; nil when it is none of them or not a string.
    func whichString(_ node: Int?, _ words: [StaticString]) -> Int? {
        guard let node, nodeAt(node).kind == .string else { return nil }
        let literal = nodeAt(node)
        guard literal.plain else {
            guard let text = string(node) else { return nil }
            return words.firstIndex { text == $0.description }
        }
        let count = literal.end - literal.start - 2
        return bytes.withUnsafeBufferPointer { buffer in
            words.firstIndex { word in
                word.utf8CodeUnitCount == count && (count == 0 || Self.same(buffer.baseAddress! + literal.start + 1, word.utf8Start, count))
            }
        }
    }

    /// Whether `node` is a string (of any text).
    func isString(_ node: Int?) -> Bool {
        guard let node else { return false }
        return nodeAt(node).kind == .string
    }

    /// The number of elements of the array `node` (0 when it is not an array).
    func elementCount(_ node: Int?) -> Int {
        guard let node, nodeAt(node).kind == .array else { return 0 }
        return Int(nodeAt(node).count)
    }

    /// The elements of the array `node` (none when it is not an array).
    func elements(_ node: Int?) -> [Int] {
        guard let node, nodeAt(node).kind == .array else { return [] }
        var result: [Int] = []
        result.reserveCapacity(Int(nodeAt(node).count))
        var child = node + 1
        for _ in 0..<Int(nodeAt(node).count) {
            result.append(child)
            child = next(after: child)
        }
        return result
    }

    /// Each element of the array `node` in order (none when it is not an array): `elements`
    /// without the array of them.
    func forEachElement(_ node: Int?, _ body: (Int) -> Void) {
        guard let node, nodeAt(node).kind == .array else { return }
        var child = node + 1
        for _ in 0..<Int(nodeAt(node).count) {
            body(child)
            child = next(after: child)
        }
    }

    /// The string at `node`, decoded; nil when it is not a string.
    func string(_ node: Int?) -> String? {
        guard let node else { return nil }
        let literal = nodeAt(node)
        guard literal.kind == .string else { return nil }
        if literal.plain {
            return bytes.withUnsafeBufferPointer {
                String(decoding: UnsafeBufferPointer(start: $0.baseAddress! + literal.start + 1, count: literal.end - literal.start - 2), as: UTF8.self)
            }
        }
        var position = literal.start
        return JSONString.read(bytes, at: &position)
    }

    /// The string at `node` as its UTF-8 bytes.
    func stringBytes(_ node: Int?) -> [UInt8]? {
        guard let node else { return nil }
        let literal = nodeAt(node)
        guard literal.kind == .string else { return nil }
        if literal.plain {
            // Copied straight from where it lies (an array of a slice goes through a generic copy).
            let count = literal.end - literal.start - 2
            return bytes.withUnsafeBufferPointer { buffer in
                [UInt8](unsafeUninitializedCapacity: count) { target, initialized in
                    if count > 0 { target.baseAddress!.update(from: buffer.baseAddress! + literal.start + 1, count: count) }
                    initialized = count
                }
            }
        }
        var position = literal.start
        return JSONString.readBytes(bytes, at: &position)
    }

    /// The bytes of the string at `node` when it is plain (ASCII without an escape: its bytes are
    /// its text), for `body` to compare; nil when it is not a plain string.
    func withPlainBytes<T>(_ node: Int?, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        guard let node else { return nil }
        let literal = nodeAt(node)
        guard literal.kind == .string, literal.plain else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            body(UnsafeBufferPointer(start: buffer.baseAddress! + literal.start + 1, count: literal.end - literal.start - 2))
        }
    }

    /// A number, a string, true or false as text (`null` and containers: nil).
    func text(_ node: Int?) -> String? {
        guard let node else { return nil }
        switch nodeAt(node).kind {
        case .string: return string(node)
        case .number: return String(decoding: bytes[nodeAt(node).start..<nodeAt(node).end], as: UTF8.self)
        case .literalTrue: return "true"
        case .literalFalse: return "false"
        case .null, .object, .array: return nil
        }
    }

    /// An integer number (a fraction dropped), or nil.
    func integer(_ node: Int?) -> Int64? {
        guard let node, nodeAt(node).kind == .number else { return nil }
        // An integer of at most 18 digits (every time and flag of an export) read where it lies
        // (the scan checked the number's bytes lie in the input).
        let start = nodeAt(node).start, end = nodeAt(node).end
        let simple: Int64? = bytes.withUnsafeBufferPointer { buffer in
            var index = start
            let negative = buffer[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard end - index <= 18 else { return nil }
            var value: Int64 = 0
            while index < end {
                let digit = buffer[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value &* 10 &+ Int64(digit)
                index += 1
            }
            return negative ? -value : value
        }
        if let simple { return simple }
        guard let text = text(node) else { return nil }
        if let exact = Int64(text) { return exact }
        return Double(text).flatMap { $0.isFinite && abs($0) < 9e18 ? Int64($0) : nil }
    }

    /// Whether `node` is `true`, or a number other than 0 (Enpass writes flags as 0 and 1).
    func flag(_ node: Int?) -> Bool {
        guard let node else { return false }
        let value = nodeAt(node)
        switch value.kind {
        case .literalTrue: return true
        case .number where value.end - value.start == 1:
            // One digit (0 or 1, as Enpass writes them).
            return bytes.withUnsafeBufferPointer { $0[value.start] != UInt8(ascii: "0") }
        case .number: return integer(node).map { $0 != 0 } ?? false
        default: return false
        }
    }
}
