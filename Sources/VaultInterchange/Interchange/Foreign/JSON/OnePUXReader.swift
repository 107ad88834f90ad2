import SecureMemory
import VaultModel

// MARK: - 1pux

/// `--format 1pux`: 1Password's unencrypted export (1Password 8: File > Export > 1PUX), a ZIP
/// archive of `export.data` (JSON: `accounts` → `vaults` → `items`) and `files/` (documents and
/// attached files, named by their document id).
///
/// An item's `overview` gives the title, URLs, tags; its `details` the login fields (the ones
/// designated username and password), `notesPlain`, `sections` of fields (each value an object
/// naming its kind: `string`, `concealed`, `totp`, `email`, `url`, `date`, `file`…), the
/// `passwordHistory`, and for a document its file. Folders: the vault's name when the export holds
/// more than one vault (with the account's name first when it holds more than one account).
enum OnePUXReader {
    /// What each item starts from.
    static let emptyItem = ForeignItem()

    /// The loss of an item's section titles, counted by item (`statedInText`: it says what is kept).
    static let sectionTitles = "1Password's section titles (the fields under them are kept; a title only where it tells apart "
        + "fields of one name, in their labels in the field 'labels')"

    /// The bytes of `export.data` inflated into the stream's window at a time: 64 KiB (256 KiB
    /// were a tenth of the import's peak above start-up at 100,000 items, for no time gained).
    static let windowLength = 1 << 16

    /// The name of the 1Password category `uuid`, for the `category` of items that are not
    /// logins, passwords or notes (nil for those and any other uuid). A uuid is three ASCII
    /// digits: compared as a number (only those bytes are equal to one as a `String`).
    static func categoryName(_ uuid: String) -> String? {
        var uuid = uuid
        let code: Int? = uuid.withUTF8 { bytes in
            guard bytes.count == 3 else { return nil }
            var code = 0
            for byte in bytes {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                code = code * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return code
        }
        switch code {
        case 2?: return "credit card"
        case 4?: return "identity"
        case 6?: return "document"
        case 100?: return "software license"
        case 101?: return "bank account"
        case 102?: return "database"
        case 103?: return "driver license"
        case 104?: return "outdoor license"
        case 105?: return "membership"
        case 106?: return "passport"
        case 107?: return "reward program"
        case 108?: return "social security number"
        case 109?: return "wireless router"
        case 110?: return "server"
        case 111?: return "email account"
        case 112?: return "api credential"
        case 113?: return "medical record"
        case 114?: return "ssh key"
        case 115?: return "crypto wallet"
        default: return nil
        }
    }

    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    /// With a `sink`, each item is handed to it as read (`streamed`); anything the stream cannot
    /// read, or an item whose folders would change after it was handed over (a second vault or
    /// account after it), declines the sink, and the import is read again without one.
    static func read(_ bytes: [UInt8], now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        if let sink { return read(ZipBytes(bytes), each: sink) }
        return try read(bytes, chunk: windowLength)
    }

    /// The items of the export in `windows`' file, each handed to `sink` as read, the archive
    /// read a part at a time (`ZipBytes`: its end, its central directory, its local headers,
    /// `export.data`'s compressed bytes 64 KiB at a time), never whole; anything the stream does
    /// not take declines the sink, and the caller reads the file whole.
    static func read(_ windows: ImportWindows, each sink: ForeignItemSink) -> ForeignImport {
        read(ZipBytes(windows), each: sink)
    }

    /// `read(_:now:each:)` with a sink, of the archive `source`.
    private static func read(_ source: ZipBytes, each sink: ForeignItemSink) -> ForeignImport {
        guard let result = try? read(source, chunk: windowLength, each: sink) else {
            sink.decline()
            return ForeignImport(format: "1pux")
        }
        return result
    }

    /// `read(_:now:)` with `export.data` inflated and read `chunk` bytes at a time; nil reads it
    /// only whole (the plain reference, whose errors every declined stream ends in).
    /// With a `sink` (and a `chunk`), only the stream is tried: it throws where the plain read would
    /// be needed, and its caller declines the sink.
    static func read(_ bytes: [UInt8], chunk: Int?, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        try read(ZipBytes(bytes), chunk: chunk, each: sink)
    }

    /// `read(_:chunk:each:)` of the archive `source`, in memory or read from a file.
    private static func read(_ source: ZipBytes, chunk: Int?, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        let archive = try ZipArchive(source, what: "the 1pux file")
        guard let data = archive.entry(named: "export.data") else {
            throw .malformedInput("the 1pux file holds no export.data: not a 1Password export (an older 1Password writes .1pif or CSV)")
        }
        // Everything inflated or copied counts against one budget (ExpansionBudget): export.data
        // once, each file once for every item that names it.
        var budget = ExpansionBudget(inputBytes: source.count, what: "the 1pux file")
        try budget.spend(data.size, on: data.name)
        // Read as it is inflated, one item at a time (`streamed`); a document that way declines
        // (damaged, not strict JSON, not of the usual shape) is read whole below, whose errors
        // say what is wrong and where.
        if let chunk, let sink { return try streamed(data, archive: archive, budget: budget, chunk: chunk, each: sink) }
        if let chunk, let result = try? streamed(data, archive: archive, budget: budget, chunk: chunk) { return result }
        // The inflated export.data holds every secret of the export in one buffer: wiped once read
        // (the tape that shares it is gone by then, so the wipe is in place).
        var plaintext = try archive.contents(of: data)
        do {
            let result = try items(plaintext, archive: archive, budget: budget)
            wipe(&plaintext)
            return result
        } catch {
            wipe(&plaintext)
            throw error
        }
    }

    /// The items of `export.data` (`plaintext`) and the files of `archive`.
    private static func items(_ plaintext: [UInt8], archive: ZipArchive, budget: ExpansionBudget) throws(VaultError) -> ForeignImport {
        let tape = try JSONTape(plaintext, what: "a 1Password export.data")
        guard tape.kind(tape.root) == .object, let accountsNode = tape.member(tape.root, "accounts") else {
            throw .malformedInput("not a 1Password export.data: no \"accounts\" at the top level")
        }
        var result = ForeignImport(format: "1pux")
        let accounts = tape.elements(accountsNode)
        let vaultCount = accounts.reduce(0) { $0 + tape.elements(tape.member($1, "vaults")).count }
        var reader = Reader(archive: archive, budget: budget)
        do throws(VaultError) {
            for account in accounts {
                let attrs = tape.member(account, "attrs")
                let accountName = tape.string(tape.member(attrs, "accountName")) ?? tape.string(tape.member(attrs, "name")) ?? ""
                for vault in tape.elements(tape.member(account, "vaults")) {
                    var folders: [String] = []
                    if accounts.count > 1 && !accountName.isEmpty { folders.append(accountName) }
                    if vaultCount > 1, let name = tape.string(tape.member(tape.member(vault, "attrs"), "name")), !name.isEmpty { folders.append(name) }
                    for item in tape.elements(tape.member(vault, "items")) {
                        // Older exports wrap each item: { "item": {…} }.
                        let node = tape.member(item, "item") ?? item
                        guard tape.kind(node) == .object else { throw VaultError.malformedInput("not a 1Password export.data: an item that is not an object") }
                        // What the user deleted stays deleted (docs/INTERCHANGE.md: one rule for every source's trash).
                        // A copy of an empty item, filled in place (`ForeignItem.init` built each in a temporary).
                        var item = OnePUXReader.emptyItem
                        guard try reader.item(node, in: tape, folders: folders, into: &item, result: &result) else {
                            result.notKeep("1Password items in the trash (not imported)", reason: .deletedInSource)
                            continue
                        }
                        result.items.append(item)
                    }
                }
            }
            resolveReferences(&result, ids: reader.ids)
            reader.warnOddDates(&result)
            reader.warnOddTimes(&result)
        } catch {
            // The files shared by the items are wiped once, in place, with the items.
            reader.dropInflated()
            result.wipe()
            throw error
        }
        return result
    }

    /// The items of `export.data` read as it is inflated (`ZipEntryReader`, `JSONStream`): a tape
    /// of one item at a time, never the whole document or its tape. Folders are given once the
    /// walk has counted the accounts and vaults. Throws (having wiped what it read) for anything
    /// the whole-document reader must judge.
    ///
    /// With a `sink`, each item goes to it as read, its folders given from the accounts and vaults
    /// read so far; a second account or vault, or an account's or vault's name read, after an item
    /// whose folders that changes was handed over, declines the sink. Each file is then inflated
    /// for every item that names it (the sink wipes an item's copy once written), never shared.
    private static func streamed(_ data: ZipArchive.Entry, archive: ZipArchive, budget: ExpansionBudget, chunk: Int,
                                 each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        let entry = try ZipEntryReader(data, of: archive)
        var stream = JSONStream(chunk: chunk, what: "a 1Password export.data") { (window, room) throws(VaultError) -> Bool in
            try entry.read(into: &window, room: room)
        }
        var result = ForeignImport(format: "1pux")
        var reader = Reader(archive: archive, budget: budget, sharesFiles: sink == nil)
        var accountNames: [String] = [], vaultNames: [String] = []
        /// Each item's account and vault, by the index of the item.
        var homes: [(account: Int, vault: Int)] = []
        /// With a sink: whether an item was handed over, in any account, in this account, in this vault.
        var handed = false, handedInAccount = false, handedInVault = false
        do throws(VaultError) {
            var sawAccounts = false
            try stream.document { (stream) throws(VaultError) in
                guard try stream.peek() == UInt8(ascii: "{") else { throw JSONStream.declined() }
                try stream.object(["accounts"]) { (stream, key) throws(VaultError) in
                    guard key == 0 else { try stream.skip(); return }
                    sawAccounts = true
                    guard try stream.peek() == UInt8(ascii: "[") else { try stream.skip(); return }
                    try stream.array { (stream) throws(VaultError) in
                        let account = accountNames.count
                        accountNames.append("")
                        // The second account: the items handed over had no account's folder.
                        if accountNames.count == 2 && handed { sink?.decline() }
                        handedInAccount = false
                        guard try stream.peek() == UInt8(ascii: "{") else { try stream.skip(); return }
                        try stream.object(["attrs", "vaults"]) { (stream, key) throws(VaultError) in
                            if key == 0 {
                                if handedInAccount { sink?.decline() }  // its items were handed over without its name
                                let attrs = try stream.tape()
                                accountNames[account] = attrs.string(attrs.member(attrs.root, "accountName")) ?? attrs.string(attrs.member(attrs.root, "name")) ?? ""
                                return
                            }
                            guard key == 1, try stream.peek() == UInt8(ascii: "[") else { try stream.skip(); return }
                            try stream.array { (stream) throws(VaultError) in
                                let vault = vaultNames.count
                                vaultNames.append("")
                                if vaultNames.count == 2 && handed { sink?.decline() }
                                handedInVault = false
                                guard try stream.peek() == UInt8(ascii: "{") else { try stream.skip(); return }
                                try stream.object(["attrs", "items"]) { (stream, key) throws(VaultError) in
                                    if key == 0 {
                                        if handedInVault { sink?.decline() }
                                        let attrs = try stream.tape()
                                        vaultNames[vault] = attrs.string(attrs.member(attrs.root, "name")) ?? ""
                                        return
                                    }
                                    guard key == 1, try stream.peek() == UInt8(ascii: "[") else { try stream.skip(); return }
                                    try stream.array { (stream) throws(VaultError) in
                                        if let sink, sink.declined { throw JSONStream.declined() }  // read again without it
                                        // The item's tape, gone before the window is refilled in place.
                                        let tape = try stream.tape()
                                        // Older exports wrap each item: { "item": {…} }.
                                        let node = tape.member(tape.root, "item") ?? tape.root
                                        guard tape.kind(node) == .object else { throw JSONStream.declined() }
                                        // One binding of the item, filled and changed in place: the sink wipes its secrets, not a copy's.
                                        var item = OnePUXReader.emptyItem
                                        guard try reader.item(node, in: tape, folders: sink == nil ? [] : folders(account, vault, accountNames, vaultNames),
                                                              into: &item, result: &result) else {
                                            result.notKeep("1Password items in the trash (not imported)", reason: .deletedInSource)
                                            return
                                        }
                                        if let sink {
                                            // A reference may name an item still to come: read whole (`resolveReferences`).
                                            if reader.lastHasReference {
                                                sink.decline()
                                                item.wipeSecrets()  // its own copies: files are not shared with a sink
                                                throw JSONStream.declined()
                                            }
                                            (handed, handedInAccount, handedInVault) = (true, true, true)
                                            result.add(&item, to: sink)
                                            return
                                        }
                                        result.items.append(item)
                                        homes.append((account, vault))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            guard sawAccounts else { throw JSONStream.declined() }
        } catch {
            reader.dropInflated()
            result.wipe()
            stream.wipeWindow()
            throw error
        }
        stream.wipeWindow()
        for index in result.items.indices {
            result.items[index].folders = folders(homes[index].account, homes[index].vault, accountNames, vaultNames)
        }
        if sink == nil { resolveReferences(&result, ids: reader.ids) }
        reader.warnOddDates(&result)
        reader.warnOddTimes(&result)
        return result
    }

    /// The folders of an item of `account` and `vault`, as `items` gives them: the account's name
    /// when the export holds more than one account, the vault's when it holds more than one vault.
    private static func folders(_ account: Int, _ vault: Int, _ accountNames: [String], _ vaultNames: [String]) -> [String] {
        var folders: [String] = []
        if accountNames.count > 1 && !accountNames[account].isEmpty { folders.append(accountNames[account]) }
        if vaultNames.count > 1 && !vaultNames[vault].isEmpty { folders.append(vaultNames[vault]) }
        return folders
    }
}
