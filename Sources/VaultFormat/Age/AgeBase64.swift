import CSodium
import SecureMemory

// MARK: - age's base64

/// The base64 of age headers: RFC 4648 §4 without `=` padding, canonical only (RFC 4648 §3.5),
/// and the padded, canonical base64 of the ASCII armor.
///
/// Canonical is checked by encoding the decoded bytes again and comparing: two texts that decode
/// to one value (unused low bits set, padding, whitespace) would make the header malleable.
enum AgeBase64 {
    /// The bytes of `text`, or nil when it is not canonical unpadded base64 (an empty text is no bytes).
    static func decodeUnpadded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        decode(text, padded: false)
    }

    /// The bytes of `text`, or nil when it is not canonical padded base64.
    static func decodePadded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        decode(text, padded: true)
    }

    /// Unpadded base64 of `bytes`.
    static func encodeUnpadded(_ bytes: some Collection<UInt8>) -> [UInt8] { encode(bytes, padded: false) }

    /// Padded base64 of `bytes`.
    static func encodePadded(_ bytes: some Collection<UInt8>) -> [UInt8] { encode(bytes, padded: true) }

    private static func variant(_ padded: Bool) -> Int32 {
        padded ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING
    }

    private static func decode(_ text: ArraySlice<UInt8>, padded: Bool) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        // Only the 64 letters (and '=' when padded) may appear: libsodium would stop at anything else.
        guard text.allSatisfy({ isLetter($0) || (padded && $0 == UInt8(ascii: "=")) }) else { return nil }
        ensureSodiumInitialised()
        var output = [UInt8](repeating: 0, count: text.count / 4 * 3 + 3)
        var length = 0
        var end: UnsafePointer<CChar>? = nil
        let input = Array(text)
        let status = input.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(&output, output.count, chars.baseAddress, chars.count, nil, &length, &end, variant(padded))
            }
        }
        let consumed = end.map { pointer in input.withUnsafeBufferPointer { UnsafeRawPointer(pointer) - UnsafeRawPointer($0.baseAddress!) } }
        guard status == 0, consumed == input.count else { return nil }
        let decoded = Array(output.prefix(length))
        wipe(&output)
        guard encode(decoded, padded: padded).elementsEqual(text) else { return nil }
        return decoded
    }

    private static func encode(_ bytes: some Collection<UInt8>, padded: Bool) -> [UInt8] {
        ensureSodiumInitialised()
        let input = Array(bytes)
        var output = [CChar](repeating: 0, count: sodium_base64_encoded_len(input.count, variant(padded)))
        _ = sodium_bin2base64(&output, output.count, input, input.count, variant(padded))
        return output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }

    /// Whether `byte` is one of base64's 64 letters.
    static func isLetter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "/"): return true
        default: return false
        }
    }
}
