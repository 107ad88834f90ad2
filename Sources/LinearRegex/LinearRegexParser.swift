// MARK: - Parsing a pattern

/// A recursive-descent parser for `LinearRegex`, nesting at most `LinearRegex.maxNesting` groups.
struct RegexParser {
    typealias SyntaxError = LinearRegex.SyntaxError

    /// The options a group can turn on or off: `(?i)`, `(?s)`, `(?m)`.
    private struct Options {
        var ignoringCase = false
        var dotMatchesNewline = false
        var anchorsMatchLines = false
    }

    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var nesting = 0

    init(_ pattern: String) { scalars = Array(pattern.unicodeScalars) }

    /// The whole pattern.
    mutating func parse(ignoringCase: Bool) throws(SyntaxError) -> RegexNode {
        var options = Options()
        options.ignoringCase = ignoringCase
        let node = try parseAlternatives(options)
        if position < scalars.count { throw error("unbalanced ')'") }
        return node
    }

    private func error(_ text: String) -> SyntaxError {
        SyntaxError(description: position < scalars.count ? "\(text) at offset \(position)" : text)
    }

    private func unsupported(_ feature: String) -> SyntaxError {
        error("\(feature) are not supported: the expression must run in time proportional to the text")
    }

    private var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        guard peek == scalar else { return false }
        position += 1
        return true
    }

    // MARK: Structure

    /// `a|b|c`, up to a `)` or the end; an `(?i)` inside applies to the rest of the group.
    private mutating func parseAlternatives(_ outer: Options) throws(SyntaxError) -> RegexNode {
        var options = outer
        var alternatives: [RegexNode] = []
        var sequence: [RegexNode] = []
        while let scalar = peek, scalar != ")" {
            if take("|") {
                alternatives.append(.sequence(sequence))
                sequence = []
                continue
            }
            guard let atom = try parseAtom(&options) else { continue }
            sequence.append(try parseQuantifier(atom))
        }
        alternatives.append(.sequence(sequence))
        return alternatives.count == 1 ? alternatives[0] : .alternatives(alternatives)
    }

    /// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` after an atom; a lazy `?` after them changes nothing
    /// here (only whether there is a match counts). One quantifier per atom, as in Swift.
    private mutating func parseQuantifier(_ atom: RegexNode) throws(SyntaxError) -> RegexNode {
        let bounds: (Int, Int?)
        if take("*") { bounds = (0, nil) }
        else if take("+") { bounds = (1, nil) }
        else if take("?") { bounds = (0, 1) }
        else if peek == "{", let counted = try parseCount() { bounds = counted }
        else { return atom }
        if case .assertion = atom { throw error("a quantifier cannot follow an anchor") }
        if take("+") { throw unsupported("possessive quantifiers") }
        _ = take("?")
        if let next = peek, next == "*" || next == "+" || next == "?" || (next == "{" && isCount()) {
            throw error("a quantifier cannot follow another")
        }
        return .repeated(atom, min: bounds.0, max: bounds.1)
    }

    /// Whether a `{` here begins a count (without reading it).
    private mutating func isCount() -> Bool {
        let start = position
        defer { position = start }
        return (try? parseCount()) != nil
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}`; nil (and nothing read) when the brace is a literal `{`.
    private mutating func parseCount() throws(SyntaxError) -> (Int, Int?)? {
        let start = position
        position += 1
        func number() -> Int? {
            var value: Int?
            while let scalar = peek, ("0"..."9").contains(scalar) {
                value = min((value ?? 0) * 10 + Int(scalar.value - 48), Int(UInt32.max))
                position += 1
            }
            return value
        }
        let low = number()
        var high = low
        let comma = take(",")
        if comma { high = number() }
        guard take("}"), low != nil || (comma && high != nil) else { position = start; return nil }
        let lower = low ?? 0
        guard max(lower, high ?? lower) <= LinearRegex.maxRepetition else {
            throw error("a repetition count is at most \(LinearRegex.maxRepetition)")
        }
        if let high, high < lower { throw error("{\(lower),\(high)}: the second count is smaller than the first") }
        return (lower, high)
    }

    /// One atom; nil for an option setting such as `(?i)`, which only changes `options`.
    private mutating func parseAtom(_ options: inout Options) throws(SyntaxError) -> RegexNode? {
        let scalar = scalars[position]
        position += 1
        switch scalar {
        case ".": return .any(newline: options.dotMatchesNewline)
        case "^": return .assertion(options.anchorsMatchLines ? .startOfLine : .startOfText)
        case "$": return .assertion(options.anchorsMatchLines ? .endOfLine : .endOfText)
        case "[": return .set(try parseBracket(options))
        case "(": return try parseGroup(&options)
        case "\\": return try parseEscape(options)
        case "*", "+", "?":
            position -= 1
            throw error("'\(scalar)' has nothing to repeat")
        default: return .scalar(scalar, ignoringCase: options.ignoringCase)
        }
    }

    /// After `(`: a group, or `(?flags)`, or a construct this engine refuses.
    private mutating func parseGroup(_ options: inout Options) throws(SyntaxError) -> RegexNode? {
        var inner = options
        if take("?") {
            switch peek {
            case ":": position += 1
            case "=", "!": throw unsupported("lookahead assertions")
            case ">": throw unsupported("atomic groups")
            case "<" where position + 1 < scalars.count && (scalars[position + 1] == "=" || scalars[position + 1] == "!"):
                throw unsupported("lookbehind assertions")
            case "<", "'", "P":
                // A named group: (?<name>…), (?'name'…), (?P<name>…).
                if take("P") && peek != "<" { throw unsupported("backreferences and recursion") }
                let close: Unicode.Scalar
                if take("'") { close = "'" } else { position += 1; close = ">" }
                let nameStart = position
                while let scalar = peek, scalar != close { position += 1 }
                guard position > nameStart, take(close) else { throw error("unterminated group name") }
            default:
                // Options: (?i), (?-i), (?is:…), (?^…) is not Swift's; i, s, m are known.
                var on = true
                while let scalar = peek, scalar != ")" && scalar != ":" {
                    position += 1
                    switch scalar {
                    case "-": on = false
                    case "i": inner.ignoringCase = on
                    case "s": inner.dotMatchesNewline = on
                    case "m": inner.anchorsMatchLines = on
                    default: position -= 1; throw unsupported("the option '\(scalar)' and other group kinds")
                    }
                }
                if take(")") { options = inner; return nil }
                guard take(":") else { throw error("unterminated group") }
            }
        }
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= LinearRegex.maxNesting else { throw error("groups nest at most \(LinearRegex.maxNesting) deep") }
        let node = try parseAlternatives(inner)
        guard take(")") else { throw error("missing ')'") }
        return node
    }

    // MARK: Escapes and classes

    /// After `\` outside brackets.
    private mutating func parseEscape(_ options: Options) throws(SyntaxError) -> RegexNode {
        guard let scalar = peek else { throw error("a trailing backslash") }
        switch scalar {
        case "A": position += 1; return .assertion(.startOfText)
        case "z": position += 1; return .assertion(.endOfText)
        case "Z": position += 1; return .assertion(.endOfTextOrBeforeFinalNewline)
        case "b": position += 1; return .assertion(.wordBoundary)
        case "B": position += 1; return .assertion(.notWordBoundary)
        default: break
        }
        switch try parseEscapedItem() {
        case .scalar(let scalar): return .scalar(scalar, ignoringCase: options.ignoringCase)
        case .class(let named, let negated):
            var set = ScalarSet()
            set.classes = [(named, negated)]
            set.ignoringCase = options.ignoringCase
            set.seal()
            return .set(set)
        }
    }

    private enum EscapedItem {
        case scalar(Unicode.Scalar)
        case `class`(ScalarClass, negated: Bool)
    }

    /// An escape that stands for a scalar or a class, inside brackets or out.
    private mutating func parseEscapedItem() throws(SyntaxError) -> EscapedItem {
        guard let scalar = peek else { throw error("a trailing backslash") }
        position += 1
        switch scalar {
        case "d": return .class(.digit, negated: false)
        case "D": return .class(.digit, negated: true)
        case "w": return .class(.word, negated: false)
        case "W": return .class(.word, negated: true)
        case "s": return .class(.space, negated: false)
        case "S": return .class(.space, negated: true)
        case "n": return .scalar("\n")
        case "t": return .scalar("\t")
        case "r": return .scalar("\r")
        case "f": return .scalar("\u{0C}")
        case "v": return .scalar("\u{0B}")
        case "e": return .scalar("\u{1B}")
        case "a": return .scalar("\u{07}")
        case "0": return .scalar("\0")
        case "x", "u":
            let braced = take("{")
            var value: UInt32 = 0, digits = 0
            while let digit = peek, let nibble = digit.properties.isASCIIHexDigit ? UInt32(String(digit), radix: 16) : nil,
                  braced ? digits < 8 : digits < (scalar == "x" ? 2 : 4) {
                value = value << 4 | nibble
                digits += 1
                position += 1
            }
            guard digits > 0, !braced || take("}"), let result = Unicode.Scalar(value) else {
                throw error("a malformed \\\(scalar) escape")
            }
            return .scalar(result)
        case "1"..."9", "k", "g": throw unsupported("backreferences")
        case "p", "P": throw unsupported("\\p{…} property classes")
        default:
            guard !scalar.properties.isAlphabetic && !(scalar.isASCII && scalar.properties.numericType != nil) else {
                throw error("unknown escape '\\\(scalar)'")
            }
            return .scalar(scalar)
        }
    }

    /// After `[`: `[abc]`, `[^a-z]`, `[\d_]`, `[[:alpha:]]`; `]` first and `-` first or last are literal.
    private mutating func parseBracket(_ options: Options) throws(SyntaxError) -> ScalarSet {
        var set = ScalarSet()
        set.ignoringCase = options.ignoringCase
        set.negated = take("^")
        var first = true
        while true {
            guard let scalar = peek else { throw error("missing ']'") }
            if scalar == "]" && !first { position += 1; break }
            first = false
            if scalar == "[" {
                guard position + 1 < scalars.count, scalars[position + 1] == ":" else { throw unsupported("nested classes") }
                position += 2
                let nameStart = position
                while let next = peek, next != ":" { position += 1 }
                let name = String(String.UnicodeScalarView(scalars[nameStart..<position]))
                guard take(":"), take("]"), let named = ScalarClass(posixName: name) else { throw error("unknown class [:\(name):]") }
                set.classes.append((named, false))
                continue
            }
            if (scalar == "&" || scalar == "-" || scalar == "~") && position + 1 < scalars.count && scalars[position + 1] == scalar {
                throw unsupported("set operations (&&, --, ~~)")
            }
            let low: Unicode.Scalar
            position += 1
            if scalar == "\\" {
                switch try parseEscapedItem() {
                case .class(let named, let negated): set.classes.append((named, negated)); continue
                case .scalar(let escaped): low = escaped
                }
            } else {
                low = scalar
            }
            // A range, unless the '-' is the last thing before ']'.
            if peek == "-" && position + 1 < scalars.count && scalars[position + 1] != "]" {
                position += 1
                var high = scalars[position]
                position += 1
                if high == "\\" {
                    guard case .scalar(let escaped) = try parseEscapedItem() else { throw error("a class cannot end a range") }
                    high = escaped
                } else if high == "[" {
                    throw error("a class cannot end a range")
                }
                guard low.value <= high.value else { throw error("the range \(low)-\(high) is out of order") }
                set.ranges.append(low.value...high.value)
            } else {
                set.ranges.append(low.value...low.value)
            }
        }
        set.seal()
        return set
    }
}
