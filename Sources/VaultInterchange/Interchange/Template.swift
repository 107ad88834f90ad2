import VaultFormat
import VaultModel

// MARK: - Templates with secret references

/// Renders templates in which `{{ vf://NAME }}` and `{{ vf://NAME#FIELD }}` stand for stored bytes,
/// and `{{ vf-totp://NAME }}` for the current TOTP code of the entry (`Vault.totpParameters(of:)`).
///
/// Spaces inside the braces are optional (blanks before `}}` are not part of the reference: end
/// the name with `#` to keep them). Other `{{ … }}` text is left alone, so templates for other
/// engines pass through. The reference grammar and its escapes are `SecretReference`'s.
public enum Template {
    /// One reference found in a template.
    public struct Reference: Equatable, Sendable {
        /// The entry's name.
        public var name: String
        /// The field, or nil for the value.
        public var field: String?
        /// The 1-based line it stands on.
        public var line: Int
        /// Whether it is `vf-totp://NAME`: the current code, not stored bytes.
        public var isTOTP = false

        /// The part of the entry it stands for.
        public var part: EntryPart { EntryPart(field: field) }
    }

    /// Replaces every reference in `template` with the bytes `resolve` returns.
    ///
    /// All references are resolved before anything is returned, so a missing one
    /// fails the whole rendering (its name and line in the error).
    public static func render(_ template: [UInt8], resolve: (Reference) throws(VaultError) -> [UInt8]) throws(VaultError) -> [UInt8] {
        try render(template) { (reference, output) throws(VaultError) in output += try resolve(reference) }
    }

    /// Replaces every reference in `template` with the bytes `vault` holds for it, appended from
    /// where they lie (no copy of a value but the rendered text).
    ///
    /// A reference to a missing entry or field fails the whole rendering with
    /// `VaultError.referenceNotFound`, naming it (`NAME` or `NAME#FIELD`) and its line.
    /// A `vf-totp://NAME` reference becomes the code at `time` (seconds since 1970); a URI that
    /// does not parse fails the rendering as `VaultError.malformedInput`, naming the line.
    public static func render(_ template: [UInt8], from vault: Vault, time: Int64 = currentTimeMilliseconds() / 1000) throws(VaultError) -> [UInt8] {
        try render(template) { (reference, output) throws(VaultError) in
            if reference.isTOTP {
                output += try totpCode(of: reference, in: vault, at: time)
                return
            }
            try vault.lookUp(reference.part, of: reference.name) { (bytes) throws(VaultError) in
                output.append(contentsOf: bytes)
            } missing: { (error) throws(VaultError) in
                guard case .entryNotFound(let missing) = error else { throw error }
                throw .referenceNotFound(missing, line: reference.line)
            }
        }
    }

    /// The current code of a `vf-totp://` reference, as bytes.
    private static func totpCode(of reference: Reference, in vault: Vault, at time: Int64) throws(VaultError) -> [UInt8] {
        do {
            return Array(try OneTimePassword.totp(vault.totpParameters(of: reference.name), at: time).code.utf8)
        } catch let error as VaultError {
            guard case .entryNotFound(let missing) = error else { throw error }
            throw .referenceNotFound(missing, line: reference.line)
        } catch {
            throw .malformedInput("line \(reference.line): vf-totp://\(reference.name): \(error)")
        }
    }

    /// Copies `template`, letting `append` write the bytes of each reference.
    private static func render(_ template: [UInt8], append: (Reference, inout [UInt8]) throws(VaultError) -> Void) throws(VaultError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(template.count)
        var index = 0, line = 1
        while index < template.count {
            if template[index] == 0x7B, index + 1 < template.count, template[index + 1] == 0x7B,
               let (reference, end) = try parseReference(template, from: index, line: line) {
                try append(reference, &output)
                index = end
                continue
            }
            if template[index] == 0x0A { line += 1 }
            output.append(template[index])
            index += 1
        }
        return output
    }

    /// Parses `{{ vf://NAME[#FIELD] }}` at `start`; returns the reference and the index after `}}`.
    ///
    /// A reference whose name or field is not UTF-8 is refused (`malformedInput`, naming its line and
    /// byte offset): decoded with U+FFFD for each bad byte, `\xFF` and `\xFE` would name one entry.
    private static func parseReference(_ bytes: [UInt8], from start: Int, line: Int) throws(VaultError) -> (Reference, Int)? {
        var index = start + 2
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        let scheme = Array("vf://".utf8), totpScheme = Array("vf-totp://".utf8)
        var isTOTP = false
        if bytes.count - index >= totpScheme.count, Array(bytes[index..<index + totpScheme.count]) == totpScheme {
            isTOTP = true
            index += totpScheme.count
        } else {
            guard bytes.count - index >= scheme.count, Array(bytes[index..<index + scheme.count]) == scheme else { return nil }
            index += scheme.count
        }
        let bodyStart = index
        while index + 1 < bytes.count, !(bytes[index] == 0x7D && bytes[index + 1] == 0x7D) {
            if bytes[index] == 0x0A { return nil }  // a reference never spans lines
            index += 1
        }
        guard index + 1 < bytes.count else { return nil }
        var body = Array(bytes[bodyStart..<index])
        while let last = body.last, last == 0x20 || last == 0x09 { body.removeLast() }
        guard let text = String(validating: body, as: UTF8.self) else {
            let column = bodyStart - (bytes[..<bodyStart].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            throw .malformedInput("line \(line), column \(column) (byte offset \(bodyStart)): a template reference is not valid UTF-8")
        }
        // The one grammar of references (SecretReference: `##` and a closing `#` are its escapes);
        // a code has no field: `vf-totp://NAME#F` is not a reference, and stays as text.
        guard let parsed = SecretReference.parse(body: text, isTOTP: isTOTP) else { return nil }
        let reference = Reference(name: parsed.name, field: parsed.field, line: line, isTOTP: isTOTP)
        return (reference, index + 2)
    }
}
