import VaultModel

// MARK: - The names of git credential entries

/// The name of a git credential entry, read into its parts: `git/[USER@]HOST[/PATH…]`, where
/// HOST is `HOST[:PORT]`. The one reading of such names: `GitCredentialEntries.lookUp` answers
/// through it, and `store` writes only names that read back, through it, as the request they came
/// from (same user, host, port and path): `storable(user:host:protocolName:)` refuses any user
/// name or host that would read back otherwise.
///
/// Why the rules: the first component is split at its last `@` (a user name may hold `@`, an
/// e-mail address; a host never does), and the name at each `/`. A user name `evil.com/x` stored
/// as `git/evil.com/x@github.com` would read back as host `evil.com` with the path
/// `x@github.com`, and be sent to evil.com (the attacker's review of 2026-11-27). `#` separates a
/// field in `vf://` references, and spaces, quotes and wildcards make names awkward to type.
public struct GitCredentialName: Equatable, Sendable {
    /// The user of a `USER@HOST` name, or nil.
    public var user: String?
    /// `HOST` or `HOST:PORT`, as written in the name.
    public var host: String
    /// The path components after the host (none for `git/HOST`).
    public var path: [String]

    /// A name's parts.
    public init(user: String?, host: String, path: [String]) {
        self.user = user
        self.host = host
        self.path = path
    }

    /// The parts of `name`, or nil when it is not under `git/` or has no host.
    public static func parse(_ name: String) -> GitCredentialName? {
        guard name.utf8.starts(with: GitCredentialEntries.folder.utf8) else { return nil }
        // Split on the bytes of '/' and '@', never on Characters: a combining mark after '@'
        // would make one Character of the two and hide the '@' from a Character search.
        var components = name.utf8.dropFirst(GitCredentialEntries.folder.utf8.count).split(separator: UInt8(ascii: "/"))
        guard !components.isEmpty else { return nil }
        let first = components.removeFirst()
        let path = components.map { String(decoding: $0, as: UTF8.self) }
        // USER@HOST: a user name may hold '@' itself (an e-mail address); a host never does.
        guard let at = first.lastIndex(of: UInt8(ascii: "@")) else {
            return GitCredentialName(user: nil, host: String(decoding: first, as: UTF8.self), path: path)
        }
        return GitCredentialName(user: String(decoding: first[..<at], as: UTF8.self),
                                 host: String(decoding: first[first.index(after: at)...], as: UTF8.self), path: path)
    }

    /// The entry name of these parts, in NFC (as the vault keeps a new name).
    public var text: String {
        let first = (user.map { $0 + "@" } ?? "") + host
        return EntryName.normalized(GitCredentialEntries.folder + ([first] + path).joined(separator: "/"))
    }

    // MARK: What store may write

    /// The ASCII punctuation a user name may hold besides letters and digits of any script: what
    /// user names and e-mail addresses of git hosts use. Not `/` (a path), `#` (a field in a
    /// reference), `:` (a port), `%` (URL escapes), spaces, quotes, backslashes or wildcards.
    static let userPunctuation: Set<Unicode.Scalar> = [".", "-", "_", "+", "~", "@", "!", "$", "&", "'", "=", ",", ";"]

    /// Why `store` refuses to write a credential for `user` at `host` over `protocolName`, or nil
    /// when their name reads back as they are. The reason names the attribute, never a password.
    public static func refusal(user: String, host: String, protocolName: String) -> String? {
        guard protocolName.utf8.first.map({ (0x61...0x7A).contains($0) }) == true,
              protocolName.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) }) else {
            return "the protocol '\(protocolName)' is not a URL scheme (letters, digits, '+', '-' or '.')"
        }
        guard !user.isEmpty else { return "the user name is empty" }
        // A combining mark first would join the '/' or '@' before it into one character.
        guard !startsWithMark(user), user.unicodeScalars.allSatisfy({ isWordScalar($0) || userPunctuation.contains($0) }) else {
            return "the user name '\(user)' holds a character other than letters, digits and . - _ + ~ @ ! $ & ' = , ; "
                + "(a '/' or '#' would make the entry's name read back as another host, path or field)"
        }
        guard isHost(host) else {
            return "the host '\(host)' is not a host name (letters, digits, '-', '_', '.'), an IPv6 address in brackets, "
                + "or either with ':PORT'"
        }
        return nil
    }

    /// Whether `host` is `NAME[:PORT]` or `[IPv6][:PORT]`: NAME of letters and digits of any script,
    /// `-`, `_` and `.`; PORT of 1 to 5 digits.
    static func isHost(_ host: String) -> Bool {
        var rest = Substring(host)
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            let inside = rest[rest.index(after: rest.startIndex)..<close]
            guard !inside.isEmpty, inside.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }) else { return false }
            rest = rest[rest.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return false }
        } else {
            let name = rest.prefix { $0 != ":" }
            guard !name.isEmpty, !startsWithMark(String(name)), name.unicodeScalars.allSatisfy({ isWordScalar($0) || $0 == "-" || $0 == "_" || $0 == "." }),
                  name.contains(where: { $0 != "." }) else { return false }
            rest = rest[name.endIndex...]
        }
        guard !rest.isEmpty else { return true }
        let port = rest.dropFirst()
        return (1...5).contains(port.count) && port.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    /// Whether `text` begins with a combining mark.
    private static func startsWithMark(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return false }
        return [.nonspacingMark, .spacingMark, .enclosingMark].contains(first.properties.generalCategory)
    }

    /// A letter or digit of any script (not punctuation, symbols, spaces or controls).
    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark:
            return true
        default:
            return false
        }
    }
}
