import SecureMemory
import VaultModel

// MARK: - Readable titles

extension ForeignNaming {

    /// A title that names a site by its URL (`https://news.ycombinator.com/`) as the site's host
    /// and path (`news.ycombinator.com`): the scheme and its `//`, which would make an empty name
    /// segment, dropped; a path's '/' becomes '-' as in every title. Any other title as it is.
    static func readable(_ title: String) -> String {
        // Most titles name no URL: no "://" in their bytes, nothing to do (and no String search).
        guard containsSchemeSeparator(title) else { return title }
        let trimmed = title.trimmed
        guard let site = site(of: trimmed), trimmed.contains("://") else { return title }
        return site
    }

    /// Whether `text` holds "://" (by its bytes: the three are ASCII, so never part of a larger character).
    private static func containsSchemeSeparator(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count >= 3 else { return false }
            for index in 0..<(bytes.count - 2) where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/") && bytes[index + 2] == UInt8(ascii: "/") {
                return true
            }
            return false
        }
    }

    /// The host and path of a URL (`https://x.example/a/` → `x.example/a`), without scheme,
    /// user, query or fragment; nil when `url` has no `scheme://` or no host.
    static func site(of url: String?) -> String? {
        guard let url, containsSchemeSeparator(url) else { return nil }
        // An ASCII URL (most) by its bytes: the same steps, without Character indexing.
        var bytes = url
        if let found = bytes.withUTF8({ asciiSite($0) }) { return found }
        return siteByCharacters(of: url)
    }

    /// `site(of:)` Character by Character: any URL (the plain reference of `asciiSite`;
    /// `ForeignNamingTests.test_site_asciiBytesAgreeWithTheCharacterSteps` ties the two).
    static func siteByCharacters(of url: String) -> String? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound]
        guard !scheme.isEmpty, scheme.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || "+-.".unicodeScalars.contains($0) || ("0"..."9").contains($0) }) else {
            return nil
        }
        var rest = url[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let slash = rest.firstIndex(of: "/"), let at = rest[..<slash].lastIndex(of: "@") {
            rest = rest[rest.index(after: at)...]
        } else if !rest.contains("/"), let at = rest.lastIndex(of: "@") {
            rest = rest[rest.index(after: at)...]
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let text = String(rest).trimmed
        guard !text.isEmpty, !text.hasPrefix("/") else { return nil }
        return text
    }

    /// `site(of:)` of an ASCII URL, step for step on its bytes (in ASCII each byte is one
    /// Character, so the steps find what the Character ones do); nil when `url` is not ASCII (the
    /// caller then takes the Character steps), `.some(nil)` when it names no site.
    private static func asciiSite(_ url: UnsafeBufferPointer<UInt8>) -> String?? {
        guard !url.contains(where: { $0 >= 0x80 }) else { return nil }
        let count = url.count
        var schemeEnd = 0
        while schemeEnd + 2 < count, !(url[schemeEnd] == UInt8(ascii: ":") && url[schemeEnd + 1] == UInt8(ascii: "/") && url[schemeEnd + 2] == UInt8(ascii: "/")) {
            schemeEnd += 1
        }
        guard schemeEnd + 2 < count, schemeEnd > 0 else { return .some(nil) }
        for byte in url[0..<schemeEnd] {
            let letter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            let digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard letter || digit || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") else { return .some(nil) }
        }
        var start = schemeEnd + 3, end = count
        if let cut = url[start..<end].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { end = cut }
        if let slash = url[start..<end].firstIndex(of: UInt8(ascii: "/")) {
            if let at = url[start..<slash].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        } else if let at = url[start..<end].lastIndex(of: UInt8(ascii: "@")) {
            start = at + 1
        }
        while end > start, url[end - 1] == UInt8(ascii: "/") { end -= 1 }
        // `trimmed` (spaces and tabs at either end) on the bytes, before the one string is made.
        while start < end, url[start] == 0x20 || url[start] == 0x09 { start += 1 }
        while end > start, url[end - 1] == 0x20 || url[end - 1] == 0x09 { end -= 1 }
        guard start < end, url[start] != UInt8(ascii: "/") else { return .some(nil) }
        return .some(String(decoding: UnsafeBufferPointer(rebasing: url[start..<end]), as: UTF8.self))
    }
}
