import VaultModel

// MARK: - DEFLATE, bounded

/// Decompresses DEFLATE data (RFC 1951) with a hard limit on the output: the 1pux reader's ZIP
/// entries and KeePass's gzip-compressed attachments. Every length read from the stream is
/// checked before it is used; a distance reaching before the output's start, a code that is not
/// in its table, an over-subscribed table, a stream that ends early, or an output that would pass
/// `limit` is an error, never a crash. No zlib: one small reader that the fuzz target covers.
enum Inflate {
    /// The decompressed bytes of the DEFLATE stream at the start of `input`, and how many bytes
    /// of `input` the stream took; throws `.limitExceeded` when the output would pass `limit` bytes.
    static func inflate(_ input: ArraySlice<UInt8>, limit: Int, what: String) throws(VaultError) -> (output: [UInt8], consumed: Int) {
        var state = State(input: input, limit: limit, what: what)
        try state.run()
        return (state.output, state.consumed)
    }

    // MARK: The tables of RFC 1951 §3.2.5

    private static let lengthBase: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                                            67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase: [Int] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
                                              1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    private static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    private static let fixedTables: (Huffman, Huffman) = {
        var lengths = [Int](repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        // Both tables are complete and well-formed: they cannot fail.
        return (try! Huffman(lengths: lengths), try! Huffman(lengths: [Int](repeating: 5, count: 30)))
    }()

    // MARK: A canonical Huffman code

    /// A code given by its lengths: a table of the codes up to `fastBits` long, indexed by the
    /// next bits of the stream, and counts and symbols for the longer ones (decoded bit by bit).
    struct Huffman {
        static let fastBits = 9
        /// symbol << 4 | length, or 0 when the code is longer than `fastBits` (or absent).
        var fast = [UInt16](repeating: 0, count: 1 << fastBits)
        /// How many codes have each length 0...15.
        var counts = [Int](repeating: 0, count: 16)
        /// The symbols ordered by code.
        var symbols: [Int] = []

        init(lengths: [Int]) throws(VaultError) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1...15 {
                left = left << 1 - counts[length]
                guard left >= 0 else { throw .malformedInput("a compressed stream has an over-subscribed Huffman table") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
            // The fast table: each short code, bit-reversed (the stream sends codes from their top bit).
            var code = 0, index = 0
            for length in 1...Self.fastBits {
                for _ in 0..<counts[length] {
                    var reversed = 0
                    for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
                    var slot = reversed
                    while slot < 1 << Self.fastBits {
                        fast[slot] = UInt16(symbols[index] << 4 | length)
                        slot += 1 << length
                    }
                    code += 1
                    index += 1
                }
                code <<= 1
            }
        }
    }

    // MARK: The decoder

    private struct State {
        let input: ArraySlice<UInt8>
        let limit: Int
        let what: String
        var position: Int
        var bits: UInt64 = 0
        var bitCount = 0
        var output: [UInt8] = []

        init(input: ArraySlice<UInt8>, limit: Int, what: String) {
            (self.input, self.limit, self.what, position) = (input, limit, what, input.startIndex)
            output.reserveCapacity(min(limit, input.count * 4))
        }

        /// Input bytes taken, counting whole bytes still in the bit buffer as not taken.
        var consumed: Int { position - input.startIndex - bitCount / 8 }

        func damaged(_ why: String) -> VaultError { .malformedInput("\(what): the compressed data is damaged (\(why))") }

        /// Fills the bit buffer with as many bytes as fit.
        mutating func refill() {
            while bitCount <= 56 && position < input.endIndex {
                bits |= UInt64(input[position]) << UInt64(bitCount)
                position += 1
                bitCount += 8
            }
        }

        mutating func take(_ count: Int) throws(VaultError) -> Int {
            if bitCount < count { refill() }
            guard bitCount >= count else { throw damaged("it ends early") }
            let value = Int(bits & ((1 << UInt64(count)) - 1))
            bits >>= UInt64(count)
            bitCount -= count
            return value
        }

        mutating func decode(_ table: Huffman) throws(VaultError) -> Int {
            if bitCount < 15 { refill() }
            let entry = Int(table.fast[Int(bits & UInt64((1 << Huffman.fastBits) - 1))])
            if entry != 0, entry & 15 <= bitCount {
                bits >>= UInt64(entry & 15)
                bitCount -= entry & 15
                return entry >> 4
            }
            // Longer codes: bit by bit, canonical order (as zlib's puff.c decodes).
            var code = 0, first = 0, index = 0
            for length in 1...15 {
                code |= try take(1)
                let count = table.counts[length]
                if code - count < first { return table.symbols[index + (code - first)] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw damaged("a code that is not in its table")
        }

        mutating func run() throws(VaultError) {
            var last = false
            while !last {
                last = try take(1) == 1
                switch try take(2) {
                case 0: try stored()
                case 1: try codes(Inflate.fixedTables.0, Inflate.fixedTables.1)
                case 2:
                    let (literals, distances) = try dynamicTables()
                    try codes(literals, distances)
                default: throw damaged("a block of the reserved type 3")
                }
            }
        }

        mutating func stored() throws(VaultError) {
            // Back to the byte boundary: the whole bytes in the buffer are given back.
            position -= bitCount / 8
            bits = 0
            bitCount = 0
            guard input.endIndex - position >= 4 else { throw damaged("it ends early") }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            let check = Int(input[position + 2]) | Int(input[position + 3]) << 8
            guard length == ~check & 0xFFFF else { throw damaged("a stored block's length does not match its check") }
            position += 4
            guard input.endIndex - position >= length else { throw damaged("it ends early") }
            try reserve(length)
            output.append(contentsOf: input[position..<position + length])
            position += length
        }

        mutating func dynamicTables() throws(VaultError) -> (Huffman, Huffman) {
            let literalCount = try take(5) + 257, distanceCount = try take(5) + 1, lengthCount = try take(4) + 4
            guard literalCount <= 286, distanceCount <= 30 else { throw damaged("too many codes in a block's header") }
            var codeLengths = [Int](repeating: 0, count: 19)
            for index in 0..<lengthCount { codeLengths[Inflate.codeLengthOrder[index]] = try take(3) }
            let lengthCode = try Huffman(lengths: codeLengths)
            var lengths: [Int] = []
            lengths.reserveCapacity(literalCount + distanceCount)
            while lengths.count < literalCount + distanceCount {
                let symbol = try decode(lengthCode)
                switch symbol {
                case 0..<16: lengths.append(symbol)
                case 16:
                    guard let previous = lengths.last else { throw damaged("a repeat with nothing before it") }
                    lengths += repeatElement(previous, count: 3 + (try take(2)))
                case 17: lengths += repeatElement(0, count: 3 + (try take(3)))
                default: lengths += repeatElement(0, count: 11 + (try take(7)))
                }
            }
            guard lengths.count == literalCount + distanceCount else { throw damaged("code lengths run past the table") }
            guard lengths[256] != 0 else { throw damaged("no end-of-block code") }
            return (try Huffman(lengths: Array(lengths[..<literalCount])), try Huffman(lengths: Array(lengths[literalCount...])))
        }

        mutating func reserve(_ count: Int) throws(VaultError) {
            guard output.count + count <= limit else {
                throw .limitExceeded("\(what) inflates to more than \(limit) bytes")
            }
        }

        mutating func codes(_ literals: Huffman, _ distances: Huffman) throws(VaultError) {
            while true {
                let symbol = try decode(literals)
                if symbol < 256 {
                    try reserve(1)
                    output.append(UInt8(symbol))
                    continue
                }
                if symbol == 256 { return }
                let lengthIndex = symbol - 257
                guard lengthIndex < 29 else { throw damaged("a length code out of range") }
                let length = Inflate.lengthBase[lengthIndex] + (try take(Inflate.lengthExtra[lengthIndex]))
                let distanceSymbol = try decode(distances)
                guard distanceSymbol < 30 else { throw damaged("a distance code out of range") }
                let distance = Inflate.distanceBase[distanceSymbol] + (try take(Inflate.distanceExtra[distanceSymbol]))
                guard distance <= output.count else { throw damaged("a distance before the start of the data") }
                try reserve(length)
                // Copied forwards byte by byte (a distance shorter than the length repeats what is
                // being written), in place: appending a slice of `output` to itself would copy the
                // whole array on every match (the slice keeps the old buffer alive).
                let start = output.count - distance, end = output.count
                output.append(contentsOf: repeatElement(0, count: length))
                output.withUnsafeMutableBufferPointer { buffer in
                    for offset in 0..<length { buffer[end + offset] = buffer[start + offset] }
                }
            }
        }
    }
}

// MARK: - CRC-32

/// CRC-32 (ISO-HDLC, as ZIP and gzip use it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return ~crc
    }
}

// MARK: - gzip

/// gzip members (RFC 1952), as KeePass compresses attachments (`Compressed="True"`).
enum Gzip {
    /// The decompressed bytes of the gzip data `bytes`, checked against its CRC-32 and length.
    static func decompress(_ bytes: [UInt8], limit: Int, what: String) throws(VaultError) -> [UInt8] {
        func damaged(_ why: String) -> VaultError { .malformedInput("\(what): not gzip data (\(why))") }
        guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B else { throw damaged("no gzip header") }
        guard bytes[2] == 8 else { throw damaged("a compression method other than deflate") }
        let flags = bytes[3]
        var position = 10
        func skipZeroTerminated() throws(VaultError) {
            guard let end = bytes[position...].firstIndex(of: 0) else { throw damaged("a header name without its end") }
            position = end + 1
        }
        if flags & 0x04 != 0 {  // FEXTRA
            guard bytes.count - position >= 2 else { throw damaged("a header that ends early") }
            position += 2 + (Int(bytes[position]) | Int(bytes[position + 1]) << 8)
        }
        if flags & 0x08 != 0 { try skipZeroTerminated() }  // FNAME
        if flags & 0x10 != 0 { try skipZeroTerminated() }  // FCOMMENT
        if flags & 0x02 != 0 { position += 2 }  // FHCRC
        guard position <= bytes.count else { throw damaged("a header that ends early") }
        let (output, consumed) = try Inflate.inflate(bytes[position...], limit: limit, what: what)
        let trailer = position + consumed
        guard bytes.count - trailer >= 8 else { throw damaged("no trailer") }
        func word(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
        guard word(trailer) == CRC32.checksum(output) else { throw damaged("its checksum does not match") }
        guard word(trailer + 4) == UInt32(truncatingIfNeeded: output.count) else { throw damaged("its length does not match") }
        return output
    }
}
