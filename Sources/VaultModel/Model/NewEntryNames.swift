// MARK: - The rule for new names

extension EntryName {
    /// Checks a name that a command is about to create and returns its UTF-8 bytes.
    ///
    /// On top of the rules every name follows (`validate(_:)`), a new name holds no format
    /// character (`isFormatCharacter(_:)`): bidi controls such as U+202E would show
    /// `db/<U+202E>drowssap` as `db/password`, and invisible ones such as U+200B would give two
    /// names that look alike. Names already in a vault are read as they are (docs/FORMAT.md §7).
    public static func validateNew(_ name: String) throws(VaultError) -> [UInt8] {
        let bytes = try validate(name)
        if let scalar = name.unicodeScalars.first(where: isFormatCharacter) {
            let what = scalar.properties.name.map { " \($0)" } ?? ""
            throw .invalidName("'\(escapingFormatCharacters(name))' holds U+\(hex(scalar))\(what); "
                               + "a new name cannot hold bidi controls or other invisible format characters")
        }
        return bytes
    }

    /// Whether new names refuse `scalar`: Unicode's format characters (general category Cf, as of
    /// Unicode 16.0, spelled out so that the rule does not move with the toolchain's tables) and
    /// the line and paragraph separators U+2028 and U+2029.
    public static func isFormatCharacter(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        guard value >= 0xAD else { return false }  // the common ASCII and Latin-1 case at once
        var low = 0, high = formatCharacterRanges.count
        while low < high {
            let middle = (low + high) / 2
            if formatCharacterRanges[middle].upperBound < value { low = middle + 1 } else { high = middle }
        }
        return low < formatCharacterRanges.count && formatCharacterRanges[low].contains(value)
    }

    /// The scalars of `isFormatCharacter(_:)`, sorted.
    static let formatCharacterRanges: [ClosedRange<UInt32>] = [
        0x00AD...0x00AD,      // soft hyphen
        0x0600...0x0605, 0x061C...0x061C, 0x06DD...0x06DD, 0x070F...0x070F, 0x0890...0x0891, 0x08E2...0x08E2,
        0x180E...0x180E,      // Mongolian vowel separator
        0x200B...0x200F,      // zero-width space, joiners, LRM, RLM
        0x2028...0x2029,      // line and paragraph separators (Zl, Zp)
        0x202A...0x202E,      // bidi embeddings and overrides
        0x2060...0x2064, 0x2066...0x206F,  // word joiner, invisible operators, bidi isolates, deprecated controls
        0xFEFF...0xFEFF,      // zero-width no-break space (BOM)
        0xFFF9...0xFFFB,      // interlinear annotation
        0x110BD...0x110BD, 0x110CD...0x110CD, 0x13430...0x1343F, 0x1BCA0...0x1BCA3, 0x1D173...0x1D17A,
        0xE0001...0xE0001, 0xE0020...0xE007F,  // tags
    ]

    /// `name` with each format character written as `\u{XXXX}`, for a terminal or a message.
    ///
    /// A name without one comes back as it is. (A backslash is not escaped: the form is for
    /// people, and list's piped output stays the names' bytes.)
    public static func escapingFormatCharacters(_ name: String) -> String {
        guard name.unicodeScalars.contains(where: isFormatCharacter) else { return name }
        var shown = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if isFormatCharacter(scalar) { shown.append(contentsOf: "\\u{\(hex(scalar))}".unicodeScalars) } else { shown.append(scalar) }
        }
        return String(shown)
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension Vault {
    /// Throws unless `name` names an entry of this vault already or may be created
    /// (`EntryName.validateNew(_:)`); what a command checks before it creates an entry.
    public func checkNewName(_ name: String) throws(VaultError) {
        guard !contains(name) else { return }
        _ = try EntryName.validateNew(name)
    }
}
