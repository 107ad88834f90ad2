import VaultModel

// MARK: - vf:// references

/// A reference to stored bytes: `vf://NAME` (the value), `vf://NAME#FIELD` (a field), or
/// `vf-totp://NAME` (the current TOTP code). The one grammar of `inject` templates,
/// `vaultfile read` and `exec --env-file`.
///
/// The name runs up to the first single `#`; the field is what follows it. Two escapes, each
/// made of a form that never resolved before they existed (a field name holds no `#` and is
/// never empty), so that no reference that worked changes its meaning:
/// - `##` in the name stands for one `#` (`vf://a##b#user` is the field `user` of `a#b`);
/// - a `#` with nothing after it ends the name and means the value (`vf://name #` is the value of
///   `name ` with its trailing blank, which a template would otherwise trim before `}}`).
///
/// `vf-totp://` takes its name as written, escapes included: a `#` there was never a reference
/// (a code has no field), so its text stays text.
public struct SecretReference: Equatable, Sendable {
    /// The entry's name.
    public var name: String
    /// The field, or nil for the value.
    public var field: String?
    /// Whether it is `vf-totp://NAME`: the current code, not stored bytes.
    public var isTOTP = false

    /// The scheme of stored bytes.
    public static let scheme = "vf://"
    /// The scheme of a TOTP code.
    public static let totpScheme = "vf-totp://"

    /// A reference to `name` (and `field`).
    public init(name: String, field: String? = nil, isTOTP: Bool = false) {
        self.name = name
        self.field = field
        self.isTOTP = isTOTP
    }

    /// The part of the entry it stands for.
    public var part: EntryPart { EntryPart(field: field) }

    /// Parses a whole reference, `vf://BODY` or `vf-totp://BODY`, taken as it is (no blanks
    /// trimmed); nil when `text` starts with neither scheme or names nothing.
    public static func parse(_ text: String) -> SecretReference? {
        if text.hasPrefix(totpScheme) { return parse(body: Substring(text.utf8.dropFirst(totpScheme.utf8.count)), isTOTP: true) }
        guard text.hasPrefix(scheme) else { return nil }
        return parse(body: Substring(text.utf8.dropFirst(scheme.utf8.count)), isTOTP: false)
    }

    /// Parses what follows the scheme; nil when it names nothing (empty), or, for a TOTP
    /// reference, when it has a `#` (a code has no field: templates leave such text alone).
    public static func parse<Body: StringProtocol>(body: Body, isTOTP: Bool) -> SecretReference? {
        guard !body.isEmpty else { return nil }
        if isTOTP { return body.contains("#") ? nil : SecretReference(name: String(body), isTOTP: true) }
        // '#' is ASCII and never part of a multi-byte character: the bytes are cut without decoding.
        let bytes = Array(body.utf8)
        var name: [UInt8] = [], index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "#") else {
                name.append(bytes[index])
                index += 1
                continue
            }
            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "#") {
                name.append(UInt8(ascii: "#"))
                index += 2
                continue
            }
            let field = bytes[(index + 1)...]
            return SecretReference(name: String(decoding: name, as: UTF8.self),
                                   field: field.isEmpty ? nil : String(decoding: field, as: UTF8.self))
        }
        return SecretReference(name: String(decoding: name, as: UTF8.self))
    }

    /// The reference written back in its grammar (`#` in the name doubled; an empty name or one that
    /// ends with a blank closed with `#` when there is no field), for messages: it names the
    /// reference, never a value. `parse(text)` gives the reference back.
    public var text: String {
        if isTOTP { return Self.totpScheme + name }
        var written = Self.scheme + name.replacingAll("#", with: "##")
        if let field {
            written += "#" + field
        } else if name.isEmpty || name.last == " " || name.last == "\t" {
            written += "#"
        }
        return written
    }
}

private extension String {
    /// `self` with every `target` replaced by `replacement` (no Foundation in the library).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
