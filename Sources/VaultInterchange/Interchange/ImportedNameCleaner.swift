import VaultModel

// MARK: - Names from other tools

/// Turns other tools' titles, folder names and labels into valid entry and field names
/// (KeePassXC CSV and Bitwarden JSON imports).
enum ImportedNameCleaner {
    /// Joins path parts, dropping empty ones and turning control characters, format characters,
    /// `.` and `..` parts into safe text.
    ///
    /// An ASCII part is cleaned by its bytes (a control character or DEL becomes a space, '/' a '-'),
    /// which is what the walk over its scalars does; `InterchangeTests.test_entryName_asciiPartsMatchTheScalarWalk`
    /// ties the two.
    static func entryName(fromParts parts: [String]) -> String {
        func cleaned(_ part: String) -> String {
            if let cleaned = cleanedASCII(part) { return cleaned == "." || cleaned == ".." ? "_" + cleaned : cleaned }
            return cleanedByScalars(part)
        }
        if parts.count == 1 { return cleaned(parts[0]) }  // a title outside folders: nothing to join
        return parts.map(cleaned).filter { !$0.isEmpty }.joined(separator: "/")
    }

    /// An ASCII part with control characters and DEL as spaces, '/' as '-', trimmed; nil for other text.
    private static func cleanedASCII(_ part: String) -> String? {
        var text = part
        let (ascii, clean) = text.withUTF8 { bytes -> (Bool, Bool) in
            var high: UInt8 = 0, clean = true
            for byte in bytes {
                high |= byte
                if byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "/") { clean = false }
            }
            return (high < 0x80, clean)
        }
        guard ascii else { return nil }
        guard !clean else { return part.trimmed }
        let mapped = part.utf8.map { byte in
            byte < 0x20 || byte == 0x7F ? UInt8(ascii: " ") : (byte == UInt8(ascii: "/") ? UInt8(ascii: "-") : byte)
        }
        return String(decoding: mapped, as: UTF8.self).trimmed
    }

    /// `entryName(fromParts:)` for one part, scalar by scalar: the plain reference. Invisible
    /// format characters (`EntryName.isFormatCharacter`: a zero-width space or BOM pasted from a
    /// web page, a bidi mark of a right-to-left title), which a new name may not hold, are left
    /// out (the line and paragraph separators become spaces), so that one such title does not
    /// stop the whole import; the name is then listed as cleaned and the title kept in `title`.
    static func cleanedByScalars(_ part: String) -> String {
        var safe = ""
        for scalar in part.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 { safe += " " }
            else if scalar == "/" { safe += "-" }
            else if EntryName.isFormatCharacter(scalar) { continue }
            else { safe.unicodeScalars.append(scalar) }
        }
        let cleaned = safe.trimmedByCharacters
        return cleaned == "." || cleaned == ".." ? "_" + cleaned : cleaned
    }

    /// A field name from any label, at most 64 bytes: an ASCII label with each character outside
    /// `A–Z a–z 0–9 _ . -` as `_`; a label with other characters as `xn--` and the Punycode of its
    /// NFC form (those ASCII characters `_` first): `Пин` → `xn--r0a4cp`, distinct for distinct
    /// labels (up to the cut at 64) and decoded by any IDNA tool (docs/INTERCHANGE.md, "Fields").
    /// An attachment's `attachment.NAME` keeps its prefix: only NAME is made a name.
    static func fieldName(fromLabel label: String) -> String {
        // A label that is a field name already (`username`) comes back as it is, as the walk returns it.
        var bytes = label
        if bytes.withUTF8({ EntryName.isValidField(UnsafeRawBufferPointer($0)) }) { return label }
        return fieldNameByScalars(fromLabel: label)
    }

    /// `fieldName(fromLabel:)` scalar by scalar: the plain reference.
    static func fieldNameByScalars(fromLabel label: String) -> String {
        let prefix = ForeignBuilder.attachmentPrefix
        if label.unicodeScalars.contains(where: { !$0.isASCII }), label.hasPrefix(prefix) {
            return prefix + String(encoded(String(label.dropFirst(prefix.count))).prefix(VaultLimits.maxFieldNameLength - prefix.utf8.count))
        }
        let mapped = encoded(label).prefix(VaultLimits.maxFieldNameLength)
        return mapped.isEmpty ? "field" : String(mapped)
    }

    /// `label` with each ASCII character a field name cannot hold as `_`, then, when it holds any
    /// other character, as `xn--` and the Punycode of its NFC form.
    private static func encoded(_ label: String) -> String {
        func allowed(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "_.-".unicodeScalars.contains(scalar)
        }
        let scalars = EntryName.normalized(label).unicodeScalars.map { $0.isASCII && !allowed($0) ? "_" : $0 }
        guard scalars.contains(where: { !$0.isASCII }), let punycode = Punycode.encode(scalars) else {
            return String(String.UnicodeScalarView(scalars.map { allowed($0) ? $0 : "_" }))
        }
        return "xn--" + punycode
    }
}
