// MARK: - Entry names as environment variable names

/// Maps entry names to environment variable names (for `exec` and dotenv export).
public enum EnvironmentNames {
    /// Upper-cases ASCII letters and turns every character outside `[A-Z0-9_]` into `_`:
    /// `db/password` → `DB_PASSWORD`. A leading digit gets a `_` in front, since shells reject it.
    public static func variable(for name: String) -> String {
        // Byte by byte (one `_` per character outside ASCII, at its lead byte): appending scalars
        // to a String took a fifth of a dotenv export or import.
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count + 1)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): out.append(byte - 32)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): out.append(byte)
            case 0x80...0xBF: continue  // a continuation byte: its character has its `_` already
            default: out.append(UInt8(ascii: "_"))
            }
        }
        if let first = out.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) { out.insert(UInt8(ascii: "_"), at: 0) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The variables for `names` (after removing `prefix`), or an error naming two entries that collide.
    public static func variables(for names: [String], strippingPrefix prefix: String = "") throws(VaultError) -> [(variable: String, name: String)] {
        var seen: [String: String] = [:]
        var result: [(String, String)] = []
        for name in names {
            let variable = variable(for: String(name.dropFirst(prefix.count)))
            if let other = seen[variable] {
                throw .environmentVariableClash(other, name, variable: variable)
            }
            seen[variable] = name
            result.append((variable, name))
        }
        return result
    }
}
