// MARK: - Unicode forms of entry names

/// New entry names are stored in Unicode Normalization Form C (docs/FORMAT.md §7).
///
/// "é" can be typed as one code point (U+00E9, NFC, what most keyboards send) or as "e" and a
/// combining accent (U+0065 U+0301, NFD, what some file systems and copied text hold). The format
/// compares names as bytes and this stays so: vaults written before names were normalised may hold
/// either form, even both as two entries, and every one of them must stay reachable. So:
///
/// - a name that creates an entry (set, mv and cp targets, import, a merge bringing in an entry) is
///   stored in NFC;
/// - a lookup tries the exact bytes first, then the NFC form (`Vault.existingKey(for:)`);
/// - a new name canonically equivalent to an existing entry's (its "twin") is refused, naming both.
///
/// NFC comes from the Swift standard library (`String._nfcCodeUnits`, public in its interface and
/// the routine Foundation's `precomposedStringWithCanonicalMapping` rests on): Foundation on Linux
/// would bring ICU, and the library's own copy of the Unicode tables is what the standard library
/// already links.
extension EntryName {
    /// `name` in Normalization Form C; ASCII and names already in NFC come back unchanged.
    public static func normalized(_ name: String) -> String {
        normalizedIfDifferent(name) ?? name
    }

    /// `name` in Normalization Form C when that differs from `name`, else nil: `normalized(_:)` for
    /// many names, an ASCII name (most) found so a word at a time and never compared again.
    package static func normalizedIfDifferent(_ name: String) -> String? {
        var name = name
        guard name.withUTF8({ Vault.hasNonASCII(UnsafeRawBufferPointer($0)) }) else { return nil }
        let composed = name._nfcCodeUnits
        return composed.elementsEqual(name.utf8) ? nil : String(decoding: composed, as: UTF8.self)
    }

    /// Whether `name` is in Normalization Form C (what a new name is stored as).
    public static func isNormalized(_ name: String) -> Bool {
        isASCII(name.utf8) || name._nfcCodeUnits.elementsEqual(name.utf8)
    }

    /// The NFC bytes of `name` when they differ from `key` (its UTF-8), else nil: the second try of a lookup.
    static func normalizedKey(of name: String, ifDifferentFrom key: [UInt8]) -> [UInt8]? {
        guard !isASCII(key) else { return nil }
        let composed = name._nfcCodeUnits
        return composed == key ? nil : composed
    }

    /// `name` written so that its form shows and a shell reads it back: Bash's `$'…'` with every
    /// non-ASCII code point as `\uXXXX` (`$'cafe\u0301'`), or plain `'…'` for printable ASCII.
    ///
    /// Two canonically equivalent names look alike on a terminal; messages about them show this.
    public static func spelledOut(_ name: String) -> String {
        guard name.unicodeScalars.contains(where: { !$0.isASCII || $0 == "'" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F }) else {
            return "'\(name)'"
        }
        var out = "$'"
        for scalar in name.unicodeScalars {
            switch scalar {
            case "'": out += "\\'"
            case "\\": out += "\\\\"
            case _ where scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F: out.unicodeScalars.append(scalar)
            case _ where scalar.value <= 0xFFFF: out += "\\u" + hexDigits(scalar.value, width: 4)
            default: out += "\\U" + hexDigits(scalar.value, width: 8)
            }
        }
        return out + "'"
    }

    // MARK: Private

    private static func isASCII<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.contains { $0 >= 0x80 }
    }

    private static func hexDigits(_ value: UInt32, width: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

// MARK: - Lookups and new names in a vault

extension Vault {
    /// The stored name `name` refers to: the exact bytes when such an entry exists, else its NFC
    /// form when that exists (a name typed decomposed finds the entry stored composed); else nil.
    public func existingName(for name: String) -> String? {
        existingKey(for: name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The name of another entry that is canonically equivalent to `name` (the same text in another
    /// Unicode form) but not byte-equal to it, or nil.
    ///
    /// Only names with non-ASCII bytes can be such twins of a name in NFC; the scan converts no
    /// ASCII name, so its cost is one pass over the name bytes.
    public func canonicalTwin(of name: String) -> String? {
        canonicalTwin(of: name, key: Array(name.utf8), excluding: nil)
    }

    /// The key of the entry `name` refers to (exact bytes, then NFC), or nil.
    func existingKey(for name: String) -> [UInt8]? {
        let exact = Array(name.utf8)
        if contains(key: exact) { return exact }
        guard let normalized = EntryName.normalizedKey(of: name, ifDifferentFrom: exact), contains(key: normalized) else { return nil }
        return normalized
    }

    /// The key under which an edit stores `name`: an entry's existing spelling (exact, then NFC), else
    /// the NFC form as a new name, checked against the naming rules and against twins. `renaming` is
    /// the key of an entry being renamed, which may be the twin (renaming a name into NFC).
    func writableKey(for name: String, renaming: [UInt8]? = nil) throws(VaultError) -> [UInt8] {
        if let existing = existingKey(for: name) { return existing }
        let normalized = EntryName.normalized(name)
        let key = try EntryName.validate(normalized)
        if let twin = canonicalTwin(of: normalized, key: key, excluding: renaming) {
            throw .nameTwin(name: normalized, existing: twin)
        }
        return key
    }

    /// See `canonicalTwin(of:)`; `excluding` is a key that does not count.
    ///
    /// The scan runs when `set` or `mv` creates a name. Only names with a byte of 0x80 or more
    /// can be another spelling of a name (Swift's `==` is canonical equivalence), and the vault
    /// keeps their places: the stored ones found in one pass at decryption, the edited ones as
    /// they are put. A vault of ASCII names costs nothing here, and a batch or an import of many
    /// new names stays linear.
    private func canonicalTwin(of name: String, key: [UInt8], excluding: [UInt8]?) -> String? {
        func isTwin(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard !bytes.elementsEqual(key), excluding.map({ !bytes.elementsEqual($0) }) ?? true else { return false }
            return String(decoding: bytes, as: UTF8.self) == name
        }
        if let stored = storedRecords {
            for index in storedNonASCIINames {
                let twin: String? = withExtendedLifetime(stored) {
                    let bytes = stored.name(at: index)
                    // A stored name replaced or removed since decryption is an edit's business.
                    guard !changesContain(bytes), isTwin(bytes) else { return nil }
                    return String(decoding: bytes, as: UTF8.self)
                }
                if let twin { return twin }
            }
        }
        for edited in nonASCIIEditedKeys where edited.withUnsafeBytes(isTwin) {
            return String(decoding: edited, as: UTF8.self)
        }
        return nil
    }

    /// The indices of the names of `stored` that hold a byte of 0x80 or more, in order; none
    /// after one word-at-a-time pass when every name is ASCII.
    static func nonASCIINameIndices(of stored: StoredRecords) -> [Int] {
        guard stored.hasNonASCIIName(in: 0..<stored.count) else { return [] }
        return withExtendedLifetime(stored) { (0..<stored.count).filter { hasNonASCII(stored.name(at: $0)) } }
    }

    /// Whether `bytes` hold a byte of 0x80 or more: the words OR-ed together (the last one
    /// overlapping the one before it), one test at the end.
    @inline(__always)
    package static func hasNonASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count >= 8 else {
            var all: UInt8 = 0
            for byte in bytes { all |= byte }
            return all >= 0x80
        }
        var all: UInt64 = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        var index = 0
        while index + 8 <= count {
            all |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        return all & 0x8080_8080_8080_8080 != 0
    }
}
