// MARK: - dotenv

/// `.env` files: `KEY=value`, `export KEY=value`, `#` comments, blank lines, unquoted,
/// 'single-quoted' (literal) and "double-quoted" values (escapes `\n \r \t \" \\ \$`, may span lines).
enum DotEnv {
    /// The variables of a dotenv file, as entries named by the variables.
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedInput("the dotenv file is not UTF-8") }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        var result: [(String, Entry)] = []
        var index = 0
        while index < lines.count {
            let lineNumber = index + 1
            var line = lines[index].drop { $0 == " " || $0 == "\t" }
            index += 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst(7).drop { $0 == " " } }
            guard let equals = line.firstIndex(of: "=") else {
                throw .malformedInput("line \(lineNumber): expected KEY=value")
            }
            let key = String(line[..<equals]).trimmed
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }) else {
                throw .malformedInput("line \(lineNumber): '\(key)' is not a variable name")
            }
            var rest = line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if rest.hasPrefix("'") {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "'") else { throw .malformedInput("line \(lineNumber): unterminated single quote") }
                value = String(rest[..<close])
                try checkTrailing(rest[rest.index(after: close)...], lineNumber)
            } else if rest.hasPrefix("\"") {
                rest = rest.dropFirst()
                var closed = false
                while !closed {
                    var chars = rest.makeIterator()
                    var consumed = 0
                    while let char = chars.next() {
                        consumed += 1
                        if char == "\\" {
                            consumed += 1
                            switch chars.next() {
                            case "n": value.append("\n")
                            case "r": value.append("\r")
                            case "t": value.append("\t")
                            case "\"": value.append("\"")
                            case "\\": value.append("\\")
                            case "$": value.append("$")
                            case let other?: value.append("\\"); value.append(other)
                            case nil: value.append("\\"); consumed -= 1
                            }
                        } else if char == "\"" {
                            closed = true
                            try checkTrailing(rest.dropFirst(consumed), lineNumber)
                            break
                        } else {
                            value.append(char)
                        }
                    }
                    if !closed {
                        guard index < lines.count else { throw .malformedInput("line \(lineNumber): unterminated double quote") }
                        value.append("\n")
                        rest = lines[index]
                        index += 1
                    }
                }
            } else {
                // Unquoted: up to an inline comment (" #"), trailing spaces removed.
                var raw = String(rest)
                if let comment = raw.indexOf(" #") { raw = String(raw[..<comment]) }
                value = raw.trimmed
            }
            result.append((key, Entry(value: Array(value.utf8), created: now, modified: now)))
        }
        return result
    }

    /// Throws unless only blanks or a comment follow a closing quote.
    private static func checkTrailing(_ rest: Substring, _ lineNumber: Int) throws(VaultError) {
        let trailing = rest.drop { $0 == " " || $0 == "\t" }
        guard trailing.isEmpty || trailing.hasPrefix("#") else {
            throw .malformedInput("line \(lineNumber): unexpected text after the closing quote")
        }
    }

    /// The entries as double-quoted `VARIABLE="value"` lines; binary values are refused.
    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        var out = ""
        for (variable, name) in try EnvironmentNames.variables(for: entries.map(\.name)) {
            let value = entries.first { $0.name == name }!.entry.value
            guard let text = String(validating: value, as: UTF8.self), !value.contains(0) else {
                throw .malformedInput("'\(name)' holds binary data, which dotenv cannot carry; export json instead")
            }
            var escaped = ""
            for char in text {
                switch char {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "$": escaped += "\\$"
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                default: escaped.append(char)
                }
            }
            out += "\(variable)=\"\(escaped)\"\n"
        }
        return Array(out.utf8)
    }
}
