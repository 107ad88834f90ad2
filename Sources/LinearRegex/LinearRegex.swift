// MARK: - Regular expressions in linear time

/// A regular expression that `search --regex` runs in time proportional to the text's length
/// times the pattern's size, never more: a Thompson automaton simulated thread by thread (a
/// Pike VM), as RE2, Go and Rust's regex crate do. Swift's `Regex` backtracks, so `^(a+)+$`
/// against a long run of `a`s followed by `b` ran for seconds per entry.
///
/// The price is the features that need backtracking: backreferences, lookaround, atomic
/// groups and possessive quantifiers are refused with a message saying so. The syntax is
/// otherwise Swift's (and PCRE's) own; `.` and classes match one Unicode scalar. The syntax
/// accepted is listed in man/vaultfile.1 (search).
///
/// A compiled expression is an immutable value: one may be shared between threads, each search
/// with its own `WorkBudget`.
public struct LinearRegex: Sendable {
    /// The most instructions a pattern compiles to, once `{m,n}` repetitions are written out.
    public static let maxProgramSize = 10_000
    /// The largest count in `{m,n}`.
    public static let maxRepetition = 1_000
    /// The deepest nesting of groups.
    public static let maxNesting = 100
    /// A search's work budget: a step is one live thread of the automaton at one scalar of text, so
    /// a search takes at most (pattern states × scalars read) steps, and a pattern of 10,000 states
    /// against a 1 MiB value would take 10^10, hours. A search may spend `initialSteps`, plus
    /// `stepsPerScalar` for each scalar it reads: ordinary patterns keep a few threads alive per
    /// scalar (a hundred-word alternation a few hundred), so they never come near it, while a
    /// pathological one is stopped after a few thousand scalars, and every search stays linear in
    /// the text.
    public static let stepsPerScalar = 1_000
    /// The steps a search may spend before `stepsPerScalar` starts to bind.
    public static let initialSteps = 1_000_000

    /// A pattern that is malformed, or uses a feature this engine does not have.
    public struct SyntaxError: Error, CustomStringConvertible {
        /// What is wrong with the pattern, e.g. "backreferences are not supported".
        public let description: String
    }

    let program: Program

    /// Compiles `pattern`; `ignoringCase` is the same as a leading `(?i)`.
    public init(_ pattern: String, ignoringCase: Bool = false) throws(SyntaxError) {
        var parser = RegexParser(pattern)
        let node = try parser.parse(ignoringCase: ignoringCase)
        program = try RegexCompiler.compile(node)
    }

    /// Whether the pattern matches somewhere in `text`.
    public func matches(_ text: String) -> Bool {
        var unlimited = WorkBudget(initial: .max / 2, perScalar: 0)
        return PikeMatcher(program).search(text.unicodeScalars, budget: &unlimited) ?? false
    }

    /// Whether the pattern matches somewhere in `text`, its steps taken from `budget`, shared by
    /// the texts of one search; throws once the budget is spent.
    public func matches(_ text: String, budget: inout WorkBudget) throws(OverLimit) -> Bool {
        guard let found = PikeMatcher(program).search(text.unicodeScalars, budget: &budget) else {
            throw OverLimit(initialSteps: budget.initial, stepsPerScalar: budget.perScalar)
        }
        return found
    }

    /// The steps a search has left: `initial` at first, `perScalar` more with each scalar read.
    public struct WorkBudget: Sendable {
        /// The steps a search may spend before the first scalar.
        public let initial: Int
        /// The steps each scalar read adds.
        public let perScalar: Int
        /// What is left; the search stops when it is spent.
        public internal(set) var left: Int

        /// A budget of `initial` steps, `perScalar` more with each scalar read.
        public init(initial: Int = LinearRegex.initialSteps, perScalar: Int = LinearRegex.stepsPerScalar) {
            self.initial = initial
            self.perScalar = perScalar
            left = initial
        }
    }

    /// A search spent its `WorkBudget`.
    public struct OverLimit: Error, Equatable {
        /// The budget's `initial` steps.
        public let initialSteps: Int
        /// The budget's steps per scalar.
        public let stepsPerScalar: Int
    }
}

// MARK: - The compiled program

/// Where a zero-width assertion holds.
enum RegexAssertion: Equatable {
    case startOfText, endOfText, endOfTextOrBeforeFinalNewline, startOfLine, endOfLine, wordBoundary, notWordBoundary
}

/// One instruction of the automaton; the consuming ones go on to the next instruction.
enum RegexInstruction: Equatable {
    /// Consumes this scalar.
    case scalar(UInt32)
    /// Consumes a scalar whose simple lower-case form is this one (case-insensitive letters).
    case foldedScalar(UInt32)
    /// Consumes any scalar, or any but a newline.
    case any(newline: Bool)
    /// Consumes a scalar of `Program.sets[index]`.
    case set(Int)
    /// Goes on at both places.
    case split(Int, Int)
    case jump(Int)
    case assert(RegexAssertion)
    case match
}

/// The instructions, the sets they refer to, and whether a match must start at the text's start.
struct Program {
    var instructions: [RegexInstruction] = []
    var sets: [ScalarSet] = []
    /// Each set's ASCII table, apart, so that the common case reads two words and copies no set.
    var asciiTables: [(UInt64, UInt64)] = []
    var anchoredAtStart = false
    /// Whether some instruction compares lower-case forms (then each scalar's is looked up once).
    var folds = false
}

// MARK: - The simulation

/// Runs a program over a text, all threads in step: each instruction is visited at most once per
/// scalar, so the work is bounded by the text's length times the program's size.
struct PikeMatcher {
    private let program: Program

    init(_ program: Program) { self.program = program }

    /// Whether the program matches anywhere in `text`; nil once `budget` is spent. Each scalar
    /// costs one step per live thread, plus one.
    func search(_ text: String.UnicodeScalarView, budget: inout LinearRegex.WorkBudget) -> Bool? {
        var current = ThreadList(capacity: program.instructions.count)
        var next = ThreadList(capacity: program.instructions.count)
        var stack: [Int] = []
        let instructions = program.instructions, tables = program.asciiTables
        var iterator = text.makeIterator()
        var previous: Unicode.Scalar?
        var scalar = iterator.next()
        var following = iterator.next()
        var position = 0
        while true {
            // A new thread starts at every position (at the first only, for an anchored pattern).
            if position == 0 || !program.anchoredAtStart {
                if addThread(0, to: &current, stack: &stack, previous: previous, scalar: scalar, following: following) { return true }
            }
            guard let consumed = scalar else { return false }
            if current.isEmpty && program.anchoredAtStart { return false }
            budget.left &+= budget.perScalar &- current.count &- 1
            if budget.left < 0 { return nil }
            let after = following == nil ? nil : iterator.next()
            let folded = program.folds ? Self.fold(consumed) : consumed.value
            next.clear()
            for index in 0..<current.count {
                let pc = current[index]
                let advances: Bool
                switch instructions[pc] {
                case .scalar(let value): advances = consumed.value == value
                case .foldedScalar(let value): advances = folded == value
                case .any(let newline): advances = newline || consumed != "\n"
                case .set(let set):
                    let value = consumed.value
                    if value < 64 { advances = tables[set].0 >> UInt64(value) & 1 == 1 }
                    else if value < 128 { advances = tables[set].1 >> UInt64(value - 64) & 1 == 1 }
                    else { advances = program.sets[set].contains(consumed) }
                case .split, .jump, .assert, .match: advances = false
                }
                if advances && addThread(pc + 1, to: &next, stack: &stack, previous: consumed, scalar: following, following: after) { return true }
            }
            swap(&current, &next)
            previous = consumed
            scalar = following
            following = after
            position += 1
        }
    }

    /// Adds `pc` and every instruction reachable from it without consuming; true on reaching `match`.
    private func addThread(_ pc: Int, to list: inout ThreadList, stack: inout [Int],
                           previous: Unicode.Scalar?, scalar: Unicode.Scalar?, following: Unicode.Scalar?) -> Bool {
        stack.removeAll(keepingCapacity: true)
        stack.append(pc)
        while let pc = stack.popLast() {
            guard !list.contains(pc) else { continue }
            list.insert(pc)
            switch program.instructions[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .split(let first, let second): stack.append(second); stack.append(first)
            case .assert(let assertion):
                if Self.holds(assertion, previous: previous, scalar: scalar, following: following) { stack.append(pc + 1) }
            case .scalar, .foldedScalar, .any, .set: continue
            }
        }
        return false
    }

    private static func holds(_ assertion: RegexAssertion, previous: Unicode.Scalar?, scalar: Unicode.Scalar?, following: Unicode.Scalar?) -> Bool {
        switch assertion {
        case .startOfText: return previous == nil
        case .endOfText: return scalar == nil
        case .endOfTextOrBeforeFinalNewline: return scalar == nil || (scalar == "\n" && following == nil)
        case .startOfLine: return previous == nil || previous == "\n"
        case .endOfLine: return scalar == nil || scalar == "\n"
        case .wordBoundary: return ScalarClass.word.contains(previous) != ScalarClass.word.contains(scalar)
        case .notWordBoundary: return ScalarClass.word.contains(previous) == ScalarClass.word.contains(scalar)
        }
    }

    /// The simple lower-case form of a scalar (itself when that takes more than one scalar).
    static func fold(_ scalar: Unicode.Scalar) -> UInt32 {
        let value = scalar.value
        if value < 0x80 { return (0x41...0x5A).contains(value) ? value + 0x20 : value }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first!.value : value
    }
}

/// A set of instruction indexes with constant-time insert, lookup and clear (a sparse set).
private struct ThreadList {
    private var dense: [Int]
    private var sparse: [Int]
    private(set) var count = 0

    init(capacity: Int) {
        dense = [Int](repeating: 0, count: capacity)
        sparse = [Int](repeating: 0, count: capacity)
    }

    var isEmpty: Bool { count == 0 }
    subscript(index: Int) -> Int { dense[index] }

    func contains(_ pc: Int) -> Bool {
        let slot = sparse[pc]
        return slot < count && dense[slot] == pc
    }

    mutating func insert(_ pc: Int) {
        sparse[pc] = count
        dense[count] = pc
        count += 1
    }

    mutating func clear() { count = 0 }
}
