#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - XMLReader: bytes, references and characters

extension XMLReader {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    @discardableResult
    mutating func skipSpaces() -> Bool {
        let start = cursor
        while cursor < buffer.count, Self.isSpace(buffer[cursor]) { cursor += 1 }
        return cursor > start
    }

    func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - cursor >= count else { return false }
        for offset in 0..<count where buffer[cursor + offset] != literal.utf8Start[offset] { return false }
        return true
    }

    /// Moves the cursor past the first `terminator` at `skipped` bytes or more from it.
    mutating func skip(past terminator: StaticString, from skipped: Int, what: String) throws(VaultError) {
        guard let found = try find(terminator, from: cursor + skipped) else { throw fail("the document ends inside a \(what)") }
        cursor = found + terminator.utf8CodeUnitCount
    }

    /// The range `range` of the document, as a range of `buffer`.
    @inline(__always)
    func relative(_ range: Range<Int>) -> Range<Int> { (range.lowerBound - base)..<(range.upperBound - base) }

    /// Whether the bytes at `range` spell `name`.
    public func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount && buffer.withUnsafeBufferPointer { held in
            memcmp(held.baseAddress! + (range.lowerBound - base), name.utf8Start, range.count) == 0
        }
    }

    /// Whether the bytes at `range` are all white space (space, tab, LF, CR).
    public func isWhiteSpace(_ range: Range<Int>) -> Bool { buffer[relative(range)].allSatisfy(Self.isSpace) }

    /// `body` of the bytes at `range`, where they lie (valid until the next event).
    public func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let held = relative(range)
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[held])) }
    }

    /// The value of the last start tag's attribute `name`, references resolved; nil when absent.
    public func attribute(_ name: StaticString) throws(VaultError) -> [UInt8]? {
        guard let found = attributes.first(where: { matches($0.name, name) }) else { return nil }
        var value: [UInt8] = []
        try decode(found.value, into: &value)
        return value
    }

    /// The bytes at `range` as text (names in messages).
    public func text(of range: Range<Int>) -> String { String(decoding: buffer[relative(range)], as: UTF8.self) }

    /// Appends character data at `range` with its references resolved and its line ends
    /// normalised (CR LF and a lone CR become LF, as XML 1.0 §2.11 says).
    public func decode(_ range: Range<Int>, into output: inout [UInt8]) throws(VaultError) {
        let held = relative(range)
        var index = held.lowerBound
        while index < held.upperBound {
            let byte = buffer[index]
            if byte == 0x0D {
                output.append(0x0A)
                index += index + 1 < held.upperBound && buffer[index + 1] == 0x0A ? 2 : 1
                continue
            }
            guard byte == UInt8(ascii: "&") else { output.append(byte); index += 1; continue }
            guard let semicolon = buffer[index..<held.upperBound].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw fail("an '&' that starts no reference (write it as '&amp;')", at: base + index)
            }
            let reference = String(decoding: buffer[index + 1..<semicolon], as: UTF8.self)
            switch reference {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                guard reference.hasPrefix("#"), let scalar = Self.characterReference(reference.dropFirst()) else {
                    // Not echoed: character data may be a password, and a reference inside it a piece of one.
                    throw fail("a reference is not one of XML's own (&lt; &gt; &amp; &quot; &apos; or &#…;); vaultfile reads no entity declarations",
                               at: base + index)
                }
                output.append(contentsOf: String(scalar).utf8)
            }
            index = semicolon + 1
        }
    }

    /// The character of `#…;` without the `#`: decimal or `x` hexadecimal, a character XML allows.
    private static func characterReference(_ digits: Substring) -> Unicode.Scalar? {
        let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        guard let value, !digits.isEmpty, let scalar = Unicode.Scalar(value) else { return nil }
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return scalar
        default: return nil
        }
    }
}
