// MARK: - Entry names as environment variable names

/// Maps entry names to environment variable names (for `exec` and dotenv export).
public enum EnvironmentNames {
    /// Upper-cases ASCII letters and turns every character outside `[A-Z0-9_]` into `_`:
    /// `db/password` → `DB_PASSWORD`. A leading digit gets a `_` in front, since shells reject it.
    public static func variable(for name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "a"..."z": out.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
            case "A"..."Z", "0"..."9", "_": out.unicodeScalars.append(scalar)
            default: out.append("_")
            }
        }
        if let first = out.unicodeScalars.first, ("0"..."9").contains(first) { out = "_" + out }
        return out
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
