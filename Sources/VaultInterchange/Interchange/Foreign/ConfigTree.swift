import VaultModel

// MARK: - A configuration file as a tree (sops, ansible)

/// A YAML or JSON document in source order, as the sops and ansible-vault readers need it:
/// mappings keep their keys' order (sops' MAC is over the values in that order).
indirect enum ConfigNode: Sendable {
    /// Keys and values in source order; `line` is the key's line (1-based) for messages.
    case mapping([(key: String, value: ConfigNode, line: Int)])
    case sequence([ConfigNode])
    case scalar(ConfigScalar)
}

/// One scalar: its text as written (quotes and escapes resolved), what it resolves to, its tag.
struct ConfigScalar: Sendable, Equatable {
    /// What the scalar means, as go-yaml v3 (sops) or a JSON decoder resolves it.
    enum Kind: Sendable, Equatable {
        case string, int, float, bool, null
    }
    var text: String
    var kind: Kind
    /// A YAML tag such as `!vault`; nil when there is none.
    var tag: String? = nil
    var line: Int
}

/// The limits of a configuration tree: nesting and the number of nodes.
enum ConfigLimits {
    /// Deeper nesting is refused (a stack-exhaustion guard; real files nest a few levels).
    static let maxDepth = 64
    /// The most nodes one file may hold.
    static let maxNodes = VaultLimits.maxEntries
}

// MARK: - JSON, in source order

/// An ordered JSON reader (RFC 8259) over bytes, with the string literals read by `JSONString`.
enum OrderedJSON {
    /// The document's root; `.malformedInput` naming the line of the first problem.
    static func parse(_ bytes: [UInt8], what: String) throws(VaultError) -> ConfigNode {
        var parser = Parser(bytes: bytes, what: what)
        JSONBytes.skipWhitespace(in: bytes, at: &parser.position)
        let root = try parser.value(depth: 0)
        JSONBytes.skipWhitespace(in: bytes, at: &parser.position)
        guard parser.position == bytes.count else { throw parser.failure("text after the end of the document") }
        return root
    }

    private struct Parser {
        let bytes: [UInt8]
        let what: String
        var position = 0
        var nodes = 0
        /// Line breaks counted so far, up to `countedTo`: the position only moves on, so counting on
        /// from the last call keeps a document at one pass (counting from the start at every value
        /// was quadratic: seconds for a 30 KB file).
        private var countedLine = 1
        private var countedTo = 0

        init(bytes: [UInt8], what: String) {
            self.bytes = bytes
            self.what = what
        }

        /// The 1-based line of `position`.
        mutating func line() -> Int {
            let end = min(position, bytes.count)
            while countedTo < end {
                if bytes[countedTo] == 0x0A { countedLine += 1 }
                countedTo += 1
            }
            return countedLine
        }

        mutating func failure(_ why: String) -> VaultError { .malformedInput("\(what): line \(line()): \(why)") }

        mutating func value(depth: Int) throws(VaultError) -> ConfigNode {
            guard depth < ConfigLimits.maxDepth else { throw failure("nested deeper than \(ConfigLimits.maxDepth) levels") }
            nodes += 1
            guard nodes <= ConfigLimits.maxNodes else { throw VaultError.limitExceeded("\(what) holds more than \(ConfigLimits.maxNodes) values") }
            guard position < bytes.count else { throw failure("the document ends where a value should be") }
            let here = line()
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var items: [(key: String, value: ConfigNode, line: Int)] = []
                var keys = Set<String>()
                JSONBytes.skipWhitespace(in: bytes, at: &position)
                if JSONBytes.take(UInt8(ascii: "}"), in: bytes, at: &position) { return .mapping(items) }
                repeat {
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    let keyLine = line()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\""),
                          let key = JSONString.read(bytes, at: &position) else { throw failure("a key is not a valid string") }
                    guard keys.insert(key).inserted else { throw failure("the key \"\(key)\" is repeated") }
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    guard JSONBytes.take(UInt8(ascii: ":"), in: bytes, at: &position) else { throw failure("':' is missing after a key") }
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    items.append((key, try value(depth: depth + 1), keyLine))
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                } while JSONBytes.take(UInt8(ascii: ","), in: bytes, at: &position)
                guard JSONBytes.take(UInt8(ascii: "}"), in: bytes, at: &position) else { throw failure("'}' or ',' expected") }
                return .mapping(items)
            case UInt8(ascii: "["):
                position += 1
                var items: [ConfigNode] = []
                JSONBytes.skipWhitespace(in: bytes, at: &position)
                if JSONBytes.take(UInt8(ascii: "]"), in: bytes, at: &position) { return .sequence(items) }
                repeat {
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                    items.append(try value(depth: depth + 1))
                    JSONBytes.skipWhitespace(in: bytes, at: &position)
                } while JSONBytes.take(UInt8(ascii: ","), in: bytes, at: &position)
                guard JSONBytes.take(UInt8(ascii: "]"), in: bytes, at: &position) else { throw failure("']' or ',' expected") }
                return .sequence(items)
            case UInt8(ascii: "\""):
                guard let text = JSONString.read(bytes, at: &position) else { throw failure("a string is not valid (a control character, a bad escape or not UTF-8)") }
                return .scalar(ConfigScalar(text: text, kind: .string, line: here))
            default:
                let start = position
                while position < bytes.count, !Set<UInt8>([0x20, 0x0A, 0x0D, 0x09, 0x2C, 0x5D, 0x7D]).contains(bytes[position]) { position += 1 }
                let word = String(decoding: bytes[start..<position], as: UTF8.self)
                switch word {
                case "true", "false": return .scalar(ConfigScalar(text: word, kind: .bool, line: here))
                case "null": return .scalar(ConfigScalar(text: word, kind: .null, line: here))
                default:
                    guard let kind = Self.numberKind(word) else { throw failure("'\(word.prefix(20))' is not a JSON value") }
                    return .scalar(ConfigScalar(text: word, kind: kind, line: here))
                }
            }
        }

        /// `.int` or `.float` when `word` is a JSON number (RFC 8259 §6), else nil.
        static func numberKind(_ word: String) -> ConfigScalar.Kind? {
            var bytes = Array(word.utf8)[...]
            if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            func digits(_ slice: inout ArraySlice<UInt8>) -> Int {
                let count = slice.prefix { (0x30...0x39).contains($0) }.count
                slice = slice.dropFirst(count)
                return count
            }
            let leading = bytes.first
            let integer = digits(&bytes)
            guard integer > 0, !(leading == 0x30 && integer > 1) else { return nil }
            var isFloat = false
            if bytes.first == UInt8(ascii: ".") {
                bytes = bytes.dropFirst()
                guard digits(&bytes) > 0 else { return nil }
                isFloat = true
            }
            if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
                bytes = bytes.dropFirst()
                if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
                guard digits(&bytes) > 0 else { return nil }
                isFloat = true
            }
            return bytes.isEmpty ? (isFloat ? .float : .int) : nil
        }
    }
}
