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

    /// The readers that can hand each item over as they read it (`ForeignItemSink`): the CSV
    /// exports, whose items need nothing read after them, and enpass-json and bitwarden-json,
    /// which decline the stream when an item names a folder not read yet, keepass-xml (an
    /// entry comes inside its groups), which declines it when an attachment references a pool
    /// not read yet, and 1pux, which declines it when a second vault or account comes after
    /// items already handed over (their folders would change). Nil for every other format.
    static func itemStream(_ bytes: [UInt8], format: InterchangeFormat, now: Int64) -> ((ForeignItemSink) throws(VaultError) -> ForeignImport)? {
        if let csv = csvItemStream(bytes, format: format, now: now) { return csv }
        switch format {
        case .enpassJSON: return { sink throws(VaultError) in try EnpassJSONReader.read(bytes, now: now, each: sink) }
        case .onePUX: return { sink throws(VaultError) in try OnePUXReader.read(bytes, now: now, each: sink) }
        case .bitwardenJSON: return { sink throws(VaultError) in try BitwardenJSON.read(bytes, now: now, each: sink) }
        case .keepassXML: return { sink throws(VaultError) in try KeePassXMLReader.read(bytes, now: now, each: sink) }
        default: return nil
        }
    }

    /// `itemStream` of the CSV exports, whose readers scan a buffer or a file a window at a time.
    private static func csvItemStream(_ input: some CSVSource, format: InterchangeFormat,
                                      now: Int64) -> ((ForeignItemSink) throws(VaultError) -> ForeignImport)? {
        switch format {
        case .bitwardenCSV: return { sink throws(VaultError) in try BitwardenCSVReader.read(input, now: now, each: sink) }
        case .onePasswordCSV: return { sink throws(VaultError) in try OnePasswordCSVReader.read(input, now: now, each: sink) }
        case .lastPassCSV: return { sink throws(VaultError) in try LastPassCSVReader.read(input, now: now, each: sink) }
        case .chromeCSV: return { sink throws(VaultError) in try ChromeCSVReader.read(input, now: now, each: sink) }
        case .firefoxCSV: return { sink throws(VaultError) in try FirefoxCSVReader.read(input, now: now, each: sink) }
        case .dashlaneCSV: return { sink throws(VaultError) in try DashlaneCSVReader.read(input, now: now, each: sink) }
        case .keepassxcCSV: return { sink throws(VaultError) in try KeePassXCCSV.read(input, now: now, each: sink) }
        default: return nil
        }
    }

    /// Whether `read(windows:format:now:options:)` reads `format`: vaultfile's own CSV, the
    /// other managers' CSV exports, enpass-json, 1pux (its ZIP read a part at a time: `ZipBytes`),
    /// and dotenv.
    public static func readsWindows(_ format: InterchangeFormat) -> Bool {
        format == .csv || format == .dotenv || format == .enpassJSON || format == .onePUX
            || csvItemStream([UInt8](), format: format, now: 0) != nil
    }

    /// `read(taking:format:now:options:)` of a file read a window at a time (`ImportWindows`), for a
    /// format that `readsWindows`: its rows become records as they are scanned, and the file is
    /// never whole in memory (issue 44's memory rule). A name twice has the
    /// file read once more when its names come in order, each repeated one's rows together (a
    /// browser's export by site: `ForeignBuilder.build(streamingGroups:)`), else twice more (a plan
    /// of the numbers, then the build: `ForeignBuilder.build(streaming:)`).
    /// When the stream is declined otherwise (an entry the record writer refuses, a file that
    /// changed between reads), the file is read again whole and imported the way
    /// `read(taking:)` imports it, which gives what the stream gives where both give anything.
    public static func read(windows: ImportWindows, format: InterchangeFormat, now: Int64 = currentTimeMilliseconds(),
                            options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        precondition(readsWindows(format), "a format read a window at a time")
        if format == .csv, let records = try NativeCSV.records(windows, now: now) {
            let imported = try ImportedEntries(written: records, renamings: [])
            return options.prefix.isEmpty ? imported : try imported.placed(under: options.prefix)
        }
        if format == .dotenv, let records = try DotEnv.records(windows, now: now) {
            let imported = try ImportedEntries(written: records, renamings: [])
            return options.prefix.isEmpty ? imported : try imported.placed(under: options.prefix)
        }
        // Room for records twice the input (eight times a 1pux's ZIP), as `streamedEntries`.
        let items: ((ForeignItemSink) throws(VaultError) -> ForeignImport)? = switch format {
        case .enpassJSON: { sink in EnpassJSONReader.read(windows, each: sink) }
        case .onePUX: { sink in OnePUXReader.read(windows, each: sink) }
        default: csvItemStream(windows, format: format, now: now)
        }
        let capacity = windows.byteCount * (format == .onePUX ? 8 : 2)
        // A CSV reader's items own all they hold: a build may keep some a while (`holding`).
        if let items, let streamed = try ForeignBuilder.build(streaming: items, capacity: capacity, now: now, options: options,
                                                             holding: format != .enpassJSON && format != .onePUX) {
            return streamed
        }
        var bytes = try windows.readAll()
        defer { SecureMemory.wipe(&bytes) }
        return try read(taking: &bytes, format: format, now: now, options: options)
    }

    /// The entries of `bytes` built as its items are read (`ForeignBuilder.build(streaming:)`), when
    /// its format's reader can hand them over so and the build needs no item read after another; nil otherwise.
    static func streamedEntries(_ bytes: [UInt8], format: InterchangeFormat, now: Int64,
                                options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries? {
        guard let read = itemStream(bytes, format: format, now: now) else { return nil }
        // Room for records twice the input (a CSV row's record is 1.2–1.5× its text): the pages are
        // mapped as written, so room never written costs no memory, and the writer seldom copies
        // its records into a larger buffer (which held both at once).
        // A 1pux is a ZIP: its records are several times its size (3.8× for the bench's logins).
        let capacity = bytes.count * (format == .onePUX ? 8 : 2)
        // A CSV reader's items own all they hold: a build may keep some a while (`holding`).
        let holding = csvItemStream([UInt8](), format: format, now: now) != nil
        return try ForeignBuilder.build(streaming: read, capacity: capacity, now: now, options: options, holding: holding)
    }

    /// `read(_:format:now:)` with the import's options: another password manager's format through
    /// its reader and the one builder (`ForeignImport.entries`); any other format read as it always
    /// was, then placed under `options.prefix`.
    public static func read(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds(),
                            options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        if let streamed = try streamedEntries(bytes, format: format, now: now, options: options) { return streamed }
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
    /// An export whose items are built as they are read (`streamedEntries`) holds no items: its
    /// bytes stay until the entries are built, then are wiped and emptied the same way.
    public static func read(taking bytes: inout [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds(),
                            options: ForeignBuildOptions) throws(VaultError) -> ImportedEntries {
        if let streamed = try streamedEntries(bytes, format: format, now: now, options: options) {
            SecureMemory.wipe(&bytes)
            bytes = []
            return streamed
        }
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

    /// The same entries with the names `moves` gives (`import --skip-existing`: a new account
    /// whose name the vault holds for another, numbered after the vault's entries), each said in
    /// a renaming with the reason `vaultHoldsAnotherAccount` and its account; the others unchanged.
    public func renumbered(_ moves: [String: (to: String, account: String)]) throws(VaultError) -> ImportedEntries {
        guard !moves.isEmpty else { return self }
        // A name whose title it ends in (no `title` field) and whose number cut that title to fit
        // keeps its title in the field `title` (`shortened`, `titleKept`), as the import keeps a title it cut: the next
        // --skip-existing tells it from the other titles the cut name shares (att63 F1).
        var titled = Set<String>()
        var result = try rebuilt(renaming: { moves[$0]?.to ?? $0 }, keeping: { _ in true }, retitling: { name, entry in
            guard let move = moves[name], entry.fields["title"] == nil, !move.to.utf8.starts(with: name.utf8) else { return entry }
            var entry = entry
            entry.fields["title"] = Array(ForeignNaming.leaf(of: name).utf8)
            titled.insert(name)
            return entry
        })
        // rebuilt renamed the renamings' originals too: an original is what the file held.
        var said = Set<String>()
        result.renamings = renamings.map { renaming in
            guard let move = moves[renaming.name] else { return renaming }
            said.insert(renaming.name)
            return ImportRenaming(original: renaming.original, name: move.to,
                                  reasons: renaming.reasons + [.vaultHoldsAnotherAccount]
                                      + (titled.contains(renaming.name) ? [.shortened, .titleKept].filter { !renaming.reasons.contains($0) } : []),
                                  account: move.account, madeOf: renaming.madeOf)
        }
        for (name, _) in entries where !said.contains(name) {
            guard let move = moves[name] else { continue }
            result.renamings.append(ImportRenaming(original: name, name: move.to,
                                                   reasons: [.vaultHoldsAnotherAccount] + (titled.contains(name) ? [.shortened, .titleKept] : []), account: move.account))
        }
        return result
    }

    private func rebuilt(renaming rename: (String) -> String, keeping isKept: (String) -> Bool,
                         retitling retitle: (String, Entry) -> Entry = { $1 }) throws(VaultError) -> ImportedEntries {
        if isOnDisk { return try inMemory().rebuilt(renaming: rename, keeping: isKept, retitling: retitle) }
        let kept = entries.filter { isKept($0.name) }
        let keptNames = Set(kept.map { Array($0.name.utf8) })
        let moved = renamings.filter { keptNames.contains(Array($0.name.utf8)) }.map {
            ImportRenaming(original: rename($0.original), name: rename($0.name), reasons: $0.reasons, account: $0.account, madeOf: $0.madeOf)
        }
        var result = try ImportedEntries(kept.map { (rename($0.name), retitle($0.name, $0.entry)) }, renamings: moved)
        // The dangerous-variable warnings are found again for the new names; the others stay.
        var others = warnings.filter { if case .dangerousVariable = $0 { return false } else { return true } }
        // Those about single entries, for the entries kept (cold63 F10: not for the ones --skip-existing skips).
        if let sources = entryWarningSources {
            if kept.count < count { others = sources.narrowed(others, keeping: { keptNames.contains(Array($0.utf8)) }, renaming: rename) }
            result.entryWarningSources = sources
        }
        result.warnings = others + result.warnings
        result.history = history.map { $0.filter { keptNames.contains(Array($0.name.utf8)) }.map { (rename($0.name), $0.versions) } }
        result.fromForeign = fromForeign
        return result
    }
}
