#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - dotenv

/// `.env` files: `KEY=value`, `export KEY=value`, `#` comments, blank lines, unquoted,
/// 'single-quoted' (literal) and "double-quoted" values (escapes `\n \r \t \" \\ \$ \``, may span lines);
/// a UTF-8 byte order mark at the start is skipped.
enum DotEnv {
    /// The variables of a dotenv file, as entries named by the variables.
    ///
    /// One pass over the bytes: everything with a meaning here (`=`, quotes, `\`, `#`, blanks,
    /// line ends) is ASCII, and no byte of a multi-byte UTF-8 character is, so values are cut
    /// at character boundaries without decoding them, and a line costs time in proportion to
    /// its length (a 50 MB line parsed at 1 MB/s when this walked grapheme clusters).
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        var list = ImportedEntryList()
        _ = try bytes.withUnsafeBufferPointer { (input) throws(VaultError) in try read(input, now: now, into: &list) }
        return list.entries
    }

    /// What `parse(_:now:)` reads, each entry written as its record (`ImportRecordWriter`), line by
    /// line as the parse reads them: no `Entry`, value array or string per variable. Nil when the
    /// writer declines an entry (a non-ASCII or invalid name, a limit: `parse` then reads them, and
    /// the check names the problem); the error `parse` throws.
    /// `ImportRecordsTests.test_importRecords_dotenvMatchesTheEntryPath` ties the two.
    static func records(_ bytes: [UInt8], now: Int64) throws(VaultError) -> WrittenRecords? {
        try bytes.withUnsafeBufferPointer { (input) throws(VaultError) in try records(input, now: now) }
    }

    private static func records(_ bytes: UnsafeBufferPointer<UInt8>, now: Int64) throws(VaultError) -> WrittenRecords? {
        // Room for twice the input (a record is longer than its line), mapped but not touched
        // until written: the buffer never grows, which held the old records and their copy at once.
        guard var writer = ImportRecordWriter(capacity: bytes.count * 2) else { return nil }
        // A run that could not be written (a full disk): read the plain way, in memory.
        guard try read(bytes, now: now, into: &writer), writer.failure == nil else { return nil }
        return try? writer.records()
    }

    /// Reads every line into `output`; false when it declined an entry (the lines after it are
    /// still read, for their errors, and not given to it).
    private static func read(_ bytes: UnsafeBufferPointer<UInt8>, now: Int64, into output: inout some ImportedEntrySink) throws(VaultError) -> Bool {
        // Checked in place: `String(validating:)` made a copy of the whole file, secrets and all,
        // freed without a wipe.
        guard JSONString.isUTF8(bytes) else { throw notUTF8 }
        var parser = Parser(bytes: bytes, complete: true, linesBefore: 0, atStart: true)
        var declined = false
        while try readRecord(&parser, now: now, into: &output, declined: &declined) == .read {}
        return !declined
    }

    /// The error of a file that is not UTF-8 anywhere (said before any other).
    static let notUTF8 = VaultError.malformedInput("the dotenv file is not UTF-8")

    /// What `readRecord` did.
    enum Step { case read, end, needsMore }

    /// Reads the next variable (a line, or the lines of a double-quoted value) into `output`
    /// unless it `declined` one before; `.needsMore` when the record goes on past `parser`'s bytes
    /// and they are not the file's last (the parser is then left anywhere: the caller starts the
    /// record again over more bytes), `.end` after the last line.
    static func readRecord(_ parser: inout Parser, now: Int64, into output: inout some ImportedEntrySink,
                           declined: inout Bool) throws(VaultError) -> Step {
        let bytes = parser.bytes
        guard let (lineNumber, whole) = parser.nextLine() else { return parser.needsMore ? .needsMore : .end }
        var line = parser.droppingBlanks(whole)
        if line.isEmpty || bytes[line.lowerBound] == Byte.hash { return .read }
        if bytes[line].starts(with: "export ".utf8) {
            line = line.lowerBound + 7..<line.upperBound
            while !line.isEmpty && bytes[line.lowerBound] == Byte.space { line = line.lowerBound + 1..<line.upperBound }
        }
        guard let equals = parser.find(Byte.equals, in: line) else {
            throw .malformedInput("line \(lineNumber): expected KEY=value")
        }
        let keyRange = parser.trimmingBlanks(line.lowerBound..<equals)
        guard isVariableName(bytes, keyRange) else {
            let key = String(decoding: bytes[keyRange], as: UTF8.self)
            throw .malformedInput("line \(lineNumber): '\(key)' is not a variable name")
        }
        let rest = parser.droppingBlanks(equals + 1..<line.upperBound)
        var value: ImportBytes
        switch rest.isEmpty ? nil : bytes[rest.lowerBound] {
        case Byte.singleQuote?:
            let quoted = rest.lowerBound + 1..<rest.upperBound
            guard let close = parser.find(Byte.singleQuote, in: quoted) else {
                throw .malformedInput("line \(lineNumber): unterminated single quote")
            }
            value = .input(quoted.lowerBound..<close)
            try parser.checkTrailing(close + 1..<rest.upperBound, lineNumber)
        case Byte.doubleQuote?:
            guard let unescaped = try parser.doubleQuoted(rest.lowerBound + 1..<rest.upperBound, startLine: lineNumber) else {
                return .needsMore
            }
            value = .owned(unescaped)
        default:
            // Unquoted: up to an inline comment (" #"), trailing blanks removed.
            var end = rest.upperBound
            var searched = rest
            while let hash = parser.find(Byte.hash, in: searched) {
                if hash > rest.lowerBound && bytes[hash - 1] == Byte.space { end = hash - 1; break }
                searched = hash + 1..<rest.upperBound
            }
            value = .input(parser.trimmingBlanks(rest.lowerBound..<end))
        }
        // Ciphertext is never a secret (cold60 H1): sops's dotenv form, an Ansible Vault value.
        let encrypted = value.withBytes(in: UnsafeRawBufferPointer(bytes)) { FormatSniffer.encryptedValue($0.assumingMemoryBound(to: UInt8.self)) }
        // sops's metadata (`sops_mac=ENC[…]`) is such a value; a key called `sops_version` alone is no sops file (recheck62 N7).
        if let encrypted {
            if case .owned(var unescaped) = value {
                value = .input(0..<0)
                SecureMemory.wipe(&unescaped)
            }
            throw encryptedValueError(encrypted, line: lineNumber)
        }
        var noFields: [ImportField] = []
        if !declined {
            declined = !output.add(name: .input(keyRange), created: now, modified: now, value: value, fields: &noFields,
                                   in: UnsafeRawBufferPointer(bytes))
        }
        // An unescaped copy is the sink's to keep only as its own copy: this one is wiped.
        if case .owned(var unescaped) = value {
            value = .input(0..<0)
            SecureMemory.wipe(&unescaped)
        }
        return .read
    }

    /// The error of a value that is ciphertext (`FormatSniffer.encryptedValue`) on line `line`:
    /// what it is, said as the sniffer says it (`EncryptedLines.refusal`: the command's hint,
    /// how to decrypt it, follows it as it follows the sniffer's).
    static func encryptedValueError(_ kind: FormatSniffer.EncryptedLines, line: Int) -> VaultError {
        .malformedInput("line \(line): this is \(kind.refusal)")
    }

    /// `isVariableName(_:)` of the bytes `range` of `bytes`: the ASCII case (most) without a string.
    private static func isVariableName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty else { return false }
        var ascii = true
        for byte in bytes[range] {
            guard byte < 0x80 else { ascii = false; break }
            guard Byte.isVariableASCII(byte) else { return false }
        }
        return ascii || isVariableName(String(decoding: bytes[range], as: UTF8.self))
    }

    /// Letters, digits (any script), `_`, `.` and `-`; the common ASCII case without decoding characters.
    private static func isVariableName(_ key: String) -> Bool {
        guard !key.isEmpty else { return false }
        var ascii = true
        for byte in key.utf8 {
            guard byte < 0x80 else { ascii = false; break }
            guard Byte.isVariableASCII(byte) else { return false }
        }
        return ascii || key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }
    }

    // MARK: Bytes and lines

    /// The ASCII bytes the syntax uses.
    enum Byte {
        static let newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
        static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), hash = UInt8(ascii: "#"), equals = UInt8(ascii: "=")
        static let singleQuote = UInt8(ascii: "'"), doubleQuote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        static let dollar = UInt8(ascii: "$"), backtick = UInt8(ascii: "`")

        static func isVariableASCII(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// The file's lines (split on LF, one trailing CR dropped) and the helpers that read them,
    /// over the whole file or a part of it that starts and ends at line starts (`DotEnv+Windows`).
    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        /// Whether `bytes` reach the end of the file (else they end just past a line end).
        private let complete: Bool
        /// Where the next line starts; past the end once the last line was read.
        private var next = 0
        private var lineNumber: Int
        /// Set when `nextLine` found no line because `bytes` end before the file does.
        private(set) var needsMore = false

        /// Where the next line starts (every byte before it read), at most the end.
        var nextStart: Int { min(next, bytes.count) }
        /// The number of lines read, those before `bytes` included.
        var linesRead: Int { lineNumber }

        /// The lines of `bytes`, numbered after `linesBefore`; `complete` when they reach the end of
        /// the file. A UTF-8 byte order mark at the start of the file (`atStart`; Windows editors
        /// write one) is skipped, as CSV does.
        init(bytes: UnsafeBufferPointer<UInt8>, complete: Bool, linesBefore: Int, atStart: Bool) {
            self.bytes = bytes
            self.complete = complete
            lineNumber = linesBefore
            if atStart && bytes.starts(with: [0xEF, 0xBB, 0xBF]) { next = 3 }
        }

        /// The next line's 1-based number and bytes, without its line end; nil after the last
        /// line, or when the next one lies past `bytes` (`needsMore`).
        mutating func nextLine() -> (number: Int, range: Range<Int>)? {
            guard complete || next < bytes.count else {
                needsMore = true
                return nil
            }
            guard next <= bytes.count else { return nil }
            let start = next
            var end = find(Byte.newline, in: start..<bytes.count) ?? bytes.count
            next = end + 1
            if end > start && bytes[end - 1] == Byte.carriageReturn { end -= 1 }
            lineNumber += 1
            return (lineNumber, start..<end)
        }

        /// The first index of `byte` in `range` (memchr: the long lines are the point).
        func find(_ byte: UInt8, in range: Range<Int>) -> Int? {
            guard !range.isEmpty else { return nil }
            let start = UnsafeRawPointer(bytes.baseAddress! + range.lowerBound)
            return memchr(start, Int32(byte), range.count).map { range.lowerBound + start.distance(to: UnsafeRawPointer($0)) }
        }

        func isBlank(_ index: Int) -> Bool { bytes[index] == Byte.space || bytes[index] == Byte.tab }

        /// `range` without its leading spaces and tabs.
        func droppingBlanks(_ range: Range<Int>) -> Range<Int> {
            var start = range.lowerBound
            while start < range.upperBound && isBlank(start) { start += 1 }
            return start..<range.upperBound
        }

        /// `range` without its leading and trailing spaces and tabs.
        func trimmingBlanks(_ range: Range<Int>) -> Range<Int> {
            let start = droppingBlanks(range).lowerBound
            var end = range.upperBound
            while end > start && isBlank(end - 1) { end -= 1 }
            return start..<end
        }

        /// Throws unless only blanks or a comment follow a closing quote.
        func checkTrailing(_ range: Range<Int>, _ lineNumber: Int) throws(VaultError) {
            let trailing = droppingBlanks(range)
            guard trailing.isEmpty || bytes[trailing.lowerBound] == Byte.hash else {
                throw .malformedInput("line \(lineNumber): unexpected text after the closing quote")
            }
        }

        /// The value of a double-quoted string whose text starts at `text`; it may go on over the
        /// following lines, each line end becoming `\n`. Nil when it goes on past `bytes` (`needsMore`).
        mutating func doubleQuoted(_ text: Range<Int>, startLine: Int) throws(VaultError) -> [UInt8]? {
            var value: [UInt8] = []
            var segment = text
            while true {
                // The next quote and the next backslash, each found again only once passed, so
                // that many escapes before a distant quote cost no more than one pass.
                var index = segment.lowerBound
                var quote = find(Byte.doubleQuote, in: segment) ?? segment.upperBound
                var backslash = find(Byte.backslash, in: segment) ?? segment.upperBound
                while index < segment.upperBound {
                    if quote < index { quote = find(Byte.doubleQuote, in: index..<segment.upperBound) ?? segment.upperBound }
                    if backslash < index { backslash = find(Byte.backslash, in: index..<segment.upperBound) ?? segment.upperBound }
                    let special = min(quote, backslash)
                    value += bytes[index..<special]
                    index = special
                    guard index < segment.upperBound else { break }
                    if index == quote {
                        try checkTrailing(index + 1..<segment.upperBound, startLine)
                        return value
                    }
                    index += 1
                    switch index < segment.upperBound ? bytes[index] : nil {
                    case UInt8(ascii: "n")?: value.append(Byte.newline)
                    case UInt8(ascii: "r")?: value.append(Byte.carriageReturn)
                    case UInt8(ascii: "t")?: value.append(Byte.tab)
                    case let escaped? where escaped == Byte.doubleQuote || escaped == Byte.backslash || escaped == Byte.dollar
                        || escaped == Byte.backtick:
                        value.append(escaped)
                    default:
                        // Not an escape: the backslash stays, and what follows is read as usual.
                        value.append(Byte.backslash)
                        continue
                    }
                    index += 1
                }
                guard let (_, following) = nextLine() else {
                    SecureMemory.wipe(&value)
                    if needsMore { return nil }
                    throw .malformedInput("line \(startLine): unterminated double quote")
                }
                value.append(Byte.newline)
                segment = following
            }
        }
    }

    // MARK: Export

    /// The entries of `vault` whose names start with `prefix` as double-quoted `VARIABLE="value"`
    /// lines: byte for byte what `export(_:skipped:)` writes of `sortedEntries`, and the same error.
    /// An entry whose value is not text (binary data, a NUL) is left out and named in `skipped`
    /// (in name order): dotenv has no way to carry it, and one such entry used to fail the whole
    /// export (issue 47). The caller warns with the names.
    ///
    /// Written from each entry's bytes where they lie (`Vault.forEachEntryBytes`); each variable is
    /// written straight into the output and checked against the ones before it by a hash set of its
    /// bytes there. On two entries that share a variable the output is wiped and the plain reference
    /// runs instead, so that which error is reported, and its words, stay its own.
    static func export(_ vault: Vault, prefix: String, skipped: inout [String]) throws(VaultError) -> [UInt8] {
        var out = ExportBuffer(capacity: vault.storedRecordsByteCount + vault.count * 16)
        var variables = ByteRanges(expected: vault.count)
        var refused = false, binary: [String] = []
        vault.forEachEntryBytes(withPrefix: prefix) { entry in
            guard !refused else { return }
            guard UTF8Bytes.isText(entry.value) else { binary.append(String(decoding: entry.name, as: UTF8.self)); return }
            let start = out.count
            EnvironmentNames.appendVariable(for: entry.name, to: &out)
            let clashes = out.withBytes { !variables.insert(start..<$0.count, of: $0).inserted }
            guard !clashes else { refused = true; return }
            out.append("=\"")
            // Runs of bytes that need no escape are copied in one piece.
            let value = entry.value
            var run = 0
            for (index, byte) in value.enumerated() {
                guard let escaped = escape(byte) else { continue }
                out.append(UnsafeRawBufferPointer(rebasing: value[run..<index]))
                out.append(Byte.backslash)
                out.append(escaped)
                run = index + 1
            }
            out.append(UnsafeRawBufferPointer(rebasing: value[run...]))
            out.append("\"\n")
        }
        guard refused else {
            skipped = binary
            return out.take()
        }
        out.wipe()
        return try export(vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }, skipped: &skipped)
    }

    /// The letter after the backslash that stands for `byte` in a double-quoted value, or nil when
    /// `byte` is written as it is (the escapes `parse` reads back).
    ///
    /// Every byte that `sh` treats specially inside double quotes is escaped — `$`, `` ` ``, `\`
    /// and `"` — so a file sourced with `set -a; . FILE` expands nothing and runs nothing; line
    /// ends become `\n`/`\r` (sh keeps those two characters as they are, never a command break).
    private static func escape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case Byte.backslash, Byte.doubleQuote, Byte.dollar, Byte.backtick: return byte
        case Byte.newline: return UInt8(ascii: "n")
        case Byte.carriageReturn: return UInt8(ascii: "r")
        case Byte.tab: return UInt8(ascii: "t")
        default: return nil
        }
    }

    /// The entries as double-quoted `VARIABLE="value"` lines; an entry whose value is not text is
    /// left out and named in `skipped` (the plain reference of `export(_:prefix:skipped:)`).
    ///
    /// Escapes byte by byte (a CR before an LF is `\r` too, so the value comes back whole).
    static func export(_ entries: [(name: String, entry: Entry)], skipped: inout [String]) throws(VaultError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 48)
        let isText = { (entry: Entry) in !entry.value.contains(0) && entry.value.withUnsafeBytes(UTF8Bytes.isValid) }
        skipped = entries.filter { !isText($0.entry) }.map(\.name)
        let text = entries.filter { isText($0.entry) }
        // One variable per entry, in the entries' order.
        for ((variable, _), (_, entry)) in zip(try EnvironmentNames.variables(for: text.map(\.name)), text) {
            let value = entry.value
            out += variable.utf8
            out += "=\"".utf8
            // Runs of bytes that need no escape are copied in one piece.
            var run = 0
            for (index, byte) in value.enumerated() {
                guard let escaped = escape(byte) else { continue }
                out += value[run..<index]
                out.append(Byte.backslash)
                out.append(escaped)
                run = index + 1
            }
            out += value[run...]
            out += "\"\n".utf8
        }
        return out
    }
}
