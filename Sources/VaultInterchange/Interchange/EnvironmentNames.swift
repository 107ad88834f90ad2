import VaultModel

// MARK: - Entry names as environment variable names

/// Maps entry names to environment variable names (for `exec` and dotenv export).
public enum EnvironmentNames {
    /// Upper-cases ASCII letters and turns every character outside `[A-Z0-9_]` into `_`:
    /// `db/password` → `DB_PASSWORD`. A leading digit gets a `_` in front, since shells reject it.
    public static func variable(for name: String) -> String {
        // Byte by byte (one `_` per character outside ASCII, at its lead byte): appending scalars
        // to a String took a fifth of a dotenv export or import.
        var name = name
        return name.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count + 1) { writeVariable(for: UnsafeRawBufferPointer(bytes), into: $0) }
        }
    }

    /// Writes the variable for the entry name whose UTF-8 bytes are `name` into `out` (at least one
    /// byte longer than `name`) and returns its length: the one mapping behind `variable(for:)` and
    /// `DangerousEnvironmentNames.isDangerous(entryName:)`.
    static func writeVariable(for name: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(out.count > name.count, "room for the variable")
        var count = 0
        for byte in name {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): out[count] = byte - 32
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): out[count] = byte
            case 0x80...0xBF: continue  // a continuation byte: its character has its `_` already
            default: out[count] = UInt8(ascii: "_")
            }
            count += 1
        }
        if count > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(out[0]) {
            // A leading digit: shells reject it, so a `_` goes in front.
            for index in stride(from: count, to: 0, by: -1) { out[index] = out[index - 1] }
            out[0] = UInt8(ascii: "_")
            count += 1
        }
        return count
    }

    /// Appends the variable of the entry name `name` (UTF-8) to an export, byte for byte `variable(for:)`.
    static func appendVariable(for name: UnsafeRawBufferPointer, to out: inout ExportBuffer) {
        var first = true
        for byte in name {
            let mapped: UInt8
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): mapped = byte - 32
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): mapped = byte
            case 0x80...0xBF: continue  // a continuation byte: its character has its `_` already
            default: mapped = UInt8(ascii: "_")
            }
            // A leading digit gets a `_` in front, since shells reject it.
            if first && mapped >= UInt8(ascii: "0") && mapped <= UInt8(ascii: "9") { out.append(UInt8(ascii: "_")) }
            first = false
            out.append(mapped)
        }
    }

    /// The variables for `names` (after removing `prefix`), or an error naming two entries that collide.
    public static func variables(for names: [String], strippingPrefix prefix: String = "") throws(VaultError) -> [(variable: String, name: String)] {
        try bindings(for: names.map { ($0, nil) }, strippingPrefix: prefix).map { ($0.variable, $0.name) }
    }

    // MARK: exec: prefixes as path segments, fields as NAME_FIELD

    /// One variable `exec` sets: from an entry's value, or with `exec --fields` from one of its fields.
    public struct Binding: Sendable {
        /// The environment variable's name.
        public var variable: String
        /// The entry's full name.
        public var name: String
        /// The field, or nil for the value.
        public var field: String?

        /// How messages name the source: `NAME`, or `NAME#FIELD` as in templates.
        public var reference: String { field.map { "\(name)#\($0)" } ?? name }
    }

    /// `prefix` as whole path segments: `prod` means `prod/`, so that it never takes in
    /// `production/…`, and `prod/db/main` becomes `DB_MAIN`, not `_DB_MAIN`. Empty stays empty.
    public static func segmentPrefix(_ prefix: String) -> String {
        prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    /// The variables for `sources` (an entry's value when the field is nil, else that field),
    /// `prefix` removed from the names: the value as `NAME`, a field as `NAME_FIELD` (`app/db` with
    /// field `user` → `APP_DB_USER`); an error names the two sources of one variable.
    public static func bindings(for sources: [(name: String, field: String?)], strippingPrefix prefix: String = "") throws(VaultError) -> [Binding] {
        var seen: [String: Binding] = [:]
        var result: [Binding] = []
        for (name, field) in sources {
            // By bytes: the prefix was matched byte-wise, and a Character count is not a byte count.
            let strip = name.utf8.starts(with: prefix.utf8) ? prefix.utf8.count : 0
            let stripped = String(decoding: name.utf8.dropFirst(strip), as: UTF8.self)
            let binding = Binding(variable: variable(for: field.map { stripped + "_" + $0 } ?? stripped), name: name, field: field)
            if let other = seen[binding.variable] {
                throw .environmentVariableClash(other.reference, binding.reference, variable: binding.variable)
            }
            seen[binding.variable] = binding
            result.append(binding)
        }
        return result
    }
}
