import Foundation

// MARK: - Pwned Passwords lists for tests

/// Writes Pwned Passwords lists in the real formats: the file of `HASH:COUNT` lines sorted by hash
/// (what KeePassXC's `analyze --hibp` reads) and the folder of range files the official downloader
/// writes (`ABCDE.txt`, `SUFFIX:COUNT` lines, CR LF). Hashes are given as upper-case hexadecimal
/// (callers hash their planted passwords with the library); `randomLines` fills the rest.
public enum PwnedPasswordsFixture {
    /// `count` lines of random hashes of `digits` hexadecimal digits, with counts from 1 to 10^7.
    public static func randomLines(_ count: Int, digits: Int = 40) -> [(hash: String, count: Int)] {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789ABCDEF")
        return (0..<count).map { _ in
            (String((0..<digits).map { _ in alphabet[Int(generator.next() % 16)] }), Int(generator.next() % 10_000_000) + 1)
        }
    }

    /// The lines as the sorted file has them: sorted by hash, CR LF (or LF) after each.
    public static func sortedFile(_ lines: [(hash: String, count: Int)], crlf: Bool = true) -> Data {
        let end = crlf ? "\r\n" : "\n"
        return Data(lines.sorted { $0.hash < $1.hash }.map { "\($0.hash):\($0.count)\(end)" }.joined().utf8)
    }

    /// Writes the range files of `lines` into `folder`: one per 5-digit prefix among `prefixes`
    /// (all the lines' prefixes when nil), each with every line of that prefix, sorted, CR LF.
    public static func writeRangeFolder(_ lines: [(hash: String, count: Int)], to folder: URL, prefixes: Set<String>? = nil) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var byPrefix: [String: [(String, Int)]] = [:]
        for line in lines { byPrefix[String(line.hash.prefix(5)), default: []].append((String(line.hash.dropFirst(5)), line.count)) }
        // The real 00000.txt is never empty, and readers learn the hash kind from its first line: a
        // fixture without a line there gets one of zeros (no one's password).
        if let digits = lines.first?.hash.count, byPrefix["00000"] == nil {
            byPrefix["00000"] = [(String(repeating: "0", count: digits - 5), 1)]
        }
        for prefix in prefixes ?? Set(byPrefix.keys) {
            let text = (byPrefix[prefix] ?? []).sorted { $0.0 < $1.0 }.map { "\($0.0):\($0.1)\r\n" }.joined()
            try Data(text.utf8).write(to: folder.appendingPathComponent("\(prefix).txt"))
        }
    }
}
