import VaultModel

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
    /// Bitwarden's unencrypted JSON export (import: BitwardenJSON; export: BitwardenJSONExport).
    case bitwardenJSON = "bitwarden-json"
    /// KeePass 2's XML, as KeePass and `keepassxc-cli export --format xml` write it (import:
    /// KeePassXMLReader; export: KeePassXMLExport, which `keepassxc-cli import` reads).
    case keepassXML = "keepass-xml"
    /// Bitwarden's CSV export (import only).
    case bitwardenCSV = "bitwarden-csv"
    /// 1Password 8's CSV export (import only).
    case onePasswordCSV = "1password-csv"
    /// 1Password's 1PUX export: a ZIP of export.data and files (import only).
    case onePUX = "1pux"
    /// LastPass's CSV export (import only).
    case lastPassCSV = "lastpass-csv"
    /// Chrome's (and Edge's, Brave's) CSV export of passwords (import only).
    case chromeCSV = "chrome-csv"
    /// Firefox's CSV export of logins (import only).
    case firefoxCSV = "firefox-csv"
    /// Dashlane's CSV files: credentials, with or without its header, secure notes, payments, IDs,
    /// personal info (import only; DashlaneCSVReader).
    case dashlaneCSV = "dashlane-csv"
    /// Enpass's JSON export (import only).
    case enpassJSON = "enpass-json"
    /// An ansible-vault file, or a YAML file with inline `!vault` values (import only; AnsibleVaultReader).
    case ansibleVault = "ansible-vault"
    /// A sops YAML or JSON file encrypted to an age key (import only; SopsReader).
    case sops
    /// A KeePass database, KDBX 3.1 or 4.x (import: KDBXReader, with its password and/or key file;
    /// export: KDBX 4, KDBXWriter, under a new password).
    case kdbx

    /// Whether vaultfile can write this format.
    /// (A pass store, a folder, is written too: `export --format pass`, not a format of one file.)
    public var canExport: Bool { [.json, .dotenv, .csv, .kdbx, .keepassXML, .bitwardenJSON].contains(self) }
}

/// Something about an imported entry that its owner should know.
public enum ImportWarning: Equatable, Sendable, CustomStringConvertible {
    /// `vaultfile exec` would export the entry `name` as `variable`, which makes programs load or run
    /// other code (`DangerousEnvironmentNames`).
    case dangerousVariable(name: String, variable: String)
    /// Something the source carries that no entry keeps (`ForeignImport.notKept`): what, in how
    /// many items, and why it is left out (`reason`, as the reader that counted it named it).
    case notKept(what: String, count: Int, reason: NotKeptReason)
    /// Custom fields stored under another field name: the label `label` became `field` in `count`
    /// entries, the first of them `example` (ForeignBuilder.swift).
    case fieldRenamed(label: String, field: String, count: Int, example: String, reason: ForeignFieldRenaming)
    /// A TOTP that `vaultfile totp` cannot compute, stored as it is in the field `totp` (`why`).
    case totpUnusable(name: String, why: String)
    /// Earlier versions of `entries` entries (`versions` in all) not kept: the vault keeps no history.
    case historyNotKept(versions: Int, entries: Int)
    /// Earlier versions of the entries `names` (`versions` in all) not kept: past the vault's
    /// history limits, `policy` (its count per entry, or its byte budget).
    case historyTrimmed(versions: Int, names: [String], policy: HistoryPolicy)
    /// A KDBX 3.1 file without Meta/HeaderHash: its header could not be checked (KeePass before 2.20).
    case headerNotAuthenticated(file: String)
    /// `import --skip-existing` of another manager's export left out the item named `name`
    /// (account `incoming`): the vault's entry of that name holds another account, `existing`.
    case otherAccountSkipped(name: String, incoming: String, existing: String)
    /// `import --skip-existing` left out the item named `name` as the vault's entry `matched`
    /// holds it (by name, `byName`, or by account), while the file's item differs from that entry
    /// (`change`: "the file's password differs", never a value): the file's version is not taken.
    /// Matched by account, `name` is the item's title (its name without the file's number, which
    /// may be another item's name in the same run: recheck62 N3) and `account` its account.
    case changeNotTaken(name: String, matched: String, change: String, byName: Bool, account: String = "")
    /// `import --overwrite` of another manager's export replaces the vault's entry `name`, which
    /// held another account (`existing`: "user bob, bank.example", never a secret) than the file's
    /// item (`incoming`): by name, as documented, but said (att62 F7).
    case replacedOtherAccount(name: String, existing: String, incoming: String)
    /// `count` values a sops file holds unencrypted (its `_unencrypted` rule): imported, but its
    /// MAC covers their values, not their names, so someone without the key can rename or move them.
    case namesNotAuthenticated(file: String, count: Int)
    /// A Bitwarden SSH key item (titled `item`) whose key is stored as an ordinary entry, which
    /// the agent does not serve: `why` (protected by a passphrase, or not an OpenSSH key it reads).
    case sshKeyNotServed(item: String, why: String)
    /// KeePass attachments given by reference to data the XML does not hold (KeePassXC's XML
    /// export leaves it out), in `count` items, the first of them `items` (group path and title).
    case attachmentDataMissing(items: [String], count: Int)
    /// KeePass entries with a custom string that was not protected, in `count` entries, the first
    /// of them `items` (group path and title): the mark is not kept (every field is encrypted alike,
    /// and the kdbx and keepass-xml exports protect every custom string).
    case unprotectedStringsNotKept(items: [String], count: Int)
    /// 1pux references (`count`) to items the export does not hold, in `itemCount` items, the
    /// first of them `items`: each keeps the item's id as its value.
    case referencesUnresolved(count: Int, items: [String], itemCount: Int)
    /// 1pux dates (`count`) that are no date 1Password shows (beyond the year 9999, not whole
    /// seconds, a month past 12), in `itemCount` items, the first of them `items`: kept as written.
    case datesKeptAsWritten(count: Int, items: [String], itemCount: Int)
    /// 1Password item and password-history times past the year 9999 (`count`, in `itemCount`
    /// items, the first named): no date, so left out, the item's other time or the import's
    /// taken instead (cold62 L2).
    case timesReplaced(count: Int, items: [String], itemCount: Int)
    /// Custom fields (`count`) beyond the fields an entry holds, kept as `label: value` lines of
    /// the entry's notes, in `itemCount` items, the first of them `items` (ForeignBuilder.swift).
    case fieldsKeptInNotes(count: Int, items: [String], itemCount: Int)

    public var description: String {
        switch self {
        case .referencesUnresolved(let count, let items, let itemCount):
            return "not kept: 1Password references to items the export does not hold (the item's id kept as the value), "
                + "\(count == 1 ? "1 reference" : "\(count) references") in \(itemCount == 1 ? "1 item" : "\(itemCount) items") (\(Self.named(items, count: itemCount)))"
        case .datesKeptAsWritten(let count, let items, let itemCount):
            return "\(count == 1 ? "1 date" : "\(count) dates") of 1Password \(count == 1 ? "is" : "are") no date it shows (beyond the year 9999, not whole seconds, "
                + "or a month past 12): kept as written, in \(itemCount == 1 ? "1 item" : "\(itemCount) items") (\(Self.named(items, count: itemCount))); check \(count == 1 ? "it" : "them") in 1Password"
        case .timesReplaced(let count, let items, let itemCount):
            return "\(count == 1 ? "1 item time" : "\(count) item times") of 1Password \(count == 1 ? "is" : "are") past the year 9999 "
                + "(milliseconds written as seconds?): not kept, the item's other time or the import's taken instead, "
                + "in \(itemCount == 1 ? "1 item" : "\(itemCount) items") (\(Self.named(items, count: itemCount))); check \(count == 1 ? "it" : "them") in 1Password"
        case .fieldsKeptInNotes(let count, let items, let itemCount):
            return "\(count == 1 ? "1 field" : "\(count) fields") beyond the \(VaultLimits.maxFieldsPerEntry) an entry holds \(count == 1 ? "is" : "are") kept as "
                + "'label: value' lines of the entry's notes, in \(itemCount == 1 ? "1 entry" : "\(itemCount) entries") (\(Self.named(items, count: itemCount)))"
        case .unprotectedStringsNotKept(let items, let count):
            return "not kept: \(KeePassXMLReader.unprotectedMark), in \(count == 1 ? "1 item" : "\(count) items") (\(Self.named(items, count: count)))"
        case .attachmentDataMissing(let items, let count):
            let named = Self.named(items, count: count)
            return "not kept: KeePass attachments whose data the XML does not hold, in \(count == 1 ? "1 item" : "\(count) items") (\(named)); "
                + "KeePassXC's XML export leaves it out: take them from the database with "
                + "'keepassxc-cli attachment-export DATABASE ENTRY NAME FILE', or import the database itself with --format kdbx"
        case .sshKeyNotServed(let item, let why):
            return "item '\(EntryName.escapingFormatCharacters(item))' is an SSH key stored as an ordinary entry, which the agent does not serve: \(why)"
        case .changeNotTaken(let name, let matched, let change, let byName, let account):
            let item = byName ? "'\(EntryName.escapingFormatCharacters(name))'"
                : "'\(EntryName.escapingFormatCharacters(name))' (\(account.isEmpty ? "" : EntryName.escapingFormatCharacters(account) + "; ")the vault's '\(EntryName.escapingFormatCharacters(matched))': the same account)"
            return "skipped \(item): \(change), and --skip-existing keeps the vault's entry: not taken — "
                + (byName ? "use --overwrite to take it (it replaces every entry of the file's names), or change it with 'vaultfile set'"
                          : "change it with 'vaultfile set' ('--overwrite' replaces by name, not by account)")
        case .replacedOtherAccount(let name, let existing, let incoming):
            return "'\(EntryName.escapingFormatCharacters(name))' held another account (\(existing)) than the file's item that replaces it (\(incoming)): "
                + "--overwrite replaces by name, not by account; check which account '\(EntryName.escapingFormatCharacters(name))' should hold"
        case .otherAccountSkipped(let name, let incoming, let existing):
            return "not imported: '\(EntryName.escapingFormatCharacters(name))' (\(incoming)): the vault's '\(EntryName.escapingFormatCharacters(name))' "
                + "holds another account (\(existing)), which --skip-existing keeps; import this one under a folder of its own with --prefix"
        case .namesNotAuthenticated(let file, let count):
            return "\(count == 1 ? "1 value" : "\(count) values") of \(file) \(count == 1 ? "is" : "are") stored unencrypted: imported, but the sops MAC "
                + "covers their values and not their names, so whoever can write the file can rename or move them unseen; check those entries"
        case .headerNotAuthenticated(let file):
            return "\(file) is KDBX 3.1 without Meta/HeaderHash (KeePass before 2.20 wrote none): its header could not be checked "
                + "against tampering, only its payload (block hashes); saving it once in KeePassXC or KeePass 2.20+ adds the hash"
        case .dangerousVariable(let name, let variable):
            return "entry '\(EntryName.escapingFormatCharacters(name))' would become \(variable) under 'vaultfile exec', a variable that makes programs load or run other code"
        case .notKept(let what, let count, let reason):
            return "not kept: \(what), in \(count == 1 ? "1 item" : "\(count) items")" + (reason.explanation.map { " (\($0))" } ?? "")
        case .fieldRenamed(let label, let field, let count, let example, let reason):
            let entries = count == 1 ? "entry '\(EntryName.escapingFormatCharacters(example))'"
                : "\(count) entries ('\(EntryName.escapingFormatCharacters(example))', …)"
            switch reason {
            case .cleaned:
                return "field '\(EntryName.escapingFormatCharacters(label))' stored as '\(field)' in \(entries): a field name holds only A–Z a–z 0–9 _ . - "
                    + "(the label is kept in the field 'labels')"
            case .taken:
                return "field '\(EntryName.escapingFormatCharacters(label))' stored as '\(field)' in \(entries): another field of the entry has that name "
                    + "(the label is kept in the field 'labels')"
            case .reserved:
                let name = ImportedNameCleaner.fieldName(fromLabel: label)
                return "field '\(EntryName.escapingFormatCharacters(label))' stored as '\(field)' in \(entries): vaultfile reads a field '\(name)' as "
                    + "\(ForeignBuilder.reservedMeaning(of: name) ?? "more than a field") (the label is kept in the field 'labels')"
            }
        case .totpUnusable(let name, let why):
            return "entry '\(EntryName.escapingFormatCharacters(name))': its TOTP is stored as it is in the field 'totp', but 'vaultfile totp' cannot compute it (\(why))"
        case .historyNotKept(let versions, let entries):
            return "not kept: \(versions == 1 ? "1 earlier version" : "\(versions) earlier versions") of \(entries == 1 ? "1 entry" : "\(entries) entries") "
                + "(the vault keeps no history; 'vaultfile history --enable' first keeps them)"
        case .historyTrimmed(let versions, let names, let policy):
            let shown = names.prefix(5).map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ") + (names.count > 5 ? ", …" : "")
            return "not kept: \(versions == 1 ? "1 earlier version" : "\(versions) earlier versions") of \(names.count == 1 ? "1 entry" : "\(names.count) entries") "
                + "(\(shown)), past the vault's history limits (\(policy.versions) versions and \(policy.byteBudget) bytes per entry, the oldest go first; "
                + "'vaultfile history --keep-history N --history-bytes SIZE' first raises them)"
        }
    }

    /// `items` quoted (format characters escaped), then how many of `count` they leave out.
    private static func named(_ items: [String], count: Int) -> String {
        items.map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ") + (count > items.count ? " and \(count - items.count) more" : "")
    }

    /// The warning's kind in `import --json` (docs/JSON.md).
    public var kind: String {
        switch self {
        case .dangerousVariable: return "dangerous_variable"
        case .notKept, .attachmentDataMissing, .unprotectedStringsNotKept, .referencesUnresolved: return "not_kept"
        case .datesKeptAsWritten: return "kept_as_written"
        case .timesReplaced: return "time_replaced"
        case .fieldsKeptInNotes: return "fields_in_notes"
        case .fieldRenamed: return "field_renamed"
        case .totpUnusable: return "totp_unusable"
        case .historyNotKept: return "history_not_kept"
        case .historyTrimmed: return "history_trimmed"
        case .headerNotAuthenticated: return "header_not_authenticated"
        case .namesNotAuthenticated: return "names_not_authenticated"
        case .otherAccountSkipped: return "other_account_skipped"
        case .changeNotTaken: return "change_not_taken"
        case .replacedOtherAccount: return "replaced_other_account"
        case .sshKeyNotServed: return "ssh_key_not_served"
        }
    }
}

/// Why an import leaves something out (`ImportWarning.notKept`): named by the reader where it
/// counts the loss (`ForeignImport.notKeep`), and said after the loss, in parentheses.
public enum NotKeptReason: Hashable, Sendable {
    /// Deleted in the source (a trash, a recycle bin, deleted fields): left out by choice.
    case deletedInSource
    /// Items in a state the reader does not know (1PUX): imported as active items, the state lost.
    case unknownState
    /// Values the source keeps unencrypted (an ansible file's plain values): its configuration,
    /// not its secrets.
    case unencryptedValues
    /// A key the reader does not know: one of a later version of the export's format.
    case laterFormat
    /// Nothing is added: the loss's own text ends in what it needs, in parentheses.
    case statedInText
    /// Anything else: vaultfile has no place for it.
    case noPlace

    /// The words said after the loss, or nil (`statedInText`).
    public var explanation: String? {
        switch self {
        case .deletedInSource: return "left out: deleted in the source; restore them there and export again to bring them in"
        case .unknownState: return "imported as active items: check them in 1Password, and remove those you do not want"
        case .unencryptedValues: return "left out: the import takes the encrypted values, the file's secrets"
        case .laterFormat: return "this version of vaultfile does not read it: a later version of the export's format"
        case .statedInText: return nil
        case .noPlace: return "vaultfile has no place for it"
        }
    }
}

/// Converts between vaults and the interchange formats. Parsing is strict and names the line of any problem.
public enum Interchange {
    /// The entries a file holds, in file order, validated (names, fields, sizes); see `read`.
    public static func parse(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> [(name: String, entry: Entry)] {
        try read(bytes, format: format, now: now).entries
    }

    /// The entries a file holds, in file order, validated (names, fields, sizes), with every name
    /// in NFC, each name that is not what the file held (ImportedEntries.swift), and a warning for
    /// each entry that `exec` would export as a variable in `DangerousEnvironmentNames`.
    /// An export of version 2 (`--with-history`) also brings its histories (`ImportedEntries.history`).
    public static func read(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> ImportedEntries {
        try read(bytes, format: format, now: now, asRecords: true)
    }

    /// `read(_:format:now:)`; with `asRecords` false every entry is read as an `Entry`: the plain
    /// reference of the record writers (ImportRecords.swift), which `ImportRecordsTests` compares with it.
    static func read(_ bytes: [UInt8], format: InterchangeFormat, now: Int64, asRecords: Bool) throws(VaultError) -> ImportedEntries {
        // vaultfile's own JSON is read once, directly (`NativeJSONReader`): a document it reads is
        // valid JSON without a repeated key, so its version is what `HistoryJSON.isVersion2` (the
        // decoder, which took 44 % of an import of 10,000 entries) would find.
        // Its entries written straight as vault records when every one allows it (ASCII names, text values).
        if asRecords, format == .json, let records = NativeJSONReader.records(bytes) {
            return try ImportedEntries(written: records, renamings: [])
        }
        let direct = format == .json ? NativeJSONReader.items(bytes) : nil
        if let direct, direct.version != HistoryJSON.version {
            return try ImportedEntries(try NativeJSON.parse(version: direct.version, items: direct.items), renamings: [])
        }
        if format == .json, HistoryJSON.isVersion2(bytes) {
            let parsed = try HistoryJSON.parse(bytes)
            var imported = try ImportedEntries(parsed.entries, renamings: [])
            // Filed under the names the entries get (NFC): under the file's spelling, the versions
            // of an entry renamed on the way were cut off from it and showed as a removed entry.
            imported.history = parsed.history.map { (name: EntryName.normalized($0.name), versions: $0.versions) }
            return imported
        }
        let entries: [(String, Entry)]
        switch format {
        case .json:  // one the direct reader declined (or a version 2 claim): the decoder names the problem
            entries = try NativeJSON.parse(try JSONDocument.decode(NativeJSON.Document.self, from: bytes, what: "a vaultfile JSON export"))
        case .dotenv:
            // Written straight as vault records when every variable allows it (ImportRecords.swift).
            if asRecords, let records = try DotEnv.records(bytes, now: now) {
                return try ImportedEntries(written: records, renamings: [])
            }
            entries = try DotEnv.parse(bytes, now: now)
        case .csv:
            // Written straight as vault records when every entry allows it (ImportRecords.swift).
            if asRecords, let records = try NativeCSV.records(bytes, now: now) {
                return try ImportedEntries(written: records, renamings: [])
            }
            entries = try NativeCSV.parse(bytes, now: now)
        case .keepassxcCSV, .bitwardenJSON:
            // Read into items and made entries by the one builder, as every other manager's export
            // (docs/INTERCHANGE.md, "Other password managers"): one rule set for names, fields, TOTP.
            var foreign = try foreignItems(bytes, format: format, now: now)!
            defer { foreign.wipe() }
            return try foreign.entries(now: now, options: ForeignBuildOptions())
        case .keepassXML, .bitwardenCSV, .onePasswordCSV, .onePUX, .lastPassCSV, .chromeCSV, .firefoxCSV, .dashlaneCSV, .enpassJSON:
            // Other managers' exports: read into items, then made entries by the one builder.
            // The items' secrets wiped once built (`ForeignImport.wipe`).
            var foreign = try readForeign(bytes, format: format, now: now)
            defer { foreign.wipe() }
            return try foreign.entries(now: now, options: ForeignBuildOptions())
        case .ansibleVault, .sops, .kdbx:
            // They need age or the file's own password: the import command reads them (CryptImport).
            throw .malformedInput("--format \(format.rawValue) is read by 'vaultfile import', which runs age or asks for the file's password")
        }
        // vaultfile's own json, dotenv and csv rename nothing: their names are checked as given.
        return try ImportedEntries(entries, renamings: [])
    }

    /// The vault (or the entries under `prefix`) in `format`.
    ///
    /// `withHistory` (json only) writes export version 2 with every earlier version (HistoryJSON).
    public static func export(_ vault: Vault, format: InterchangeFormat, prefix: String = "", withHistory: Bool = false) throws(VaultError) -> [UInt8] {
        var skipped: [String] = []
        return try export(vault, format: format, prefix: prefix, withHistory: withHistory, skipped: &skipped)
    }

    /// `export(_:format:prefix:withHistory:)`, naming in `skipped` the entries left out: dotenv
    /// leaves out every entry whose value is not text (binary data cannot be a variable), in name
    /// order; the other formats leave out none (json carries everything, csv refuses binary;
    /// keepass-xml and bitwarden-json say what they could not carry in their writers' `losses`).
    public static func export(_ vault: Vault, format: InterchangeFormat, prefix: String = "", withHistory: Bool = false,
                              skipped: inout [String]) throws(VaultError) -> [UInt8] {
        skipped = []
        if withHistory {
            guard format == .json else { throw .malformedInput("only the json format carries history") }
            return try HistoryJSON.export(vault, prefix: prefix)
        }
        switch format {
        case .json: return try NativeJSON.export(vault, prefix: prefix)
        case .dotenv: return try DotEnv.export(vault, prefix: prefix, skipped: &skipped)
        case .csv: return try NativeCSV.export(vault, prefix: prefix)
        case .keepassXML: return try KeePassXMLExport.write(vault, prefix: prefix).bytes
        case .bitwardenJSON: return try BitwardenJSONExport.write(vault, prefix: prefix).bytes
        case .keepassxcCSV, .bitwardenCSV, .onePasswordCSV, .onePUX, .lastPassCSV, .chromeCSV, .firefoxCSV,
             .dashlaneCSV, .enpassJSON, .ansibleVault, .sops:
            throw .malformedInput("\(format.rawValue) is an import format only; export json, dotenv, csv, kdbx, keepass-xml, bitwarden-json or pass")
        case .kdbx:
            throw .malformedInput("kdbx is written under a new password by 'vaultfile export --format kdbx' (KDBXWriter)")
        }
    }
}
