import FoundationEssentials
import VaultModel

// MARK: - JSON with every key once

/// Decodes the JSON imports, refusing an object that names one key twice.
///
/// JSONDecoder keeps one of two equal keys and drops the other without a word, so
/// `{"value": "a", "value": "b"}` would import a value nobody can see in the file. A scan over
/// the bytes first finds such a key: one pass, an explicit stack instead of recursion, at most
/// `maxDepth` levels of nesting. Keys are compared as Swift strings, as the decoder compares
/// them (escapes decoded, canonically equivalent spellings equal).
enum JSONDocument {
    /// The deepest nesting of objects and arrays read.
    static let maxDepth = 512

    /// `T` decoded from `bytes`; `what` names the document in messages ("a Bitwarden JSON export").
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], what: String) throws(VaultError) -> T {
        var scanner = KeyScanner(bytes: bytes)
        let outcome = scanner.scan()
        switch outcome {
        case .repeated(let key, let line, let path):
            throw .malformedInput("not \(what): the key '\(displayed(key))' appears twice in one object, on line \(line) (\(path)); "
                                  + "refusing to guess which of the two was meant")
        case .tooDeep(let line):
            throw .malformedInput("not \(what): line \(line) nests objects and arrays more than \(maxDepth) levels deep")
        case .unique, .unreadable:
            break
        }
        let value: T
        do {
            value = try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw .malformedInput("not \(what): \(described(error, scan: outcome))")
        }
        // The decoder read what the scan could not follow (a trailing comma, another encoding
        // than UTF-8): refused, since a repeated key in it would go unnoticed.
        guard case .unique = outcome else {
            let line = if case .unreadable(let line) = outcome { " on line \(line)" } else { "" }
            throw .malformedInput("not \(what): the JSON\(line) is not strict JSON in UTF-8 (a trailing comma? another encoding?)")
        }
        return value
    }

    /// A decoder's error in words, without Swift's type names: what is wrong and where
    /// (`entries[3].value: expected a string`). JSON the decoder cannot read at all is placed
    /// by the scan's line, since the decoder does not say where it stopped.
    static func described(_ error: any Error, scan outcome: Outcome) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath, end: " has"))no key '\(displayed(key.stringValue))'"
        case .typeMismatch(let type, let context):
            return "\(place(context.codingPath, end: ":")) expected \(jsonKind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(place(context.codingPath, end: ":")) expected \(jsonKind(of: type)), found null"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            if case .unreadable(let line) = outcome { return "not valid JSON (line \(line))" }
            return "not valid JSON"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath, end: ":")) \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// `entries[2].value` followed by `end`, or the top level's words when `path` is empty.
    private static func place(_ path: [any CodingKey], end: String) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + displayed(key.stringValue) }
        }
        if text.isEmpty { return end == ":" ? "the top level:" : "the top level\(end) " }
        return end == ":" ? text + ":" : text + end + " "
    }

    /// What JSON calls a value of `type`: "a string", "a number", "an object"...
    ///
    /// By the type itself, not its printed name: a name says nothing of a type (a struct named
    /// `ArrayOfThings` is an object; `Int16`, `Set` were missed by a list of names).
    static func jsonKind(of type: Any.Type) -> String {
        if type == String.self || type == Substring.self || type == Character.self { return "a string" }
        if type == Bool.self { return "true or false" }
        if type is any BinaryInteger.Type || type is any BinaryFloatingPoint.Type { return "a number" }
        // Array, ContiguousArray, Set...: what JSONDecoder reads from an array (a dictionary is
        // read from an object and is not one of these).
        if type is any ExpressibleByArrayLiteral.Type { return "an array" }
        return "an object"
    }

    /// A key as a message shows it: control characters escaped, at most 64 characters.
    private static func displayed(_ key: String) -> String {
        var shown = ""
        for scalar in key.unicodeScalars.prefix(64) {
            shown += scalar.value < 0x20 || scalar.value == 0x7F ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return key.unicodeScalars.count > 64 ? shown + "…" : shown
    }

    // MARK: The scan

    /// What the scan found.
    enum Outcome: Equatable {
        /// Every object names each of its keys once.
        case unique
        /// `key` repeats in one object on `line` (1-based); `path` leads to that object.
        case repeated(key: String, line: Int, path: String)
        /// Objects and arrays nest deeper than `maxDepth` on `line`.
        case tooDeep(line: Int)
        /// Not UTF-8 JSON the scan can follow, from `line` on (the decoder says what is wrong with it).
        case unreadable(line: Int)
    }

    /// A single pass over the bytes that remembers each open object's keys.
    struct KeyScanner {
        private let bytes: [UInt8]
        private var position = 0
        private var line = 1
        /// The open objects and arrays, outermost first.
        private var stack: [Frame] = []

        private enum Frame {
            /// An object, the keys seen so far, and the key whose value is being read.
            case object(keys: Set<String>, current: String)
            /// An array and the index of the element being read.
            case array(index: Int)
        }

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// Scans the whole document.
        mutating func scan() -> Outcome {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            var expectingKey = false
            while true {
                skipWhitespace()
                if expectingKey {
                    guard let key = readString() else { return .unreadable(line: line) }
                    guard case .object(var keys, _) = stack.removeLast() else { return .unreadable(line: line) }
                    let repeated = !keys.insert(key).inserted
                    stack.append(.object(keys: keys, current: key))
                    if repeated { return .repeated(key: key, line: line, path: path) }
                    skipWhitespace()
                    guard next() == UInt8(ascii: ":") else { return .unreadable(line: line) }
                    expectingKey = false
                    continue
                }
                // A value.
                switch peek() {
                case UInt8(ascii: "{")?:
                    position += 1
                    guard stack.count < JSONDocument.maxDepth else { return .tooDeep(line: line) }
                    skipWhitespace()
                    if peek() == UInt8(ascii: "}") { position += 1 } else {
                        stack.append(.object(keys: [], current: ""))
                        expectingKey = true
                        continue
                    }
                case UInt8(ascii: "[")?:
                    position += 1
                    guard stack.count < JSONDocument.maxDepth else { return .tooDeep(line: line) }
                    skipWhitespace()
                    if peek() == UInt8(ascii: "]") { position += 1 } else {
                        stack.append(.array(index: 0))
                        continue
                    }
                case UInt8(ascii: "\"")?:
                    guard skipString() else { return .unreadable(line: line) }
                case _?:
                    guard skipScalar() else { return .unreadable(line: line) }
                case nil:
                    return .unreadable(line: line)
                }
                // After a value: a comma, the end of its container, or the end of the document.
                while true {
                    skipWhitespace()
                    guard let top = stack.last else { return position == bytes.count ? .unique : .unreadable(line: line) }
                    switch (top, next()) {
                    case (.object, UInt8(ascii: ",")?):
                        expectingKey = true
                    case (.array(let index), UInt8(ascii: ",")?):
                        stack[stack.count - 1] = .array(index: index + 1)
                    case (.object, UInt8(ascii: "}")?), (.array, UInt8(ascii: "]")?):
                        stack.removeLast()
                        continue
                    default:
                        return .unreadable(line: line)
                    }
                    break
                }
            }
        }

        /// Where the innermost open object lies: `entries[2].fields`, or `the top level`.
        private var path: String {
            var text = ""
            for frame in stack.dropLast() {
                switch frame {
                case .object(_, let key): text += (text.isEmpty ? "" : ".") + JSONDocument.displayed(key)
                case .array(let index): text += "[\(index)]"
                }
            }
            return text.isEmpty ? "the top level" : "at " + text
        }

        private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

        private mutating func next() -> UInt8? {
            defer { position += 1 }
            return peek()
        }

        private mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                if byte == 0x0A { line += 1 }
                position += 1
            }
        }

        /// Skips a number, `true`, `false` or `null` (the decoder checks their spelling).
        private mutating func skipScalar() -> Bool {
            let start = position
            while let byte = peek(), byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) {
                position += 1
            }
            return position > start
        }

        /// Skips a string without decoding it (values can be large).
        private mutating func skipString() -> Bool {
            position += 1
            while let byte = next() {
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"): position += 1
                case ..<0x20: return false
                default: continue
                }
            }
            return false
        }

        /// Reads and decodes a string (a key): escapes resolved, surrogate pairs joined (`JSONString`).
        private mutating func readString() -> String? {
            JSONString.read(bytes, at: &position)
        }
    }
}
