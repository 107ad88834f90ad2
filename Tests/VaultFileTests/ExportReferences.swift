import Foundation
@testable import VaultInterchange
@testable import VaultModel

// MARK: - The plain references of the exports

// Test-only: the export as it was written before the writers that read the stored bytes, every
// entry decoded into an `Entry` first. `EntryBytesTests` and `InterchangeTests` tie the fast
// writers to these, and these to JSONEncoder (`NativeJSON.exportThroughEncoder`).

extension Interchange {
    /// `export` through `sortedEntries` (every entry decoded into an `Entry`): the plain reference
    /// that the writers from the stored bytes are tested against.
    static func exportThroughEntries(_ vault: Vault, format: InterchangeFormat, prefix: String = "") throws(VaultError) -> [UInt8] {
        let entries = vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }
        switch format {
        case .json: return try NativeJSON.export(entries)
        case .dotenv: return try DotEnv.export(entries)
        case .csv: return try NativeCSV.export(entries)
        default:  // every other format is import only
            throw .malformedInput("\(format.rawValue) is an import format only; export json, dotenv or csv")
        }
    }
}

extension NativeJSON {
    /// The entries as a vaultfile JSON export (the plain reference of `export(_:prefix:)`).
    ///
    /// UTF-8 text as is, anything else in base64.
    ///
    /// Written straight into one byte buffer, byte for byte what `JSONEncoder` writes with
    /// `.prettyPrinted, .sortedKeys, .withoutEscapingSlashes` (`exportThroughEncoder`, the plain
    /// reference; `InterchangeTests.test_export_jsonWriterMatchesJSONEncoder`): the encoder's tree of
    /// items and its output took 14× a `verify` and 198 MB at 100,000 entries. Keys are sorted by
    /// their bytes, as the encoder sorts them: field names are ASCII (`EntryName.validateField`).
    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        guard !entries.isEmpty else { return try exportThroughEncoder(entries) }
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 160)
        out += "{\n  \"entries\" : [\n".utf8
        for (index, (name, entry)) in entries.enumerated() {
            out += (index == 0 ? "    {\n" : ",\n    {\n").utf8
            out += "      \"created\" : ".utf8
            out += String(entry.created).utf8
            var text: [(String, [UInt8])] = [], binary: [(String, [UInt8])] = []
            for (field, bytes) in entry.fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                if String(validating: bytes, as: UTF8.self) != nil { text.append((field, bytes)) } else { binary.append((field, bytes)) }
            }
            for (key, members) in [("fields", text), ("fields_base64", binary)] where !members.isEmpty {
                out += ",\n      \"\(key)\" : {\n".utf8
                for (number, (field, bytes)) in members.enumerated() {
                    out += (number == 0 ? "        " : ",\n        ").utf8
                    appendString(field.utf8, to: &out)
                    out += " : ".utf8
                    if key == "fields" { appendString(bytes, to: &out) } else { appendBase64(bytes, to: &out) }
                }
                out += "\n      }".utf8
            }
            out += ",\n      \"modified\" : ".utf8
            out += String(entry.modified).utf8
            out += ",\n      \"name\" : ".utf8
            appendString(name.utf8, to: &out)
            if String(validating: entry.value, as: UTF8.self) != nil {
                out += ",\n      \"value\" : ".utf8
                appendString(entry.value, to: &out)
            } else {
                out += ",\n      \"value_base64\" : ".utf8
                appendBase64(entry.value, to: &out)
            }
            out += "\n    }".utf8
        }
        out += "\n  ],\n  \"vaultfile_export\" : 1\n}\n".utf8
        return out
    }

    /// A JSON string of UTF-8 text as `JSONEncoder` escapes it: `"` and `\\`, the short forms
    /// `\\b \\t \\n \\f \\r`, other controls below 0x20 as `\\u00xx`; DEL, `/` and non-ASCII as they are.
    private static func appendString(_ text: some Sequence<UInt8>, to out: inout [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x08: out += "\\b".utf8
            case 0x09: out += "\\t".utf8
            case 0x0A: out += "\\n".utf8
            case 0x0C: out += "\\f".utf8
            case 0x0D: out += "\\r".utf8
            case ..<0x20: out += "\\u00".utf8; out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON string of `bytes` in standard base64 with padding (`Data.base64EncodedString()`).
    private static func appendBase64(_ bytes: [UInt8], to out: inout [UInt8]) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        out.append(UInt8(ascii: "\""))
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            let group = UInt32(bytes[index]) << 16 | (count > 1 ? UInt32(bytes[index + 1]) << 8 : 0) | (count > 2 ? UInt32(bytes[index + 2]) : 0)
            for position in 0..<4 {
                out.append(position <= count ? alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        out.append(UInt8(ascii: "\""))
    }
}
