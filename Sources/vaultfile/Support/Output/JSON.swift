import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - A small JSON writer

/// JSON values for `--json` output, written without Foundation (start-up time matters).
indirect enum JSON {
    case string(String)
    case int(Int64)
    /// An unsigned 64-bit number (a generation), printed in full.
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSON])
    /// Keys keep the order given, so output is stable.
    case object([(String, JSON)])

    /// The compact serialisation.
    var text: String {
        switch self {
        case .string(let value): return Self.quote(value)
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return value.isFinite ? String(value) : "null"
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let values): return "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let pairs): return "{" + pairs.map { Self.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quote(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// An RFC 3339 UTC timestamp from milliseconds since the epoch: `2026-11-22T06:13:01.123Z`
/// (`UTCTime`, the one formatter of every printed time: −5 ms is `1969-12-31T23:59:59.995Z`).
func timestamp(milliseconds: Int64) -> String { UTCTime.rfc3339(milliseconds: milliseconds) }

/// Lowercase hexadecimal.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}
