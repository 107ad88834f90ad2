import SecureMemory
import VaultModel

// MARK: - git's credential protocol (gitcredentials(7), git-credential(1))

/// One request git writes to a credential helper: `key=value` lines ended by a blank line or the
/// end of input. The attributes a helper acts on are read; the others (`capability[]`, `wwwauth[]`,
/// `password_expiry_utc`, `oauth_refresh_token`, `authtype`, `credential`, `state[]`, `ephemeral`,
/// `continue`, and whatever newer git adds) are passed over, as the protocol asks.
///
/// Bad input is refused as a whole (`VaultError.malformedInput`, naming the line, never a
/// value): a line without `=`, an empty key, a NUL byte, a line over `maxLineLength` or input
/// over `maxInputLength`, a host, path, protocol or user name that is not UTF-8 or holds a
/// control character.
public struct GitCredentialRequest: Sendable {
    /// `protocol`, lowercased (`https`, `http`, …).
    public var protocolName: String?
    /// `host`, as git sends it (`HOST` or `HOST:PORT`).
    public var host: String?
    /// `path`, which git sends only with `credential.useHttpPath` (or for `cert`).
    public var path: String?
    /// `username`.
    public var username: String?
    /// `password` (`store` and `erase`), its bytes; wipe them with `wipePassword()`.
    public var password: [UInt8]?

    /// The longest line read: far above any real attribute (a token, a `wwwauth[]` header).
    public static let maxLineLength = 65_536
    /// The most input read for one request.
    public static let maxInputLength = 1 << 20

    /// An empty request.
    public init() {}

    /// Wipes the password's bytes.
    public mutating func wipePassword() {
        if var bytes = password { wipe(&bytes) }
        password = nil
    }

    // MARK: Framing

    /// Where the request in `bytes` (read so far) ends: the index after its blank line, or nil
    /// while more may come. Throws as soon as a line passes `maxLineLength` or the input
    /// `maxInputLength`, so that a reader stops reading a 100 MB line after 64 KiB.
    public static func end(in bytes: [UInt8]) throws(VaultError) -> Int? {
        var lineStart = 0, lineNumber = 1
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            try checkLength(index - lineStart, line: lineNumber)
            // A blank line ("\n" or "\r\n") ends the request.
            if index == lineStart || (index == lineStart + 1 && bytes[lineStart] == 0x0D) { return index + 1 }
            lineStart = index + 1
            lineNumber += 1
        }
        try checkLength(bytes.count - lineStart, line: lineNumber)
        guard bytes.count <= maxInputLength else {
            throw .malformedInput("git credential input: more than \(maxInputLength) bytes; nothing was answered")
        }
        return nil
    }

    private static func checkLength(_ length: Int, line: Int) throws(VaultError) {
        guard length <= maxLineLength else {
            throw .malformedInput("git credential input, line \(line): longer than \(maxLineLength) bytes; nothing was answered")
        }
    }

    // MARK: Parsing

    /// Parses a whole request (up to its blank line, or all of `bytes`).
    public static func parse(_ bytes: [UInt8]) throws(VaultError) -> GitCredentialRequest {
        let end = try self.end(in: bytes) ?? bytes.count
        var request = GitCredentialRequest()
        var lineStart = 0, lineNumber = 0
        while lineStart < end {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < end && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            let next = lineEnd + 1
            // git reads lines with strbuf_getline, which drops a CR before the LF.
            if lineEnd > lineStart && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            defer { lineStart = next }
            if lineEnd == lineStart { break }  // the blank line
            let line = bytes[lineStart..<lineEnd]
            guard !line.contains(0) else {
                request.wipePassword()
                throw .malformedInput("git credential input, line \(lineNumber): a NUL byte; nothing was answered")
            }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")), equals > lineStart else {
                request.wipePassword()
                throw .malformedInput("git credential input, line \(lineNumber): expected key=value; nothing was answered")
            }
            let key = String(decoding: bytes[lineStart..<equals], as: UTF8.self)
            let value = bytes[(equals + 1)..<lineEnd]
            do {
                try request.take(key: key, value: value, line: lineNumber)
            } catch {
                request.wipePassword()
                throw error
            }
        }
        return request
    }

    /// Keeps the attribute `key` (a later line wins, as in git); passes over the others.
    private mutating func take(key: String, value: ArraySlice<UInt8>, line: Int) throws(VaultError) {
        switch key {
        case "protocol": protocolName = try Self.text(value, key: key, line: line).lowercased()
        case "host": host = try Self.text(value, key: key, line: line)
        case "path": path = try Self.text(value, key: key, line: line)
        case "username": username = try Self.text(value, key: key, line: line)
        case "password":
            wipePassword()
            password = Array(value)
        default:
            return  // capability[], wwwauth[], password_expiry_utc, oauth_refresh_token, … and what newer git adds
        }
    }

    /// A value that names things: UTF-8 without control characters.
    private static func text(_ value: ArraySlice<UInt8>, key: String, line: Int) throws(VaultError) -> String {
        guard let text = String(validating: value, as: UTF8.self),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw .malformedInput("git credential input, line \(line): the \(key) is not UTF-8 text without control characters; nothing was answered")
        }
        return text
    }
}
