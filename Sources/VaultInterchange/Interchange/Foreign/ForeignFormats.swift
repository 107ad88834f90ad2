import SecureMemory
import VaultModel

// MARK: - Reading any format with the import's options

extension Interchange {
    /// The items of `bytes` when `format` is another password manager's, read by its reader (one
    /// `case` per reader, added by the helper who writes it); nil for the formats read otherwise
    /// (vaultfile's own, read as they always were).
    static func foreignItems(_ bytes: [UInt8], format: InterchangeFormat, now: Int64) throws(VaultError) -> ForeignImport? {
        switch format {
        case .keepassXML, .bitwardenCSV, .onePasswordCSV, .onePUX, .lastPassCSV, .chromeCSV, .firefoxCSV, .dashlaneCSV, .enpassJSON:
            return try readForeign(bytes, format: format, now: now)
        // The two older readers follow the builder's rules too (issue 44, "Nothing lost, every loss said").
        case .keepassxcCSV: return try KeePassXCCSV.read(bytes, now: now)
        case .bitwardenJSON: return try BitwardenJSON.read(bytes, now: now)
        case .json, .dotenv, .csv, .ansibleVault, .sops, .kdbx:
            return nil
        }
    }

    /// `read(_:format:now:)` with the import's options: another password manager's format through
    /// its reader and the one builder (`ForeignImport.entries`); any other format read as it always
    /// was, then placed under `options.prefix`.
    public static func read(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds(),
                            options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        if var foreign = try foreignItems(bytes, format: format, now: now) {
            defer { foreign.wipe() }
            return try foreign.entries(now: now, options: options)
        }
        let imported = try read(bytes, format: format, now: now)
        return options.prefix.isEmpty ? imported : try imported.placed(under: options.prefix)
    }

    /// `read(_:format:now:options:)` of an input its caller gives up: once another manager's
    /// export is read into items, `bytes` is wiped and emptied, so that its memory is free before
    /// the entries are built (issue 44: the input, its items and the entries are never all held;
    /// the items hold copies of everything they keep). When the reader throws, `bytes` is as it was.
    public static func read(taking bytes: inout [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds(),
                            options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        guard var foreign = try foreignItems(bytes, format: format, now: now) else {
            return try read(bytes, format: format, now: now, options: options)
        }
        defer { foreign.wipe() }
        SecureMemory.wipe(&bytes)
        bytes = []
        return try foreign.entries(now: now, options: options)
    }
}

// MARK: - Placing and choosing imported entries

extension ImportedEntries {
    /// The same entries under the folders `prefix` (`import --prefix`), checked again (the longer
    /// names must still be names); renamings, warnings and history follow their entries.
    public func placed(under prefix: [String]) throws(VaultError) -> ImportedEntries {
        guard !prefix.isEmpty else { return self }
        let folder = prefix.joined(separator: "/") + "/"
        return try rebuilt(renaming: { folder + $0 }, keeping: { _ in true })
    }

    /// Only the entries whose names `isKept` accepts (`import --skip-existing`), with their
    /// renamings and history.
    public func keeping(_ isKept: (String) -> Bool) throws(VaultError) -> ImportedEntries {
        try rebuilt(renaming: { $0 }, keeping: isKept)
    }

    private func rebuilt(renaming rename: (String) -> String, keeping isKept: (String) -> Bool) throws(VaultError) -> ImportedEntries {
        let kept = entries.filter { isKept($0.name) }
        let keptNames = Set(kept.map { Array($0.name.utf8) })
        let moved = renamings.filter { keptNames.contains(Array($0.name.utf8)) }.map {
            ImportRenaming(original: rename($0.original), name: rename($0.name), reasons: $0.reasons)
        }
        var result = try ImportedEntries(kept.map { (rename($0.name), $0.entry) }, renamings: moved)
        // The dangerous-variable warnings are found again for the new names; the others stay.
        result.warnings = warnings.filter { if case .dangerousVariable = $0 { return false } else { return true } } + result.warnings
        result.history = history.map { $0.filter { keptNames.contains(Array($0.name.utf8)) }.map { (rename($0.name), $0.versions) } }
        result.fromForeign = fromForeign
        return result
    }
}
