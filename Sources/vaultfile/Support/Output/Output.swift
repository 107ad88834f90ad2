#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - Standard streams

/// Writing to stdout and stderr with `write(2)`: binary-safe, no buffering
/// surprises, short writes and EINTR handled (Glibc's `stdout` global is not
/// usable in Swift 6 mode).
enum Stream {
    /// Writes every byte of `bytes` to `fd`; returns false if the descriptor failed.
    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32) -> Bool { bytes.withUnsafeBytes { write($0, to: fd) } }

    /// Writes every byte of a raw buffer to `fd`; returns false if the descriptor failed.
    @discardableResult
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            written += count
        }
        return true
    }

    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}

/// Data output: exact bytes on standard output.
enum StandardOutput {
    /// Writes `bytes` exactly; throws when stdout is closed or full.
    static func write(_ bytes: [UInt8]) throws(CLIError) {
        guard Stream.write(bytes, to: STDOUT_FILENO) else { throw .outputFailed(errno: errno) }
    }

    /// Writes a raw buffer exactly; throws when stdout is closed or full.
    static func write(_ bytes: UnsafeRawBufferPointer) throws(CLIError) {
        guard Stream.write(bytes, to: STDOUT_FILENO) else { throw .outputFailed(errno: errno) }
    }

    /// Writes `text` followed by a newline.
    static func line(_ text: String) throws(CLIError) { try write(Array((text + "\n").utf8)) }

    /// Whether stdout is a terminal (then a missing final newline is added to values).
    static var isTerminal: Bool { Stream.isTerminal(STDOUT_FILENO) }
}

/// Human messages: everything that is not data goes to standard error, through `escaped`.
enum Messages {
    /// `vaultfile: error: …` and, when present, `vaultfile: hint: …`.
    static func error(_ text: String, hint: String? = nil) {
        write("vaultfile: error: " + escaped(text))
        if let hint { write("vaultfile: hint: " + escaped(hint)) }
    }

    /// `vaultfile: warning: …` and, when present, `vaultfile: hint: …`.
    static func warning(_ text: String, hint: String? = nil) {
        write("vaultfile: warning: " + escaped(text))
        relayed?.append("warning: " + escaped(text))
        if let hint { write("vaultfile: hint: " + escaped(hint)) }
    }

    /// `vaultfile: note: …`: something the command did that the user may not expect (one line).
    static func note(_ text: String) {
        write("vaultfile: note: " + escaped(text))
        relayed?.append("note: " + escaped(text))
    }

    /// When not nil, warnings and notes are also kept here: the age plugin, whose standard error
    /// age 1.1.1 does not show, sends them to its client as `msg` commands.
    nonisolated(unsafe) static var relayed: [String]?

    /// A plain informational line on stderr. The one kind of message that may span lines (the
    /// advice of `git setup`): its newlines are kept, every other control is escaped.
    static func info(_ text: String) {
        write(escaped(text, keepingNewlines: true))
    }

    /// `info(_:)` of many lines, written together: one `write(2)` for each 64 KiB of them where
    /// `info` makes one for each (an import that renames 90,000 entries lists every one).
    /// The same bytes as `info` of each line in turn.
    struct InfoLines {
        private var pending: [UInt8] = []

        /// Adds the line `text` (escaped as `info` escapes it); written once 64 KiB are waiting.
        mutating func add(_ text: String) {
            var line = escaped(text, keepingNewlines: true)
            line.withUTF8 { pending.append(contentsOf: $0) }
            endLine()
        }

        /// `add(_:)` of the line whose UTF-8 is `line` (made as bytes: no string of it).
        mutating func add(utf8 line: [UInt8]) {
            guard line.withUnsafeBufferPointer(mayNeedEscape) else {
                pending.append(contentsOf: line)
                return endLine()
            }
            add(String(decoding: line, as: UTF8.self))
        }

        /// `add(utf8:)` of a line its caller found needs no escape (`mayNeedEscape` false), its
        /// bytes where they lie (a `ByteLine`'s).
        mutating func add(plainUTF8 line: UnsafeBufferPointer<UInt8>) {
            pending.append(contentsOf: line)
            endLine()
        }

        private mutating func endLine() {
            pending.append(0x0A)
            if pending.count >= 1 << 16 { flush() }
        }

        /// Writes the lines waiting.
        mutating func flush() {
            guard !pending.isEmpty else { return }
            Stream.write(pending, to: STDERR_FILENO)
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// A progress note shown only when stderr is a terminal ("unlocking (Argon2id …)…").
    static func progress(_ text: String) {
        guard Stream.isTerminal(STDERR_FILENO) else { return }
        write(escaped(text))
    }

    // MARK: Escaping

    /// `text` with everything a terminal would act on, or not show, written as an escape: C0
    /// controls (newline and tab included: a message is one line) and DEL as `\xHH`, C1 controls
    /// (U+0080–U+009F) and every character new names refuse (`EntryName.isFormatCharacter`: the
    /// bidi embeddings, overrides, isolates and marks, zero-width spaces and joiners, the BOM, the
    /// soft hyphen, the line and paragraph separators…) as `\u{HHHH}`. Messages quote entry names,
    /// dotenv keys, template references, file names and other managers' titles, any of which may
    /// come from a file someone else wrote: a title renamed for a U+200B shows it (recheck58 N4).
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        // Most messages hold no byte that may start an escape: found on the bytes in place.
        var bytes = text
        guard bytes.withUTF8(mayNeedEscape),
              text.unicodeScalars.contains(where: { needsEscape($0) && !(keepingNewlines && $0 == "\n") }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if !needsEscape(scalar) || (keepingNewlines && scalar == "\n") {
                result.append(scalar)
            } else if scalar.value < 0x80 {
                result.append(contentsOf: "\\x\(hex(scalar.value, digits: 2))".unicodeScalars)
            } else {
                result.append(contentsOf: "\\u{\(hex(scalar.value, digits: 4))}".unicodeScalars)
            }
        }
        return String(result)
    }

    /// Whether `bytes` hold a byte that may start something `escaped` escapes (C0, DEL, or the
    /// lead byte of a character from U+0080 on); false for most messages, which then stay as they are.
    ///
    /// Eight bytes at a time while no byte is below 0x20, DEL or 0x80 and above (a superset of
    /// what may start an escape: most text); from the first word that holds one, byte by byte.
    static func mayNeedEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let below = (word &- ones &* 0x20) & ~word & highs  // a byte below 0x20
            let del = word ^ (ones &* 0x7F)
            let isDel = (del &- ones) & ~del & highs  // a byte 0x7F
            if below | isDel | (word & highs) != 0 { break }
            index += 8
        }
        return bytes[index...].contains { $0 < 0x20 || $0 == 0x7F || $0 >= 0xC2 }
    }

    /// The bytes of `text` from `start` (UTF-8) escaped in place as `escaped(_:)` escapes them.
    static func escape(_ text: inout [UInt8], from start: Int) {
        guard text.withUnsafeBufferPointer({ mayNeedEscape(UnsafeBufferPointer(rebasing: $0[start...])) }) else { return }
        let shown = escaped(String(decoding: text[start...], as: UTF8.self))
        text.replaceSubrange(start..., with: shown.utf8)
    }

    /// Whether `escaped` writes `scalar` as an escape.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: return EntryName.isFormatCharacter(scalar)
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    private static func write(_ line: String) {
        Stream.write(Array((line + "\n").utf8), to: STDERR_FILENO)
    }
}
