import FoundationEssentials
import SecureMemory
import VaultModel

// MARK: - KeePassXMLParser: values

extension KeePassXMLParser {
    /// The time whose text lies at `text` of the document (`XMLReader.textElement`), the cache
    /// asked where it lies.
    mutating func time(at text: Range<Int>) throws(VaultError) -> Int64? {
        var cache = timeCache
        let cached = reader.withBytes(text) { cache.parse(utf8: $0) }
        timeCache = cache
        if let cached { return cached }
        // Where the text starts is where the walk would name (its start tag just read).
        return try time(reader.withBytes(text) { Array($0) }, at: XMLReader.Place(offset: text.lowerBound, line: nil))
    }

    /// The text of a time element (`time(_:at:)`), the cache asked where the text lies.
    mutating func readTime(_ what: StaticString, at line: XMLReader.Place) throws(VaultError) -> Int64? {
        var cache = timeCache
        let (cached, text) = try reader.withText("\(what)") { text -> (Int64?, [UInt8]?) in
            if let milliseconds = cache.parse(utf8: text) { return (milliseconds, nil) }
            return (nil, Array(text))
        }
        timeCache = cache
        guard let text else { return cached }
        return try time(text, at: line)
    }

    /// A time as KeePass writes it: ISO 8601 in an XML export, base64 of seconds since 0001-01-01
    /// (little-endian, 8 bytes) in a KDBX 4 file's XML; empty is no time.
    private mutating func time(_ bytes: [UInt8], at place: XMLReader.Place) throws(VaultError) -> Int64? {
        // Most entries of an export share a handful of times: the last one is remembered.
        if let milliseconds = bytes.withUnsafeBufferPointer({ timeCache.parse(utf8: $0) }) { return milliseconds }
        let text = String(decoding: bytes, as: UTF8.self).trimmingASCIISpaces
        if text.isEmpty { return nil }
        if let milliseconds = Timestamps.parse(text) { return milliseconds }
        if let data = Data(base64Encoded: text), data.count == 8 {
            let seconds = data.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
            // 62,135,596,800 s from 0001-01-01 to 1970-01-01; times beyond a sane range are refused below.
            if (0...315_537_897_599).contains(seconds) { return (seconds - 62_135_596_800) * 1000 }
        }
        throw .malformedInput("line \(reader.line(at: place)): the time '\(text.prefix(40))' is neither ISO 8601 nor KDBX 4's base64 form")
    }

    func base64(_ text: [UInt8], at line: Int, what: String) throws(VaultError) -> [UInt8] {
        let compact = text.filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        guard let data = Data(base64Encoded: Data(compact)) else { throw .malformedInput("line \(line): \(what) is not valid base64") }
        return Array(data)
    }

    func unprotectValue(_ bytes: inout [UInt8], at line: Int, what: String) throws(VaultError) {
        guard let unprotect else {
            throw .malformedInput("line \(line): \(what) is encrypted with a KDBX file's inner stream (Protected=\"True\"); "
                                  + "this is not a KeePass XML export: export the database as XML (keepassxc-cli export --format xml, or KeePass's File > Export > KeePass XML (2.x))")
        }
        try unprotect(&bytes)
    }
}
