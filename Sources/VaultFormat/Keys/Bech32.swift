// MARK: - Bech32 (BIP 173)

/// Bech32 as BIP 173 defines it (the original checksum constant 1, not Bech32m), the encoding of
/// age's keys. Checked against BIP 173's valid and invalid test vectors (`Bech32Tests`).
public enum Bech32 {
    /// The 32 data characters, in value order.
    static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    /// BIP 173's longest string. age keys (62 and 74 characters) are well under it.
    public static let maxLength = 90

    /// Why a string is not valid Bech32.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLong
        case mixedCase
        case invalidCharacter
        case noSeparator
        case emptyHumanReadablePart
        case checksumTooShort
        case invalidChecksum
        case invalidPadding

        public var description: String {
            switch self {
            case .tooLong: return "is longer than \(maxLength) characters"
            case .mixedCase: return "mixes upper and lower case"
            case .invalidCharacter: return "holds a character Bech32 does not use"
            case .noSeparator: return "has no '1' separator"
            case .emptyHumanReadablePart: return "has nothing before its '1' separator"
            case .checksumTooShort: return "is too short to hold a checksum"
            case .invalidChecksum: return "fails its checksum (a typo, or a truncated key)"
            case .invalidPadding: return "does not end on a whole byte"
            }
        }
    }

    // MARK: Encoding

    /// Encodes `data` (bytes) under `humanReadablePart`, lower case unless `upperCase`.
    public static func encode(humanReadablePart: String, data: [UInt8], upperCase: Bool = false) -> String {
        let text = encode(humanReadablePart: humanReadablePart, values: convertBits(data, from: 8, to: 5, pad: true)!)
        return upperCase ? text.uppercased() : text
    }

    /// Encodes 5-bit `values` (each below 32) under `humanReadablePart`, in lower case.
    static func encode(humanReadablePart: String, values: [UInt8]) -> String {
        let hrp = Array(humanReadablePart.lowercased().utf8)
        let checksum = makeChecksum(hrp: hrp, values: values)
        var output = hrp + [UInt8(ascii: "1")]
        output += (values + checksum).map { alphabet[Int($0)] }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Decoding

    /// Decodes `text` into its human-readable part (as written) and its 5-bit values, checksum
    /// verified and removed. Rejects what BIP 173 rejects: mixed case, characters outside
    /// 33…126, no separator, an empty human-readable part, fewer than six checksum characters,
    /// a character outside the alphabet, a wrong checksum, more than `maxLength` characters.
    public static func decodeValues(_ text: String, maxLength: Int = Bech32.maxLength) throws(Failure) -> (humanReadablePart: String, values: [UInt8]) {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxLength else { throw .tooLong }
        guard bytes.allSatisfy({ (33...126).contains($0) }) else { throw .invalidCharacter }
        let hasLower = bytes.contains { (0x61...0x7A).contains($0) }, hasUpper = bytes.contains { (0x41...0x5A).contains($0) }
        guard !(hasLower && hasUpper) else { throw .mixedCase }
        let lower = bytes.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")) else { throw .noSeparator }
        guard separator > 0 else { throw .emptyHumanReadablePart }
        guard lower.count - separator - 1 >= 6 else { throw .checksumTooShort }
        var values: [UInt8] = []
        values.reserveCapacity(lower.count - separator - 1)
        for character in lower[(separator + 1)...] {
            guard let value = alphabet.firstIndex(of: character) else { throw .invalidCharacter }
            values.append(UInt8(value))
        }
        let hrp = Array(lower[..<separator])
        guard polymod(expand(hrp) + values) == 1 else { throw .invalidChecksum }
        return (String(decoding: bytes[..<separator], as: UTF8.self), Array(values.dropLast(6)))
    }

    /// Decodes `text` into its human-readable part (as written) and its bytes: the 5-bit values
    /// regrouped into bytes, with at most 4 bits of zero padding (anything else is refused).
    public static func decode(_ text: String, maxLength: Int = Bech32.maxLength) throws(Failure) -> (humanReadablePart: String, data: [UInt8]) {
        let (hrp, values) = try decodeValues(text, maxLength: maxLength)
        guard let data = convertBits(values, from: 5, to: 8, pad: false) else { throw .invalidPadding }
        return (hrp, data)
    }

    // MARK: Checksum

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3]
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1FF_FFFF) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { checksum ^= generator[bit] }
        }
        return checksum
    }

    /// The human-readable part as the checksum sees it: high bits of each character, a zero, low bits.
    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    private static func makeChecksum(hrp: [UInt8], values: [UInt8]) -> [UInt8] {
        let mod = polymod(expand(hrp) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8((mod >> (5 * (5 - UInt32($0)))) & 31) }
    }

    /// Regroups `values` of `from` bits into values of `to` bits (BIP 173's `convertbits`); nil
    /// when, without `pad`, the leftover is 5 bits or more or its bits are not zero.
    static func convertBits(_ values: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0, bits = 0
        var output: [UInt8] = []
        let maxValue = (1 << to) - 1
        for value in values {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8((accumulator >> bits) & maxValue))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { output.append(UInt8((accumulator << (to - bits)) & maxValue)) }
        } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
            return nil
        }
        return output
    }
}
