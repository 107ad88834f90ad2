// MARK: - Integers modulo p = 2^255 - 19

/// An integer modulo p = 2^255 − 19, the field of Curve25519 and Edwards25519, for PUBLIC data
/// only: every operation is variable time (branches on the values, early-exit comparisons).
///
/// XEdDSA verification uses it to map a Montgomery u-coordinate (an X25519 public key) to the
/// Edwards y-coordinate, y = (u − 1)/(u + 1); libsodium exposes no field arithmetic. Values are
/// kept canonical (in [0, p)) as four little-endian 64-bit limbs.
struct Field25519: Equatable, Sendable {
    /// The limbs of the canonical value, least significant first (fixed storage: no allocation,
    /// which made an inverse 2.5 million instructions when the limbs were an array).
    private(set) var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

    /// p = 2^255 − 19 as limbs.
    private static let modulus = Field25519(rawLimbs: 0xFFFF_FFFF_FFFF_FFED, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF)

    static let zero = Field25519(0)
    static let one = Field25519(1)

    /// A small value.
    init(_ value: UInt64) { (l0, l1, l2, l3) = (value, 0, 0, 0) }

    private init(rawLimbs l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) { (self.l0, self.l1, self.l2, self.l3) = (l0, l1, l2, l3) }

    /// The value of 32 little-endian bytes, or nil when they are not 32 or the number they spell
    /// (all 256 bits of it, the top one included) is p or more: only canonical encodings are taken.
    init?(canonicalBytes bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func limb(_ index: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(bytes[index * 8 + $1]) << (UInt64($1) * 8) }
        }
        self.init(rawLimbs: limb(0), limb(1), limb(2), limb(3))
        guard Self.compare(self, Self.modulus) < 0 else { return nil }
    }

    /// The 32-byte little-endian encoding (its top bit is always 0).
    var bytes: [UInt8] {
        let limbs = [l0, l1, l2, l3]
        return (0..<32).map { UInt8(truncatingIfNeeded: limbs[$0 / 8] >> (UInt64($0 % 8) * 8)) }
    }

    // MARK: - Arithmetic

    static func + (lhs: Field25519, rhs: Field25519) -> Field25519 {
        // Both are below 2^255, so the sum fits in 256 bits.
        canonical(add(lhs, rhs).sum)
    }

    static func - (lhs: Field25519, rhs: Field25519) -> Field25519 {
        // lhs + (p − rhs): p − rhs is in [1, p], the sum below 2p < 2^256.
        canonical(add(lhs, subtract(modulus, rhs).difference).sum)
    }

    static func * (lhs: Field25519, rhs: Field25519) -> Field25519 {
        let a = (lhs.l0, lhs.l1, lhs.l2, lhs.l3), b = (rhs.l0, rhs.l1, rhs.l2, rhs.l3)
        var wide: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &wide) { raw in
            let w = raw.bindMemory(to: UInt64.self)
            withUnsafeBytes(of: a) { a in
                withUnsafeBytes(of: b) { b in
                    let a = a.bindMemory(to: UInt64.self), b = b.bindMemory(to: UInt64.self)
                    for i in 0..<4 {
                        var carry: UInt64 = 0
                        for j in 0..<4 {
                            let (high, low) = a[i].multipliedFullWidth(by: b[j])
                            let (sum1, overflow1) = w[i + j].addingReportingOverflow(low)
                            let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
                            w[i + j] = sum2
                            carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
                        }
                        w[i + 4] = carry
                    }
                }
            }
        }
        return canonical(reduceWide(wide))
    }

    /// x squared `count` times.
    private func squared(times count: Int) -> Field25519 {
        var result = self
        for _ in 0..<count { result = result * result }
        return result
    }

    /// The multiplicative inverse, x^(p−2); zero maps to zero (callers check for it). The
    /// addition chain of ref10's `fe_invert`: 254 squarings and 11 multiplications.
    var inverse: Field25519 {
        let z2 = self * self
        let z9 = z2.squared(times: 2) * self
        let z11 = z9 * z2
        let z2_5_0 = (z11 * z11) * z9
        let z2_10_0 = z2_5_0.squared(times: 5) * z2_5_0
        let z2_20_0 = z2_10_0.squared(times: 10) * z2_10_0
        let z2_40_0 = z2_20_0.squared(times: 20) * z2_20_0
        let z2_50_0 = z2_40_0.squared(times: 10) * z2_10_0
        let z2_100_0 = z2_50_0.squared(times: 50) * z2_50_0
        let z2_200_0 = z2_100_0.squared(times: 100) * z2_100_0
        let z2_250_0 = z2_200_0.squared(times: 50) * z2_50_0
        return z2_250_0.squared(times: 5) * z11
    }

    // MARK: - Limbs

    /// a + b modulo 2^256, with the carry out.
    private static func add(_ a: Field25519, _ b: Field25519) -> (sum: Field25519, carry: Bool) {
        let (s0, c0) = a.l0.addingReportingOverflow(b.l0)
        let (s1, c1) = addWithCarry(a.l1, b.l1, c0)
        let (s2, c2) = addWithCarry(a.l2, b.l2, c1)
        let (s3, c3) = addWithCarry(a.l3, b.l3, c2)
        return (Field25519(rawLimbs: s0, s1, s2, s3), c3)
    }

    private static func addWithCarry(_ a: UInt64, _ b: UInt64, _ carry: Bool) -> (UInt64, Bool) {
        let (partial, overflow1) = a.addingReportingOverflow(b)
        let (total, overflow2) = partial.addingReportingOverflow(carry ? 1 : 0)
        return (total, overflow1 || overflow2)
    }

    /// a − b modulo 2^256, with the borrow out.
    private static func subtract(_ a: Field25519, _ b: Field25519) -> (difference: Field25519, borrow: Bool) {
        func step(_ x: UInt64, _ y: UInt64, _ borrow: Bool) -> (UInt64, Bool) {
            let (partial, overflow1) = x.subtractingReportingOverflow(y)
            let (total, overflow2) = partial.subtractingReportingOverflow(borrow ? 1 : 0)
            return (total, overflow1 || overflow2)
        }
        let (d0, b0) = step(a.l0, b.l0, false)
        let (d1, b1) = step(a.l1, b.l1, b0)
        let (d2, b2) = step(a.l2, b.l2, b1)
        let (d3, b3) = step(a.l3, b.l3, b2)
        return (Field25519(rawLimbs: d0, d1, d2, d3), b3)
    }

    /// −1, 0 or 1 as a is below, equal to or above b.
    private static func compare(_ a: Field25519, _ b: Field25519) -> Int {
        if a.l3 != b.l3 { return a.l3 < b.l3 ? -1 : 1 }
        if a.l2 != b.l2 { return a.l2 < b.l2 ? -1 : 1 }
        if a.l1 != b.l1 { return a.l1 < b.l1 ? -1 : 1 }
        if a.l0 != b.l0 { return a.l0 < b.l0 ? -1 : 1 }
        return 0
    }

    /// A value below 2^256 brought into [0, p) (at most two subtractions: 2^256 = 2p + 38).
    private static func canonical(_ value: Field25519) -> Field25519 {
        var value = value
        while compare(value, modulus) >= 0 { value = subtract(value, modulus).difference }
        return value
    }

    /// A 512-bit value (eight limbs) reduced below 2^256, using 2^256 ≡ 38 (mod p).
    private static func reduceWide(_ w: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) -> Field25519 {
        // low + 38·high: five limbs, the fifth below 39.
        func fold(_ low: UInt64, _ high: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
            let (productHigh, productLow) = high.multipliedFullWidth(by: 38)
            let (sum1, overflow1) = low.addingReportingOverflow(productLow)
            let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
            return (sum2, productHigh &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0))
        }
        let (f0, c0) = fold(w.0, w.4, 0)
        let (f1, c1) = fold(w.1, w.5, c0)
        let (f2, c2) = fold(w.2, w.6, c1)
        let (f3, c3) = fold(w.3, w.7, c2)
        // Fold the fifth limb the same way; a last carry out of 2^256 is worth 38 again.
        var result = Field25519(rawLimbs: f0, f1, f2, f3)
        var addend = c3 &* 38
        while addend != 0 {
            let (sum, carried) = add(result, Field25519(rawLimbs: addend, 0, 0, 0))
            result = sum
            addend = carried ? 38 : 0
        }
        return result
    }
}
