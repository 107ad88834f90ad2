// MARK: - Integers modulo p = 2^255 - 19

/// An integer modulo p = 2^255 − 19, the field of Curve25519 and Edwards25519, for PUBLIC data
/// only: every operation is variable time (branches on the values, early-exit comparisons).
///
/// XEdDSA verification uses it to map a Montgomery u-coordinate (an X25519 public key) to the
/// Edwards y-coordinate, y = (u − 1)/(u + 1); libsodium exposes no field arithmetic. Values are
/// kept canonical (in [0, p)) as four little-endian 64-bit limbs.
struct Field25519: Equatable, Sendable {
    /// The limbs of the canonical value, least significant first.
    private(set) var limbs: [UInt64]

    /// p = 2^255 − 19 as limbs.
    static let modulus: [UInt64] = [0xFFFF_FFFF_FFFF_FFED, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF]
    /// The exponent of an inverse by Fermat's little theorem, p − 2.
    private static let inverseExponent: [UInt64] = [0xFFFF_FFFF_FFFF_FFEB, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF]

    static let zero = Field25519(0)
    static let one = Field25519(1)

    /// A small value.
    init(_ value: UInt64) { limbs = [value, 0, 0, 0] }

    /// The value of 32 little-endian bytes, or nil when they are not 32 or the number they spell
    /// (all 256 bits of it, the top one included) is p or more: only canonical encodings are taken.
    init?(canonicalBytes bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        var limbs = [UInt64](repeating: 0, count: 4)
        for index in 0..<32 { limbs[index / 8] |= UInt64(bytes[index]) << (UInt64(index % 8) * 8) }
        guard Self.compare(limbs, Self.modulus) < 0 else { return nil }
        self.limbs = limbs
    }

    private init(reducing limbs: [UInt64]) { self.limbs = Self.canonical(limbs) }

    /// The 32-byte little-endian encoding (its top bit is always 0).
    var bytes: [UInt8] {
        (0..<32).map { UInt8(truncatingIfNeeded: limbs[$0 / 8] >> (UInt64($0 % 8) * 8)) }
    }

    // MARK: - Arithmetic

    static func + (lhs: Field25519, rhs: Field25519) -> Field25519 {
        // Both are below 2^255, so the sum fits in 256 bits.
        Field25519(reducing: addLimbs(lhs.limbs, rhs.limbs).sum)
    }

    static func - (lhs: Field25519, rhs: Field25519) -> Field25519 {
        // lhs + (p − rhs): p − rhs is in [1, p], the sum below 2p < 2^256.
        let negated = subtractLimbs(modulus, rhs.limbs).difference
        return Field25519(reducing: addLimbs(lhs.limbs, negated).sum)
    }

    static func * (lhs: Field25519, rhs: Field25519) -> Field25519 {
        var wide = [UInt64](repeating: 0, count: 8)
        for i in 0..<4 {
            var carry: UInt64 = 0
            for j in 0..<4 {
                let (high, low) = lhs.limbs[i].multipliedFullWidth(by: rhs.limbs[j])
                let (sum1, overflow1) = wide[i + j].addingReportingOverflow(low)
                let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
                wide[i + j] = sum2
                carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            }
            wide[i + 4] = carry
        }
        return Field25519(reducing: reduceWide(wide))
    }

    /// The multiplicative inverse, x^(p−2); zero maps to zero (callers check for it).
    var inverse: Field25519 {
        var result = Field25519.one
        for bit in stride(from: 254, through: 0, by: -1) {
            result = result * result
            if (Self.inverseExponent[bit / 64] >> UInt64(bit % 64)) & 1 == 1 { result = result * self }
        }
        return result
    }

    // MARK: - Limbs

    /// a + b modulo 2^256, with the carry out.
    private static func addLimbs(_ a: [UInt64], _ b: [UInt64]) -> (sum: [UInt64], carry: Bool) {
        var sum = [UInt64](repeating: 0, count: 4)
        var carry = false
        for index in 0..<4 {
            let (partial, overflow1) = a[index].addingReportingOverflow(b[index])
            let (total, overflow2) = partial.addingReportingOverflow(carry ? 1 : 0)
            sum[index] = total
            carry = overflow1 || overflow2
        }
        return (sum, carry)
    }

    /// a − b modulo 2^256, with the borrow out.
    private static func subtractLimbs(_ a: [UInt64], _ b: [UInt64]) -> (difference: [UInt64], borrow: Bool) {
        var difference = [UInt64](repeating: 0, count: 4)
        var borrow = false
        for index in 0..<4 {
            let (partial, overflow1) = a[index].subtractingReportingOverflow(b[index])
            let (total, overflow2) = partial.subtractingReportingOverflow(borrow ? 1 : 0)
            difference[index] = total
            borrow = overflow1 || overflow2
        }
        return (difference, borrow)
    }

    /// −1, 0 or 1 as a is below, equal to or above b.
    private static func compare(_ a: [UInt64], _ b: [UInt64]) -> Int {
        for index in stride(from: 3, through: 0, by: -1) where a[index] != b[index] {
            return a[index] < b[index] ? -1 : 1
        }
        return 0
    }

    /// A value below 2^256 brought into [0, p) (at most two subtractions: 2^256 = 2p + 38).
    private static func canonical(_ limbs: [UInt64]) -> [UInt64] {
        var value = limbs
        while compare(value, modulus) >= 0 { value = subtractLimbs(value, modulus).difference }
        return value
    }

    /// A 512-bit value (eight limbs) reduced below 2^256, using 2^256 ≡ 38 (mod p).
    private static func reduceWide(_ wide: [UInt64]) -> [UInt64] {
        // low + 38·high: five limbs, the fifth below 39.
        var folded = [UInt64](repeating: 0, count: 5)
        var carry: UInt64 = 0
        for index in 0..<4 {
            let (high, low) = wide[index + 4].multipliedFullWidth(by: 38)
            let (sum1, overflow1) = wide[index].addingReportingOverflow(low)
            let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
            folded[index] = sum2
            carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
        }
        folded[4] = carry
        // Fold the fifth limb the same way; a last carry out of 2^256 is worth 38 again.
        var result = Array(folded[0..<4])
        var addend = folded[4] &* 38
        while addend != 0 {
            let (sum, carried) = addLimbs(result, [addend, 0, 0, 0])
            result = sum
            addend = carried ? 38 : 0
        }
        return result
    }
}
