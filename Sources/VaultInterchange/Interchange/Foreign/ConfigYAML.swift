import VaultModel

// MARK: - The block YAML that sops writes and ansible variables files use

/// A reader of block-style YAML: mappings, sequences (also `- key: value` items), plain, quoted
/// and block scalars (`|`, `|-`, `|+`, `>`), tags such as `!vault`, comments, one document.
/// Anchors, aliases, multi-line flow collections and multi-line plain scalars are refused with
/// the line that holds them. A one-line flow collection (`[a, b]`, `{}`) is kept as text (kind
/// `.string`, tag `!flow`), which the sops reader refuses when it is not empty.
/// Every problem is `.malformedInput("WHAT: line N: …")`.
struct ConfigYAML {
    private struct Line {
        var number: Int
        var indent: Int
        /// The text after the indentation, without its line break.
        var text: Substring
    }

    private var lines: [Line] = []
    /// Every physical line, for block scalars (which keep blank lines and deeper indentation).
    private var raw: [Substring] = []
    private var index = 0
    private var nodes = 0
    private let what: String

    /// The document's root; an empty document is an empty mapping.
    static func parse(_ bytes: [UInt8], what: String) throws(VaultError) -> ConfigNode {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedInput("\(what): not UTF-8 text") }
        guard !text.utf8.contains(0) else { throw .malformedInput("\(what): holds a NUL byte, which YAML text cannot") }
        var parser = ConfigYAML(what: what)
        try parser.split(text)
        guard parser.index < parser.lines.count else { return .mapping([]) }
        let root = try parser.node(indent: parser.lines[parser.index].indent, depth: 0)
        if parser.index < parser.lines.count { throw parser.failure(parser.lines[parser.index].number, "unexpected indentation") }
        return root
    }

    private init(what: String) { self.what = what }

    private func failure(_ line: Int, _ why: String) -> VaultError { .malformedInput("\(what): line \(line): \(why)") }

    /// Splits into lines, dropping blank lines, comments and the `---` marker from `lines`.
    private mutating func split(_ text: String) throws(VaultError) {
        raw = text.textLines().map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        for (offset, line) in raw.enumerated() {
            let indent = line.prefix { $0 == " " }.count
            let rest = line.dropFirst(indent)
            if rest.isEmpty || rest.hasPrefix("#") { continue }
            if rest.hasPrefix("\t") { throw failure(offset + 1, "a tab in the indentation") }
            if indent == 0 && (rest == "---" || rest.hasPrefix("--- ")) {
                guard lines.isEmpty else { throw failure(offset + 1, "a second YAML document; one file holds one") }
                continue
            }
            if indent == 0 && rest == "..." { break }
            if rest.hasPrefix("%") { throw failure(offset + 1, "YAML directives are not supported") }
            lines.append(Line(number: offset + 1, indent: indent, text: rest))
        }
    }

    private mutating func node(indent: Int, depth: Int) throws(VaultError) -> ConfigNode {
        let line = lines[index]
        guard depth < ConfigLimits.maxDepth else { throw failure(line.number, "nested deeper than \(ConfigLimits.maxDepth) levels") }
        if Self.isSequenceItem(line.text) { return try sequence(indent: indent, depth: depth) }
        if try Self.keySplit(line.text, line: line.number, what: what) != nil { return try mapping(indent: indent, depth: depth) }
        throw failure(line.number, "a value without a key where a mapping or a list was expected")
    }

    private static func isSequenceItem(_ text: Substring) -> Bool { text == "-" || text.hasPrefix("- ") }

    private mutating func count(_ line: Int) throws(VaultError) {
        nodes += 1
        guard nodes <= ConfigLimits.maxNodes else { throw .limitExceeded("\(what) holds more than \(ConfigLimits.maxNodes) values") }
    }

    private mutating func mapping(indent: Int, depth: Int) throws(VaultError) -> ConfigNode {
        var items: [(key: String, value: ConfigNode, line: Int)] = []
        var keys = Set<String>()
        while index < lines.count, lines[index].indent == indent, !Self.isSequenceItem(lines[index].text) {
            let line = lines[index]
            guard let (key, rest) = try Self.keySplit(line.text, line: line.number, what: what) else {
                throw failure(line.number, "a line without 'key:' inside a mapping (multi-line plain values are not supported)")
            }
            guard keys.insert(key).inserted else { throw failure(line.number, "the key '\(key)' is repeated") }
            try count(line.number)
            index += 1
            items.append((key, try value(after: rest, line: line.number, parentIndent: indent, depth: depth), line.number))
        }
        return .mapping(items)
    }

    private mutating func sequence(indent: Int, depth: Int) throws(VaultError) -> ConfigNode {
        var items: [ConfigNode] = []
        while index < lines.count, lines[index].indent == indent, Self.isSequenceItem(lines[index].text) {
            let line = lines[index]
            try count(line.number)
            let rest = line.text.dropFirst(1).drop { $0 == " " }
            let offset = line.text.count - rest.count
            if !rest.isEmpty, !rest.hasPrefix("#"), try Self.keySplit(rest, line: line.number, what: what) != nil {
                // `- key: value`: a mapping whose keys sit where this key starts.
                lines[index] = Line(number: line.number, indent: indent + offset, text: rest)
                items.append(try mapping(indent: indent + offset, depth: depth + 1))
            } else {
                index += 1
                items.append(try value(after: rest, line: line.number, parentIndent: indent, depth: depth))
            }
        }
        return .sequence(items)
    }

    /// The value after `key:` or `- ` (`rest`), which may be a nested node on the next lines.
    private mutating func value(after rest: Substring, line: Int, parentIndent: Int, depth: Int) throws(VaultError) -> ConfigNode {
        var rest = rest
        var tag: String?
        if rest.hasPrefix("&") || rest.hasPrefix("*") { throw failure(line, "YAML anchors and aliases are not supported") }
        if rest.hasPrefix("!") {
            let name = rest.prefix { $0 != " " }
            tag = String(name)
            rest = rest.dropFirst(name.count).drop { $0 == " " }
        }
        if rest.isEmpty || rest.hasPrefix("#") {
            if tag == nil, index < lines.count {
                let next = lines[index]
                if next.indent > parentIndent { return try node(indent: next.indent, depth: depth + 1) }
                if next.indent == parentIndent, Self.isSequenceItem(next.text) {
                    return try sequence(indent: parentIndent, depth: depth + 1)
                }
            }
            return .scalar(ConfigScalar(text: "", kind: tag == nil ? .null : .string, tag: tag, line: line))
        }
        if rest.hasPrefix("|") || rest.hasPrefix(">") {
            return .scalar(ConfigScalar(text: try block(header: rest, line: line, parentIndent: parentIndent), kind: .string, tag: tag, line: line))
        }
        var scalar = try Self.inlineScalar(rest, line: line, what: what)
        scalar.tag = scalar.tag ?? tag
        if tag != nil, scalar.kind != .string { scalar.kind = .string }
        return .scalar(scalar)
    }

    /// A block scalar's text: the physical lines after `line` more indented than the parent.
    private mutating func block(header: Substring, line: Int, parentIndent: Int) throws(VaultError) -> String {
        let folded = header.hasPrefix(">")
        let indicator = header.dropFirst().prefix { $0 != " " && $0 != "#" }
        guard indicator.allSatisfy({ $0 == "-" || $0 == "+" || ("1"..."9").contains($0) }), indicator.count <= 2 else {
            throw failure(line, "a block scalar header '\(header.prefix(8))' that is not |, |-, |+, > or one with an indentation digit")
        }
        var body: [Substring] = []
        var blockIndent: Int?
        if let digit = indicator.first(where: { ("1"..."9").contains($0) }) { blockIndent = parentIndent + Int(String(digit))! }
        var physical = line  // the 1-based number of the header line: raw[physical] is the next line
        while physical < raw.count {
            let text = raw[physical]
            let indent = text.prefix { $0 == " " }.count
            if indent == text.count { body.append(""); physical += 1; continue }
            if blockIndent == nil { blockIndent = indent }
            guard indent >= blockIndent!, indent > parentIndent else { break }
            body.append(text.dropFirst(blockIndent!))
            physical += 1
        }
        while index < lines.count, lines[index].number <= physical { index += 1 }
        var trailing = 0
        while body.last == "" { body.removeLast(); trailing += 1 }
        var text = folded ? Self.fold(body) : body.joined(separator: "\n")
        if indicator.contains("+") {
            text += String(repeating: "\n", count: body.isEmpty ? trailing : trailing + 1)
        } else if !indicator.contains("-"), !body.isEmpty {
            text += "\n"
        }
        return text
    }

    /// Folding of `>`: lines joined with a space, an empty line a line break; more-indented lines kept.
    private static func fold(_ lines: [Substring]) -> String {
        var text = ""
        var previousBlank = true
        for line in lines {
            if line.isEmpty { text += "\n"; previousBlank = true; continue }
            if !previousBlank && !line.hasPrefix(" ") { text += " " } else if !previousBlank { text += "\n" }
            text += line
            previousBlank = false
        }
        return text
    }

    // MARK: Keys and one-line scalars

    /// `(key, rest)` when `text` starts with a key: a quoted scalar or plain text, then ':' and a
    /// space or the end of the line; nil otherwise.
    static func keySplit(_ text: Substring, line: Int, what: String) throws(VaultError) -> (String, Substring)? {
        if text.hasPrefix("\"") || text.hasPrefix("'") {
            guard let (key, end) = try quoted(text, line: line, what: what) else { return nil }
            let after = text[end...].drop { $0 == " " }
            guard after.hasPrefix(":") else { return nil }
            let rest = after.dropFirst()
            guard rest.isEmpty || rest.hasPrefix(" ") else { return nil }
            return (key, rest.drop { $0 == " " })
        }
        if text.hasPrefix("? ") { throw .malformedInput("\(what): line \(line): complex YAML keys ('? ') are not supported") }
        if text.hasPrefix("[") || text.hasPrefix("{") { return nil }
        var search = text.startIndex
        while let colon = text[search...].firstIndex(of: ":") {
            let after = text.index(after: colon)
            if after == text.endIndex || text[after] == " " {
                let key = text[..<colon]
                if commentStart(key) != nil { return nil }
                return (String(key.reversed().drop { $0 == " " }.reversed()), text[after...].drop { $0 == " " })
            }
            search = after
        }
        return nil
    }

    /// A quoted scalar at the start of `text` and the index after its closing quote; nil when unterminated.
    private static func quoted(_ text: Substring, line: Int, what: String) throws(VaultError) -> (String, Substring.Index)? {
        let quote = text.first!
        var result = ""
        var position = text.index(after: text.startIndex)
        while position < text.endIndex {
            let character = text[position]
            if character == quote {
                let next = text.index(after: position)
                if quote == "'", next < text.endIndex, text[next] == "'" { result.append("'"); position = text.index(after: next); continue }
                return (result, next)
            }
            if quote == "\"", character == "\\" {
                let escape = text.index(after: position)
                guard escape < text.endIndex else { return nil }
                let (scalar, after) = try unescape(text, at: escape, line: line, what: what)
                result.unicodeScalars.append(scalar)
                position = after
                continue
            }
            result.append(character)
            position = text.index(after: position)
        }
        return nil
    }

    private static func unescape(_ text: Substring, at escape: Substring.Index, line: Int, what: String) throws(VaultError) -> (Unicode.Scalar, Substring.Index) {
        let simple: [Character: Unicode.Scalar] = ["0": "\0", "a": "\u{07}", "b": "\u{08}", "t": "\t", "n": "\n", "v": "\u{0B}", "f": "\u{0C}",
                                                   "r": "\r", "e": "\u{1B}", " ": " ", "\"": "\"", "/": "/", "\\": "\\", "N": "\u{85}",
                                                   "_": "\u{A0}", "L": "\u{2028}", "P": "\u{2029}"]
        let code = text[escape]
        if let scalar = simple[code] { return (scalar, text.index(after: escape)) }
        let digits = code == "x" ? 2 : code == "u" ? 4 : code == "U" ? 8 : 0
        let start = text.index(after: escape)
        guard digits > 0, let end = text.index(start, offsetBy: digits, limitedBy: text.endIndex),
              let value = UInt32(text[start..<end], radix: 16), let scalar = Unicode.Scalar(value) else {
            throw .malformedInput("\(what): line \(line): an unknown escape '\\\(code)' in a double-quoted string")
        }
        return (scalar, end)
    }

    /// A one-line scalar: quoted, a one-line flow collection, or plain (a comment after ' #' dropped).
    static func inlineScalar(_ rest: Substring, line: Int, what: String) throws(VaultError) -> ConfigScalar {
        if rest.hasPrefix("\"") || rest.hasPrefix("'") {
            guard let (text, end) = try quoted(rest, line: line, what: what) else {
                throw .malformedInput("\(what): line \(line): a quoted string that does not end on its line (multi-line strings are not supported)")
            }
            let after = rest[end...].drop { $0 == " " }
            guard after.isEmpty || after.hasPrefix("#") else { throw .malformedInput("\(what): line \(line): text after a quoted string") }
            return ConfigScalar(text: text, kind: .string, line: line)
        }
        var text = rest
        if let comment = Self.commentStart(text) { text = text[..<comment] }
        let plain = String(text.reversed().drop { $0 == " " }.reversed())
        if plain.hasPrefix("[") || plain.hasPrefix("{") {
            guard plain.hasSuffix("]") || plain.hasSuffix("}") else {
                throw .malformedInput("\(what): line \(line): a flow collection over several lines is not supported")
            }
            return ConfigScalar(text: plain, kind: .string, tag: "!flow", line: line)
        }
        return ConfigScalar(text: plain, kind: resolve(plain), line: line)
    }

    /// Where a comment (' #') starts in `text`, if one does.
    static func commentStart(_ text: Substring) -> Substring.Index? {
        var previous: Character = "x"
        for position in text.indices {
            if text[position] == "#", previous == " " { return text.index(before: position) }
            previous = text[position]
        }
        return nil
    }

    /// What go-yaml v3 resolves a plain scalar to (YAML 1.2 core schema, with 1.1's booleans' spellings it keeps).
    static func resolve(_ plain: String) -> ConfigScalar.Kind {
        switch plain {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE", "false", "False", "FALSE": return .bool
        case ".inf", ".Inf", ".INF", "+.inf", "-.inf", "+.Inf", "-.Inf", ".nan", ".NaN", ".NAN": return .float
        default: break
        }
        var body = Substring(plain)
        if body.hasPrefix("-") || body.hasPrefix("+") { body = body.dropFirst() }
        if !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isNumber || $0 == "_" }), body.first!.isNumber { return .int }
        if let double = Double(String(body.filter { $0 != "_" })), double.isFinite, body.first?.isNumber == true || body.first == "." {
            return .float
        }
        return .string
    }
}
