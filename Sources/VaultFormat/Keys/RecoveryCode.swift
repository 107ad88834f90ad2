import SecureMemory
import VaultModel

// MARK: - Recovery codes

/// A recovery code: 140 random bits written as 7 groups of 5 Crockford Base32 characters,
/// `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX`: 4 data characters and 1 check character per group
/// (docs/FORMAT.md §3.7).
///
/// The check character covers its group's data and the group's position, over GF(32), so a
/// mistyped group is caught before any cryptography runs: every single wrong character, every
/// swap of two neighbours and every group typed in the wrong place. Case, dashes and spaces (Unicode ones too) are
/// ignored when the code is typed back; `I`/`L` read as `1` and `O` as `0` (Crockford's rule).
public struct RecoveryCode: Sendable {
    /// Groups in a code.
    public static let groupCount = 7
    /// Data characters per group (then one check character).
    public static let dataPerGroup = 4
    /// Characters of a code, checks included, without dashes.
    public static let characterCount = groupCount * (dataPerGroup + 1)
    /// Random bits in a code: 28 data characters of 5 bits.
    public static let bitCount = groupCount * dataPerGroup * 5
    /// The packed bits: 140 bits, most significant first, then 4 zero bits.
    public static let byteCount = 18

    /// Crockford's Base32 alphabet (no I, L, O, U).
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// The 140 bits, packed into 18 bytes (the last 4 bits zero): what the slot's KDF reads.
    public let secret: SecureBytes

    private init(values: [UInt8]) {
        var packed = [UInt8](repeating: 0, count: Self.byteCount)
        var bit = 0
        for value in values {
            for shift in stride(from: 4, through: 0, by: -1) {
                if (value >> UInt8(shift)) & 1 == 1 { packed[bit / 8] |= 0x80 >> UInt8(bit % 8) }
                bit += 1
            }
        }
        secret = SecureBytes(copying: packed)
        wipe(&packed)
    }

    /// A fresh code from libsodium's CSPRNG.
    public static func generate() -> RecoveryCode {
        var random = randomBytes(count: groupCount * dataPerGroup)
        defer { wipe(&random) }
        return RecoveryCode(values: random.map { $0 & 31 })
    }

    /// The UTF-8 length of a dash or space that word processors and web pages put where the code
    /// had '-' or ' ' (U+2010–U+2015 dashes, U+2212 minus, U+00A0, U+2009 and U+202F spaces), else 0:
    /// a code copied from a document still reads.
    static func unicodeSeparatorLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        if bytes[index] == 0xC2, index + 1 < bytes.count, bytes[index + 1] == 0xA0 { return 2 }
        guard bytes[index] == 0xE2, index + 2 < bytes.count else { return 0 }
        switch (bytes[index + 1], bytes[index + 2]) {
        case (0x80, 0x90...0x95), (0x80, 0x89), (0x80, 0xAF), (0x88, 0x92): return 3
        default: return 0
        }
    }

    /// Reads a typed code. Errors name the group (1-based), never the characters typed.
    public init(parsing typed: SecureBytes) throws(VaultError) {
        var values: [UInt8] = []
        values.reserveCapacity(Self.characterCount)
        defer { wipe(&values) }
        let invalid = typed.withUnsafeBytes { bytes -> Bool in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "-") || byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1; continue }
                let separator = Self.unicodeSeparatorLength(bytes, at: index)
                if separator > 0 { index += separator; continue }
                guard let value = Self.value(of: byte) else { return true }
                values.append(value)
                index += 1
            }
            return false
        }
        guard !invalid else {
            throw .malformedInput("the recovery code holds a character that is not in its alphabet (0-9 and A-Z without U)")
        }
        guard values.count == Self.characterCount else {
            throw .malformedInput("the recovery code has \(values.count) characters; a recovery code has \(Self.characterCount) (7 groups of 5)")
        }
        var data: [UInt8] = []
        defer { wipe(&data) }
        for group in 0..<Self.groupCount {
            let start = group * (Self.dataPerGroup + 1)
            let groupData = Array(values[start..<start + Self.dataPerGroup])
            guard Self.check(groupData, position: group) == values[start + Self.dataPerGroup] else {
                throw .malformedInput("group \(group + 1) of the recovery code is mistyped (its check character does not match); nothing was tried")
            }
            data += groupData
        }
        self.init(values: data)
    }

    /// `XXXXX-XXXXX-…`: the code to show the user, once.
    public func formatted() -> String {
        var values = secret.withUnsafeBytes { bytes in
            (0..<(Self.groupCount * Self.dataPerGroup)).map { index -> UInt8 in
                var value: UInt8 = 0
                for offset in 0..<5 {
                    let bit = index * 5 + offset
                    value = value << 1 | (bytes[bit / 8] >> UInt8(7 - bit % 8)) & 1
                }
                return value
            }
        }
        defer { wipe(&values) }
        var groups: [String] = []
        for group in 0..<Self.groupCount {
            let data = Array(values[(group * Self.dataPerGroup)..<((group + 1) * Self.dataPerGroup)])
            let characters = (data + [Self.check(data, position: group)]).map { Self.alphabet[Int($0)] }
            groups.append(String(decoding: characters, as: UTF8.self))
        }
        return groups.joined(separator: "-")
    }

    // MARK: Alphabet and check

    /// The value of a typed character: case-insensitive, I and L as 1, O as 0; nil otherwise.
    static func value(of byte: UInt8) -> UInt8? {
        var upper = byte
        if (0x61...0x7A).contains(byte) { upper -= 0x20 }
        switch upper {
        case UInt8(ascii: "I"), UInt8(ascii: "L"): return 1
        case UInt8(ascii: "O"): return 0
        default: return alphabet.firstIndex(of: upper).map(UInt8.init)
        }
    }

    /// The check value of a group: `α^(5+position) + Σ data[j]·α^j` in GF(32) (polynomial
    /// x⁵ + x² + 1, α = x). Every weight is non-zero and distinct, and so is every position's
    /// term (α has order 31): one wrong character, a swap of neighbours, or a group moved, always
    /// changes it.
    static func check(_ data: [UInt8], position: Int) -> UInt8 {
        var sum = power(5 + position)
        for (index, value) in data.enumerated() { sum ^= multiply(value, power(index)) }
        return sum
    }

    static func power(_ exponent: Int) -> UInt8 {
        var result: UInt8 = 1
        for _ in 0..<(exponent % 31) { result = multiply(result, 2) }
        return result
    }

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a, b = b, product: UInt8 = 0
        while b != 0 {
            if b & 1 == 1 { product ^= a }
            b >>= 1
            a <<= 1
            if a & 0x20 != 0 { a ^= 0x25 }
        }
        return product & 31
    }
}
