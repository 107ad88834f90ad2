import CLibCrypto
import SecureMemory

// MARK: - The hashes breach lists are keyed by

/// The two hashes of a password that Have I Been Pwned's Pwned Passwords lists: SHA-1 of its
/// bytes, and NTLM (MD4 of its UTF-16LE form, as Windows stores it). Neither protects anything
/// here: they are only how the lists name a password, and each digest is wiped by its caller.
public enum BreachHash: String, Sendable, CaseIterable {
    case sha1 = "SHA-1"
    case ntlm = "NTLM"

    /// The digest's length in bytes (40 or 32 hexadecimal digits in the lists).
    public var digestLength: Int { self == .sha1 ? 20 : 16 }

    /// The digest of `password` into `digest` (of `digestLength` bytes); false when the password
    /// has no NTLM form (it is not UTF-8 text).
    public func digest(of password: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(digest.count == digestLength)
        switch self {
        case .sha1:
            _ = SHA1(password.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!, password.count,
                     digest.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return true
        case .ntlm:
            guard var utf16 = Self.utf16LittleEndian(password) else { return false }
            defer { wipe(&utf16) }
            utf16.withUnsafeBytes { MD4.hash($0, into: digest) }
            return true
        }
    }

    /// `password` (UTF-8) as UTF-16 little-endian bytes, or nil when it is not valid UTF-8. The
    /// caller wipes the result.
    static func utf16LittleEndian(_ password: UnsafeRawBufferPointer) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(password.count * 2 + 4)
        var decoder = UTF8()
        var iterator = password.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                for unit in UTF16.encode(scalar)! { out.append(UInt8(unit & 0xFF)); out.append(UInt8(unit >> 8)) }
            case .emptyInput: return out
            case .error:
                wipe(&out)
                return nil
            }
        }
    }
}

// MARK: - MD4

/// MD4 (RFC 1320), for NTLM hashes only: OpenSSL 3 keeps it in its legacy provider, which a
/// system may not load. Its state and padded blocks are wiped after each use.
enum MD4 {
    /// MD4 of `message` into `digest` (16 bytes).
    static func hash(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
        var block = [UInt8](repeating: 0, count: 64)
        defer { wipe(&block) }
        var offset = 0
        while offset + 64 <= message.count {
            for index in 0..<64 { block[index] = message[offset + index] }
            compress(&state, block)
            offset += 64
        }
        // The tail, 0x80, zeros, and the length in bits (little-endian) in one or two blocks.
        let tail = message.count - offset
        for index in 0..<64 { block[index] = index < tail ? message[offset + index] : 0 }
        block[tail] = 0x80
        if tail >= 56 {
            compress(&state, block)
            for index in 0..<64 { block[index] = 0 }
        }
        let bits = UInt64(message.count) &* 8
        for index in 0..<8 { block[56 + index] = UInt8(truncatingIfNeeded: bits >> (8 * UInt64(index))) }
        compress(&state, block)
        for (word, value) in [state.0, state.1, state.2, state.3].enumerated() {
            for index in 0..<4 { digest[word * 4 + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
        }
        state = (0, 0, 0, 0)
    }

    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32), _ block: [UInt8]) {
        var x = [UInt32](repeating: 0, count: 16)
        defer { for index in x.indices { x[index] = 0 } }
        for index in 0..<16 {
            x[index] = UInt32(block[index * 4]) | UInt32(block[index * 4 + 1]) << 8 | UInt32(block[index * 4 + 2]) << 16 | UInt32(block[index * 4 + 3]) << 24
        }
        var (a, b, c, d) = state
        func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value << count | value >> (32 - count) }
        // Round 1: F(x, y, z) = (x & y) | (~x & z).
        for index in 0..<16 {
            let f = (b & c) | (~b & d)
            let shift: UInt32 = [3, 7, 11, 19][index % 4]
            (a, b, c, d) = (d, rotate(a &+ f &+ x[index], shift), b, c)
        }
        // Round 2: G(x, y, z) = (x & y) | (x & z) | (y & z), constant 0x5A827999.
        for index in 0..<16 {
            let g = (b & c) | (b & d) | (c & d)
            let word = (index % 4) * 4 + index / 4
            let shift: UInt32 = [3, 5, 9, 13][index % 4]
            (a, b, c, d) = (d, rotate(a &+ g &+ x[word] &+ 0x5A82_7999, shift), b, c)
        }
        // Round 3: H(x, y, z) = x ^ y ^ z, constant 0x6ED9EBA1.
        let order = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]
        for index in 0..<16 {
            let h = b ^ c ^ d
            let shift: UInt32 = [3, 9, 11, 15][index % 4]
            (a, b, c, d) = (d, rotate(a &+ h &+ x[order[index]] &+ 0x6ED9_EBA1, shift), b, c)
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
