// MARK: - ASCII armor

/// The strict PEM armor of age files (RFC 7468 §3, label "AGE ENCRYPTED FILE"), as age reads it.
///
/// Accepted: whitespace (space, tab, CR, LF) before the begin line and after the end line; LF or
/// CRLF line ends; base64 lines of exactly 64 columns but the last (1 to 64); padded, canonical
/// base64; no line end after the end line. Refused: headers, blank lines, spaces inside the
/// block, lowercase or other labels, checksum lines, anything else outside the block. Two armors
/// of one file must not exist, or the armor would be malleable.
public enum AgeArmor {
    static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    /// Base64 columns of a full line.
    static let columns = 64

    /// Whether `bytes` are meant as armor, to be read strictly (and refused as armor when wrong):
    /// after leading whitespace they start with `-----`, or their first KiB holds the begin line
    /// (after text that is no age header: garbage before an armor is the armor's fault).
    public static func looksArmored(_ bytes: ArraySlice<UInt8>) -> Bool {
        if bytes.drop(while: isWhitespace).starts(with: "-----".utf8) { return true }
        guard !bytes.starts(with: AgeHeader.versionPrefix) else { return false }
        let head = Array(bytes.prefix(1024))
        return head.count >= begin.count && (0...(head.count - begin.count)).contains { head[$0..<($0 + begin.count)].elementsEqual(begin) }
    }

    /// The binary age file inside the armor `bytes`.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(AgeFileError) -> [UInt8] {
        var text = bytes.drop(while: isWhitespace)
        while let last = text.last, isWhitespace(last) { text = text.dropLast() }
        var lines: [ArraySlice<UInt8>] = text.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard let first = lines.first, first.elementsEqual(begin) else {
            throw .armorMalformed("it does not begin with the line -----BEGIN AGE ENCRYPTED FILE-----")
        }
        guard lines.count >= 2, let last = lines.last, last.elementsEqual(end) else {
            throw .armorMalformed("it does not end with the line -----END AGE ENCRYPTED FILE-----")
        }
        lines = Array(lines.dropFirst().dropLast())
        var encoded: [UInt8] = []
        for (index, line) in lines.enumerated() {
            let isLast = index == lines.count - 1
            guard line.count == columns || (isLast && (1...columns).contains(line.count)) else {
                throw .armorMalformed("line \(index + 2) is \(line.count) columns; every line but the last holds \(columns), the last 1 to \(columns)")
            }
            encoded += line
        }
        guard let decoded = AgeBase64.decodePadded(encoded[...]) else {
            throw .armorMalformed("its contents are not canonical padded base64")
        }
        return decoded
    }

    /// `bytes` armored: the begin line, padded base64 in lines of 64 columns, the end line, each ended by LF.
    public static func encode(_ bytes: [UInt8]) -> [UInt8] {
        let text = AgeBase64.encodePadded(bytes)
        var out = begin + [0x0A]
        out.reserveCapacity(text.count + text.count / columns + 80)
        var start = 0
        while start < text.count {
            let stop = min(start + columns, text.count)
            out += text[start..<stop]
            out.append(0x0A)
            start = stop
        }
        return out + end + [0x0A]
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
}
