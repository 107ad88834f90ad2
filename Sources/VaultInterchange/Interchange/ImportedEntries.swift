import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What an import brings in

/// The entries of an import file, checked, with the renamings made on the way.
public struct ImportedEntries: Sendable {
    /// The entries in file order, every name valid and in NFC (decoded from `records` when a
    /// reader wrote them so: ask `count` and `names` where they do).
    public var entries: [(name: String, entry: Entry)] {
        precondition(runs == nil, "an import's records on disk are brought into memory (inMemory()) before they are read")
        guard let records else { return listed }
        return Self.decoded(records, positions: positions)
    }
    /// The entries, unless a reader wrote them as `records`.
    private let listed: [(name: String, entry: Entry)]
    /// The entries as vault records (`ImportRecordWriter`: ASCII names, each entry passing
    /// `Vault.isValidPut`), when a reader wrote them so; `Vault.put(contentsOf:now:)` copies them.
    /// In file order, or in name order when `positions` says where each record of the file went.
    let records: StoredRecords?
    /// The entries as sorted runs on disk (`RecordRuns`: an import past one buffer), which a seal
    /// into an empty vault merges as it writes (`Vault.put(contentsOf:)`); every other use brings
    /// them into memory first (`inMemory()`).
    let runs: RecordRuns?
    /// For records put in name order (`StoredRecords.sortedByName`), the index in `records` of
    /// each entry of the file, in file order; nil when `records` are in file order.
    private let positions: [Int32]?
    /// Each name that differs from what the file held.
    public var renamings: [ImportRenaming]
    /// Entries that import but deserve a warning, in file order.
    public var warnings: [ImportWarning]
    /// The earlier versions an export of version 2 carries (`--with-history`), by name; nil for
    /// every other file.
    public var history: [(name: String, versions: [EntryVersion])]?
    /// Zeroes the values and fields of every earlier version in `history` where they lie, in every
    /// holder that shares them (`wipeShared`: a plan's copy of these entries, the vault they were
    /// put into): the import's last step, once all of them are done. The entries themselves are
    /// records, wiped when freed; the versions are arrays that a release frees as they are.
    public func wipeHistory() { Self.wipe(history ?? []) }

    /// Zeroes the values and fields of every version in `history` where they lie (`wipeShared`).
    static func wipe(_ history: [(name: String, versions: [EntryVersion])]) {
        for (_, versions) in history {
            for version in versions {
                wipeShared(version.entry.value)
                for field in version.entry.fields.values { wipeShared(field) }
            }
        }
    }

    /// Whether the entries came from another password manager through `ForeignImport.entries`:
    /// their history (KeePass, 1Password) is then dropped with a warning when the vault keeps none,
    /// where a vaultfile export with history is refused.
    public internal(set) var fromForeign = false
    /// What the builder's warnings about single entries were made of, for another manager's
    /// entries that have such warnings: `keeping` makes them again for the entries it keeps.
    var entryWarningSources: EntryWarningSources?
    /// The entries' names in byte order, as the check sorted them (nil from the one-by-one check, and
    /// for records whose names increase):
    /// `Vault.put(contentsOf:now:)` merges by it without sorting again.
    let order: NameOrder?

    /// Puts every name in NFC (recording each change), then checks the entries as a vault would
    /// hold them: names, fields, sizes, and no name twice (two spellings of one name included).
    ///
    /// The names are sorted once (`NameOrder`) to find the first repeated one, and each entry before
    /// it is checked in file order without copies (`Vault.isValidPut`; the message of a failure
    /// from `Vault.validate`), so the error is the one `init(checkingOneByOne:renamings:)`, the plain
    /// reference that puts each entry into a scratch vault, throws first
    /// (`InterchangeTests.test_importedEntries_matchTheOneByOneCheck`).
    init(_ parsed: [(String, Entry)], renamings: [ImportRenaming]) throws(VaultError) {
        var renamings = renamings
        var entries: [(name: String, entry: Entry)] = []
        entries.reserveCapacity(parsed.count)
        for (given, entry) in parsed {
            guard let name = EntryName.normalizedIfDifferent(given) else {
                entries.append((given, entry))
                continue
            }
            if !renamings.contains(where: { $0.name.utf8.elementsEqual(name.utf8) }) {
                renamings.append(ImportRenaming(original: given, name: name, reasons: [.normalized]))
            }
            entries.append((name, entry))
        }
        let names = NameOrder(entries.lazy.map(\.name))
        let repeated = names.firstRepeat
        for index in 0..<(repeated?.index ?? entries.count) {
            let (name, entry) = entries[index]
            if !names.withName(index, { Vault.isValidPut(entry, name: $0) }) {
                do { _ = try Vault.validate(entry, as: name) } catch { throw Self.naming(error, index: index, name: name) }
            }
            // The scratch vault of the reference holds `index` entries here, all new.
            guard index < VaultLimits.maxEntries else {
                throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
            }
        }
        if let repeated {
            let first = parsed[repeated.first].0, given = parsed[repeated.index].0
            guard first.utf8.elementsEqual(given.utf8) else {
                throw .malformedInput("the entries \(EntryName.spelledOut(first)) and \(EntryName.spelledOut(given)) are one name "
                                      + "in two Unicode forms; rename one of them in the file")
            }
            throw .malformedInput("the entry '\(entries[repeated.index].name)' appears twice in the input")
        }
        self.init(checked: entries, renamings: renamings, order: names)
    }

    /// The plain reference of `init(_:renamings:)`: each entry put into a scratch vault in turn.
    /// `error`, an invalid name made bad input that names the entry (its place, its first 40
    /// characters): a name in the file is no usage error (att60 F6: status 2, never 64).
    static func naming(_ error: VaultError, index: Int, name: String) -> VaultError {
        guard case .invalidName(let why) = error else { return error }
        let shown = EntryName.escapingFormatCharacters(String(name.prefix(40))) + (name.count > 40 ? "…" : "")
        return .malformedInput("entry \(index + 1) ('\(shown)'): invalid name: \(why)")
    }

    init(checkingOneByOne parsed: [(String, Entry)], renamings: [ImportRenaming]) throws(VaultError) {
        var renamings = renamings
        var entries: [(name: String, entry: Entry)] = []
        var originals: [[UInt8]: String] = [:]  // by bytes: String equality would take two spellings for one
        var check = Vault()
        for (given, entry) in parsed {
            let name = EntryName.normalized(given)
            if !name.utf8.elementsEqual(given.utf8) && !renamings.contains(where: { $0.name.utf8.elementsEqual(name.utf8) }) {
                renamings.append(ImportRenaming(original: given, name: name, reasons: [.normalized]))
            }
            let key = Array(name.utf8)
            if let first = originals[key] {
                guard first.utf8.elementsEqual(given.utf8) else {
                    throw .malformedInput("the entries \(EntryName.spelledOut(first)) and \(EntryName.spelledOut(given)) are one name "
                                          + "in two Unicode forms; rename one of them in the file")
                }
                throw .malformedInput("the entry '\(name)' appears twice in the input")
            }
            originals[key] = given
            do { try check.put(entry, as: name) } catch { throw Self.naming(error, index: entries.count, name: name) }
            entries.append((name, entry))
        }
        self.listed = entries
        self.records = nil
        self.runs = nil
        self.positions = nil
        self.renamings = renamings
        self.warnings = Self.referenceWarnings(entries)
        self.order = nil
    }

    /// Entries already checked, with the warnings they deserve (`DangerousEnvironmentNames.isDangerous(entryName:)`
    /// finds them without building each variable's name).
    private init(checked entries: [(name: String, entry: Entry)], renamings: [ImportRenaming], order: NameOrder) {
        self.listed = entries
        self.records = nil
        self.runs = nil
        self.positions = nil
        self.renamings = renamings
        self.order = order
        self.warnings = entries.compactMap { name, _ in
            guard DangerousEnvironmentNames.isDangerous(entryName: name) else { return nil }
            return .dangerousVariable(name: name, variable: EnvironmentNames.variable(for: name))
        }
    }

    /// The entries a reader wrote as records (`ImportRecordWriter`), checked as `init(_:renamings:)`
    /// checks the same entries decoded: their names are ASCII (their own NFC form) and every entry
    /// passes `Vault.isValidPut`, so what is left is a repeated name and the number of entries;
    /// on either it is that init over the decoded entries, which throws what it throws.
    /// `ImportRecordsTests` ties the two.
    ///
    /// Names that come in increasing byte order (an export) repeat none and need no sort: they are
    /// compared each with the one before it, and `order` stays nil (the put needs no sort).
    /// Records out of name order none of whose names repeats are put in name order here
    /// (`StoredRecords.sortedByName`), each block of the file-order buffer given back as it is
    /// copied when the caller handed over the only reference: the put into an empty vault then
    /// keeps them as they are, where it copied them into order beside the import's own (KDBX
    /// import, issue 45's memory rule); `entries`, `names` and the warnings stay in file order.
    init(records: consuming StoredRecords, renamings: [ImportRenaming]) throws(VaultError) {
        guard records.count <= VaultLimits.maxEntries else {
            try self.init(Self.decoded(records, positions: nil).map { ($0.name, $0.entry) }, renamings: renamings)
            return
        }
        if records.namesIncrease {
            self.init(checked: records, renamings: renamings, order: nil)
            return
        }
        if let sorted = records.sortedByName(releasing: isKnownUniquelyReferenced(&records)) {
            self.init(checked: sorted.records, positions: sorted.positions, renamings: renamings, order: nil)
            return
        }
        let names = NameOrder(copy records)
        guard names.firstRepeat == nil else {
            try self.init(Self.decoded(records, positions: nil).map { ($0.name, $0.entry) }, renamings: renamings)
            return
        }
        self.init(checked: records, renamings: renamings, order: names)
    }

    /// Runs already checked, with the warnings their `dangerous` names deserve (in input order).
    init(checked runs: RecordRuns, dangerous: [String], renamings: [ImportRenaming]) {
        listed = []
        records = nil
        self.runs = runs
        positions = nil
        self.renamings = renamings
        warnings = dangerous.map { .dangerousVariable(name: $0, variable: EnvironmentNames.variable(for: $0)) }
        order = nil
    }

    /// Records already checked, with the warnings they deserve (in file order); `order` nil when
    /// their names increase; `positions` as `self.positions`.
    init(checked records: StoredRecords, positions: [Int32]? = nil, renamings: [ImportRenaming], order names: NameOrder?) {
        var warnings: [(file: Int, warning: ImportWarning)] = []
        records.forEachName { index, bytes in
            guard DangerousEnvironmentNames.isDangerous(entryName: bytes) else { return }
            let name = String(decoding: bytes, as: UTF8.self)
            warnings.append((index, .dangerousVariable(name: name, variable: EnvironmentNames.variable(for: name))))
        }
        if let positions, warnings.count > 1 {
            // Back in file order: the file index of each record.
            var fileIndex = [Int32](repeating: 0, count: positions.count)
            for (file, position) in positions.enumerated() { fileIndex[Int(position)] = Int32(file) }
            warnings = warnings.map { (Int(fileIndex[$0.file]), $0.warning) }.sorted { $0.file < $1.file }
        }
        self.listed = []
        self.records = records
        self.runs = nil
        self.positions = positions
        self.renamings = renamings
        self.warnings = warnings.map(\.warning)
        self.order = names
    }

    /// Every record decoded into its name and entry, in file order (`positions` as `self.positions`).
    private static func decoded(_ records: StoredRecords, positions: [Int32]?) -> [(name: String, entry: Entry)] {
        withExtendedLifetime(records) {
            (0..<records.count).map { file in
                let index = positions.map { Int($0[file]) } ?? file
                return (name: String(decoding: records.name(at: index), as: UTF8.self), entry: records.entry(at: index))
            }
        }
    }

    /// The number of entries.
    public var count: Int { records?.count ?? runs?.count ?? listed.count }

    /// The entries' names, in file order.
    public var names: [String] {
        precondition(runs == nil, "an import's records on disk are brought into memory (inMemory()) before they are read")
        guard let records else { return listed.map(\.name) }
        return withExtendedLifetime(records) {
            (0..<records.count).map { file in String(decoding: records.name(at: positions.map { Int($0[file]) } ?? file), as: UTF8.self) }
        }
    }

    /// Whether a name holds a byte of 0x80 or more (never for `records`, whose names are ASCII).
    public var hasNonASCIIName: Bool {
        records == nil && runs == nil && listed.contains { $0.name.utf8.contains { $0 >= 0x80 } }
    }

    /// The warnings as `init(checkingOneByOne:renamings:)` finds them: each entry's variable built
    /// and looked up (`DangerousEnvironmentNames.contains`).
    static func referenceWarnings(_ entries: [(name: String, entry: Entry)]) -> [ImportWarning] {
        entries.compactMap { name, _ in
            let variable = EnvironmentNames.variable(for: name)
            return DangerousEnvironmentNames.contains(variable) ? .dangerousVariable(name: name, variable: variable) : nil
        }
    }
}

// MARK: - Twins in a vault

extension Vault {
    /// For each of `names` (in NFC) that has no entry of its own bytes, the entry that is the same
    /// name in another Unicode form, if any: those an import must refuse. One pass over the vault's
    /// names, whatever the number of `names`.
    public func canonicalTwins(of names: [String]) -> [(name: String, existing: String)] {
        var spellings: [[UInt8]: String] = [:]
        forEachRecord { record in
            record.withName { bytes in
                guard bytes.contains(where: { $0 >= 0x80 }) else { return }  // an ASCII name is its own NFC form
                let name = String(decoding: bytes, as: UTF8.self)
                spellings[Array(EntryName.normalized(name).utf8)] = name
            }
        }
        guard !spellings.isEmpty else { return [] }
        return names.compactMap { name in
            guard !contains(key: Array(name.utf8)), let existing = spellings[Array(EntryName.normalized(name).utf8)], !existing.utf8.elementsEqual(name.utf8) else { return nil }
            return (name, existing)
        }
    }
}

// MARK: - Putting an import into a vault

extension Vault {
    /// Puts the entries of an import, as `put(contentsOf:now:)` does; the import's checks (every entry
    /// valid, no name twice) and its sorted names are not done again.
    ///
    /// Entries an import wrote as records (`ImportRecordWriter`) are copied as they are; into an
    /// empty vault, in name order already, their buffer becomes the vault's records.
    ///
    /// Entries in runs on disk (an import past one buffer) go into an empty vault with nothing in
    /// its trash as they are: the seal merges the runs as it writes (`Vault.put(incoming:)`). Anything else
    /// brings them into memory first.
    public mutating func put(contentsOf imported: ImportedEntries, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        try put(contentsOf: imported, clashes: nil, now: now)
    }

    /// `put(contentsOf:now:)` of entries in runs on disk into a vault that holds entries, with the
    /// names it holds (`clashes(of:)`, found by the import's plan): merged with its records by the seal
    /// when no replaced entry's history is to be kept; nothing done when every record is already the
    /// vault's, byte for byte (the in-memory path then leaves the vault equal, unwritten).
    package mutating func put(contentsOf imported: ImportedEntries, clashes: IncomingClashes?, now: Int64) throws(VaultError) {
        if let runs = imported.runs {
            if let clashes, clashes.changeNothing, clashes.count == runs.count, !keepsHistory { return }
            guard try put(incoming: runs, clashes: clashes) else { return try put(contentsOf: imported.inMemory(), now: now) }
            return
        }
        try put(importedRecords: imported.records, order: imported.order, entries: { imported.entries }, now: now)
    }
}
