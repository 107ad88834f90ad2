import SecureMemory
import VaultModel

// MARK: - JSON that holds values

/// JSON written straight into a byte buffer, for output that holds secret values (`get --json`,
/// `batch --json`): unlike `JSON`, which builds Strings, nothing here copies a value into memory
/// the caller cannot wipe. A value is a JSON string when it is UTF-8, else base64, and the
/// `encoding` key beside it says which (docs/JSON.md).
struct SecretJSON {
    /// The bytes written so far; the caller writes them out and wipes them.
    var bytes: [UInt8] = []

    /// A buffer with room for about `capacity` bytes, so that growing copies no value around the heap.
    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Zeroes the buffer.
    mutating func wipe() { SecureMemory.wipe(&bytes) }

    /// Appends text that holds no secret as it is (punctuation, or JSON from `JSON.text`).
    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Appends `"key":` .
    mutating func key(_ name: String) { raw(JSON.quote(name) + ":") }

    /// Appends `"value":"…","encoding":"utf-8"` or `"value":"<base64>","encoding":"base64"`.
    mutating func value(_ value: UnsafeRawBufferPointer) {
        key("value")
        if Self.isUTF8(value) {
            string(utf8: value)
            raw(",\"encoding\":\"utf-8\"")
        } else {
            base64(value)
            raw(",\"encoding\":\"base64\"")
        }
    }

    /// `value(_:)` over an array.
    mutating func value(_ value: [UInt8]) { value.withUnsafeBytes { self.value($0) } }

    // MARK: Strings

    /// Appends UTF-8 bytes as a JSON string: quotes, backslashes and control characters escaped
    /// (as `JSON.quote` does), everything else as it is.
    mutating func string(utf8 text: UnsafeRawBufferPointer) {
        bytes.reserveCapacity(bytes.count + text.count + 2)
        bytes.append(0x22)
        for byte in text {
            switch byte {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, 0x6E]
            case 0x0D: bytes += [0x5C, 0x72]
            case 0x09: bytes += [0x5C, 0x74]
            case 0..<0x20, 0x7F:
                let digits = Array("0123456789abcdef".utf8)
                bytes += [0x5C, 0x75, 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    /// Appends the standard base64 (RFC 4648, padded) of `data` as a JSON string.
    mutating func base64(_ data: UnsafeRawBufferPointer) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        bytes.reserveCapacity(bytes.count + (data.count + 2) / 3 * 4 + 2)
        bytes.append(0x22)
        var index = 0
        while index < data.count {
            let count = min(3, data.count - index)
            let chunk = (UInt32(data[index]) << 16) | (count > 1 ? UInt32(data[index + 1]) << 8 : 0) | (count > 2 ? UInt32(data[index + 2]) : 0)
            for position in 0..<4 {
                bytes.append(position <= count ? alphabet[Int((chunk >> UInt32(18 - 6 * position)) & 0x3F)] : 0x3D)
            }
            index += 3
        }
        bytes.append(0x22)
    }

    /// Whether `data` is valid UTF-8, checked without making a String of it.
    static func isUTF8(_ data: UnsafeRawBufferPointer) -> Bool {
        var decoder = Unicode.UTF8()
        var iterator = data.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
