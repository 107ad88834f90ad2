// MARK: - Import and export formats

/// The formats `import` reads and `export` writes.
public enum InterchangeFormat: String, CaseIterable, Sendable {
    /// vaultfile's own lossless JSON (docs/INTERCHANGE.md): binary values, fields, times.
    case json
    /// `KEY=value` lines, as `.env` files hold them.
    case dotenv
    /// RFC 4180 CSV: `name,value`, then one column per field name.
    case csv
    /// The CSV that `keepassxc-cli export --format csv` writes (import only).
    case keepassxcCSV = "keepassxc-csv"
    /// Bitwarden's unencrypted JSON export (import only).
    case bitwardenJSON = "bitwarden-json"

    /// Whether vaultfile can write this format.
    public var canExport: Bool { self == .json || self == .dotenv || self == .csv }
}

/// What an import file holds, and what its reader should be told about it.
public struct ImportedEntries {
    /// The entries, in file order, validated (names, fields, sizes).
    public var entries: [(name: String, entry: Entry)]
    /// Entries that import but deserve a warning, in file order.
    public var warnings: [ImportWarning]
    /// The earlier versions an export of version 2 carries (`--with-history`), by name; nil for
    /// every other file.
    public var history: [(name: String, versions: [EntryVersion])]?
}

/// Something about an imported entry that its owner should know.
public enum ImportWarning: Equatable, Sendable, CustomStringConvertible {
    /// `vaultfile exec` would export the entry `name` as `variable`, which makes programs load or run
    /// other code (`DangerousEnvironmentNames`).
    case dangerousVariable(name: String, variable: String)

    public var description: String {
        switch self {
        case .dangerousVariable(let name, let variable):
            return "entry '\(EntryName.escapingFormatCharacters(name))' would become \(variable) under 'vaultfile exec', a variable that makes programs load or run other code"
        }
    }
}

/// Converts between vaults and the interchange formats. Parsing is strict and names the line of any problem.
public enum Interchange {
    /// The entries a file holds, with a warning for each that `exec` would export as a variable in
    /// `DangerousEnvironmentNames`.
    public static func read(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> ImportedEntries {
        var history: [(name: String, versions: [EntryVersion])]?
        let entries: [(name: String, entry: Entry)]
        if format == .json, HistoryJSON.isVersion2(bytes) {
            let parsed = try HistoryJSON.parse(bytes)
            entries = try validated(parsed.entries)
            history = parsed.history
        } else {
            entries = try parse(bytes, format: format, now: now)
        }
        var warnings: [ImportWarning] = []
        for (name, _) in entries {
            let variable = EnvironmentNames.variable(for: name)
            if DangerousEnvironmentNames.contains(variable) { warnings.append(.dangerousVariable(name: name, variable: variable)) }
        }
        return ImportedEntries(entries: entries, warnings: warnings, history: history)
    }

    /// The entries a file holds, in file order, validated (names, fields, sizes).
    public static func parse(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> [(name: String, entry: Entry)] {
        let entries: [(String, Entry)]
        switch format {
        case .json: entries = try NativeJSON.parse(bytes)
        case .dotenv: entries = try DotEnv.parse(bytes, now: now)
        case .csv: entries = try NativeCSV.parse(bytes, now: now)
        case .keepassxcCSV: entries = try KeePassXCCSV.parse(bytes, now: now)
        case .bitwardenJSON: entries = try BitwardenJSON.parse(bytes, now: now)
        }
        return try validated(entries)
    }

    /// `entries`, each checked as a vault would check it, and no name twice.
    private static func validated(_ entries: [(String, Entry)]) throws(VaultError) -> [(name: String, entry: Entry)] {
        var check = Vault()
        for (name, entry) in entries {
            if check.entry(name) != nil { throw .malformedInput("the entry '\(name)' appears twice in the input") }
            try check.put(entry, as: name)
        }
        return entries
    }

    /// The vault (or the entries under `prefix`) in `format`.
    ///
    /// `withHistory` (json only) writes export version 2 with every earlier version (HistoryJSON).
    public static func export(_ vault: Vault, format: InterchangeFormat, prefix: String = "", withHistory: Bool = false) throws(VaultError) -> [UInt8] {
        if withHistory {
            guard format == .json else { throw .malformedInput("only the json format carries history") }
            return try HistoryJSON.export(vault, prefix: prefix)
        }
        let entries = vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }
        switch format {
        case .json: return try NativeJSON.export(entries)
        case .dotenv: return try DotEnv.export(entries)
        case .csv: return try NativeCSV.export(entries)
        case .keepassxcCSV, .bitwardenJSON:
            throw .malformedInput("\(format.rawValue) is an import format only; export json, dotenv or csv")
        }
    }
}
