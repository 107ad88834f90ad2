// MARK: - Punycode (RFC 3492), for field names made of non-ASCII labels

/// RFC 3492's Punycode, encoding only: the ASCII form of a label that a field name cannot hold as
/// it is (`Пин` → `xn--r0a4cp`: case kept, unlike IDNA, whose lowercased `пин` is `xn--h1ake`), so that labels in other
/// scripts give distinct field names that `idn2 -d`, Python's `codecs.decode(…, "punycode")` or
/// any IDNA library turns back into the label (docs/INTERCHANGE.md, "Fields").
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700, initialBias = 72, initialN = 0x80

    /// The Punycode of `scalars` (without IDNA's `xn--`); nil on an overflow, which only a text of
    /// millions of characters reaches.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        var output: [UInt8] = scalars.filter(\.isASCII).map { UInt8($0.value) }
        let basic = output.count
        if basic > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN, delta = 0, bias = initialBias, handled = basic
        let codes = scalars.map { Int($0.value) }
        while handled < codes.count {
            guard let next = codes.filter({ $0 >= n }).min() else { break }
            let (scaled, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - scaled else { return nil }
            delta += scaled
            n = next
            for code in codes {
                if code < n { delta += 1 }
                guard code == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `a`–`z` for 0–25, `0`–`9` for 26–35.
    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    /// RFC 3492 §6.1's bias adaptation.
    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
