// MARK: - Classes of scalars

/// The named classes: `\d \w \s` and the POSIX bracket classes.
enum ScalarClass: Equatable {
    case digit, word, space, alpha, alnum, upper, lower, punct, xdigit, cntrl, print, graph, blank

    init?(posixName: String) {
        switch posixName {
        case "digit": self = .digit
        case "word": self = .word
        case "space": self = .space
        case "alpha": self = .alpha
        case "alnum": self = .alnum
        case "upper": self = .upper
        case "lower": self = .lower
        case "punct": self = .punct
        case "xdigit": self = .xdigit
        case "cntrl": self = .cntrl
        case "print": self = .print
        case "graph": self = .graph
        case "blank": self = .blank
        default: return nil
        }
    }

    /// Whether `scalar` is in the class (nil, the edge of the text, is in none).
    func contains(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return false }
        let properties = scalar.properties
        switch self {
        case .digit: return properties.generalCategory == .decimalNumber
        case .word:
            switch properties.generalCategory {
            case .decimalNumber, .connectorPunctuation, .nonspacingMark, .spacingMark, .enclosingMark: return true
            default: return properties.isAlphabetic
            }
        case .space: return properties.isWhitespace
        case .alpha: return properties.isAlphabetic
        case .alnum: return properties.isAlphabetic || properties.generalCategory == .decimalNumber
        case .upper: return properties.isUppercase
        case .lower: return properties.isLowercase
        case .punct:
            switch properties.generalCategory {
            case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                 .initialPunctuation, .finalPunctuation, .otherPunctuation: return true
            default: return false
            }
        case .xdigit: return scalar.isASCII && scalar.properties.isASCIIHexDigit
        case .cntrl: return properties.generalCategory == .control
        case .print, .graph:
            switch properties.generalCategory {
            case .control, .unassigned, .surrogate: return false
            default: return self == .print || !properties.isWhitespace
            }
        case .blank: return scalar == "\t" || properties.generalCategory == .spaceSeparator
        }
    }
}

/// A bracket expression (or `\d`, `\w`, `\s` and their negations): ranges and classes, perhaps
/// negated and perhaps case-insensitive; ASCII answers are looked up in a 128-bit table.
struct ScalarSet {
    var ranges: [ClosedRange<UInt32>] = []
    var classes: [(ScalarClass, negated: Bool)] = []
    var negated = false
    var ignoringCase = false
    /// Bit n says whether ASCII scalar n is in the set (after `seal()`).
    private(set) var asciiTable: (UInt64, UInt64) = (0, 0)

    /// Fills the ASCII table; call once the set is complete.
    mutating func seal() {
        var table: (UInt64, UInt64) = (0, 0)
        for value in 0..<UInt32(128) where computeContains(Unicode.Scalar(value)!) {
            if value < 64 { table.0 |= 1 << UInt64(value) } else { table.1 |= 1 << UInt64(value - 64) }
        }
        asciiTable = table
    }

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 64 { return asciiTable.0 >> UInt64(value) & 1 == 1 }
        if value < 128 { return asciiTable.1 >> UInt64(value - 64) & 1 == 1 }
        return computeContains(scalar)
    }

    private func computeContains(_ scalar: Unicode.Scalar) -> Bool {
        var found = raw(scalar)
        if !found && ignoringCase {
            for variant in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
                let scalars = variant.unicodeScalars
                if scalars.count == 1, raw(scalars.first!) { found = true; break }
            }
        }
        return found != negated
    }

    private func raw(_ scalar: Unicode.Scalar) -> Bool {
        ranges.contains { $0.contains(scalar.value) } || classes.contains { $0.0.contains(scalar) != $0.negated }
    }
}

// MARK: - The syntax tree

/// A parsed pattern.
indirect enum RegexNode {
    case empty
    case scalar(Unicode.Scalar, ignoringCase: Bool)
    case any(newline: Bool)
    case set(ScalarSet)
    case assertion(RegexAssertion)
    case sequence([RegexNode])
    case alternatives([RegexNode])
    case repeated(RegexNode, min: Int, max: Int?)

    /// Whether every match must begin at the start of the text.
    var isAnchoredAtStart: Bool {
        switch self {
        case .assertion(.startOfText): return true
        case .sequence(let nodes): return nodes.first?.isAnchoredAtStart ?? false
        case .alternatives(let nodes): return !nodes.isEmpty && nodes.allSatisfy(\.isAnchoredAtStart)
        default: return false
        }
    }
}

// MARK: - Compiling

/// Turns a syntax tree into a program, refusing programs over `LinearRegex.maxProgramSize`.
enum RegexCompiler {
    static func compile(_ node: RegexNode) throws(LinearRegex.SyntaxError) -> Program {
        var program = Program()
        try emit(node, into: &program)
        try append(.match, to: &program)
        program.anchoredAtStart = node.isAnchoredAtStart
        return program
    }

    @discardableResult
    private static func append(_ instruction: RegexInstruction, to program: inout Program) throws(LinearRegex.SyntaxError) -> Int {
        guard program.instructions.count < LinearRegex.maxProgramSize else {
            throw LinearRegex.SyntaxError(description: "the expression is too large (over \(LinearRegex.maxProgramSize) steps once "
                                          + "repetitions are written out); use smaller {m,n} counts")
        }
        program.instructions.append(instruction)
        return program.instructions.count - 1
    }

    private static func emit(_ node: RegexNode, into program: inout Program) throws(LinearRegex.SyntaxError) {
        switch node {
        case .empty:
            break
        case .scalar(let scalar, let ignoringCase):
            let folded = PikeMatcher.fold(scalar)
            let caseless = ignoringCase && (folded != scalar.value || scalar.properties.changesWhenCaseMapped)
            try append(caseless ? .foldedScalar(folded) : .scalar(scalar.value), to: &program)
            if caseless { program.folds = true }
        case .any(let newline):
            try append(.any(newline: newline), to: &program)
        case .set(let set):
            program.sets.append(set)
            program.asciiTables.append(set.asciiTable)
            try append(.set(program.sets.count - 1), to: &program)
        case .assertion(let assertion):
            try append(.assert(assertion), to: &program)
        case .sequence(let nodes):
            for node in nodes { try emit(node, into: &program) }
        case .alternatives(let nodes):
            // split L1, next; L1: first; jump end; next: split L2, … ; last
            var jumps: [Int] = []
            for (index, node) in nodes.enumerated() {
                if index == nodes.count - 1 {
                    try emit(node, into: &program)
                } else {
                    let split = try append(.split(0, 0), to: &program)
                    try emit(node, into: &program)
                    jumps.append(try append(.jump(0), to: &program))
                    program.instructions[split] = .split(split + 1, program.instructions.count)
                }
            }
            for jump in jumps { program.instructions[jump] = .jump(program.instructions.count) }
        case .repeated(let node, let min, let max):
            for _ in 0..<min { try emit(node, into: &program) }
            if let max {
                // Each optional copy may be skipped, and then so are the ones after it.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(try append(.split(0, 0), to: &program))
                    try emit(node, into: &program)
                }
                for split in splits { program.instructions[split] = .split(split + 1, program.instructions.count) }
            } else {
                let loop = try append(.split(0, 0), to: &program)
                try emit(node, into: &program)
                try append(.jump(loop), to: &program)
                program.instructions[loop] = .split(loop + 1, program.instructions.count)
            }
        }
    }
}
