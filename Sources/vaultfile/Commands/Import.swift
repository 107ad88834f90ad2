import ArgumentParser
import SecureMemory
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import CPlatform
import Glibc
#endif

extension InterchangeFormat: ExpressibleByArgument {}

extension VaultfileCommand {
    /// Brings entries in from vaultfile's own formats and other password managers' exports; all or nothing.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import entries from json, dotenv, csv or another password manager's export; all or nothing.",
            discussion: """
                Reads FILE (or stdin, or a store folder) in the format --format names, checks all of it, then \
                stores every entry in one change, or none:
                vaultfile's own:
                  json            vaultfile's 'export --format json': values, fields, times
                  dotenv          KEY=value lines; each KEY is an entry name as it is
                  csv             a header line: name, value, then one column per field
                KeePass:
                  kdbx            a KeePass database (KDBX 3.1 or 4), opened with
                                  --kdbx-password-file (or a prompt) and/or --kdbx-keyfile;
                                  decrypted in memory only
                  keepass-xml     KeePass 2 XML (KeePass, 'keepassxc-cli export --format xml')
                  keepassxc-csv   'keepassxc-cli export --format csv'; name: group/title
                Other password managers' exports:
                  bitwarden-json  Bitwarden's unencrypted JSON export; name: folder/item
                  bitwarden-csv   Bitwarden's CSV export
                  1password-csv   1Password 8's CSV export
                  1pux            1Password's 1PUX export (a ZIP)
                  lastpass-csv    LastPass's CSV export; its grouping as folders
                  dashlane-csv    Dashlane's CSV files: credentials (with or without its
                                  header), secure notes, payments, IDs, personal info
                  enpass-json     Enpass's JSON export
                  chrome-csv      Chrome's (Edge's, Brave's) passwords CSV
                  firefox-csv     Firefox's logins CSV
                Encrypted sources, decrypted in memory:
                  pass            a pass/gopass store folder (default $PASSWORD_STORE_DIR,
                                  else ~/.password-store), each .gpg file decrypted by your gpg
                  passage         a passage store folder (default $PASSAGE_DIR, else
                                  ~/.passage/store), each .age file decrypted by age with
                                  $PASSAGE_IDENTITIES_FILE (default ~/.passage/identities)
                  ansible-vault   an ansible-vault file, or a YAML file's !vault values; its
                                  passwords from --source-password-file/-fd/-command (each
                                  repeatable, every one tried on every value) or a prompt
                  sops            a sops YAML or JSON file encrypted to an age key
                                  (SOPS_AGE_KEY_FILE)
                  auto            told from the content (the default): a format is chosen
                                  only when the content is unambiguous
                Details and samples of each: docs/INTERCHANGE.md. A file given with the wrong --format is \
                refused with what it looks like and the command that imports it.

                Clashes: when a name in the file is already an entry of the vault, nothing is imported and \
                the command lists those names (exit 2); with --overwrite each such entry is replaced whole \
                (value and fields), and the others are added; with --skip-existing only names not yet in the \
                vault are added. A name that is an existing entry's name in another Unicode form is refused \
                (exit 2) whatever the options.

                Names are stored in Unicode NFC. Titles from other password managers are cleaned ('/' in a \
                title becomes '-'; a URL as a title becomes its site, the title kept in the field 'title'), and \
                a title that repeats within its folder is numbered ('db01 (2)'). Each name stored differently \
                from the file is printed on stderr, each thing the file holds that no entry keeps is named in \
                a warning with its count, and --json lists both (docs/JSON.md). --dry-run shows all of it and \
                changes nothing.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: Table.format.long,
                help: ArgumentHelp("The input's format (see above); auto, the default, tells it from the content.", valueName: "format"))
        var format: ImportFormatChoice = .auto
        @Argument(help: "The file or store folder to import (default: stdin).", completion: .file()) var file: String?
        @Flag(name: Table.overwrite.long, help: "Replace entries whose names exist already (without it, such a clash imports nothing).") var overwrite = false
        @Flag(name: Table.skipExisting.long, help: "Add only names not yet in the vault; leave existing entries as they are.") var skipExisting = false
        @Option(name: Table.prefix.long,
                help: ArgumentHelp("Place every imported entry under this folder (unlike export/exec --prefix, which select).", valueName: "folder"))
        var prefix: String?
        @Flag(name: Table.dryRun.long, help: "Print what would be imported, replaced, skipped, renamed and lost; change nothing.") var dryRun = false
        @Flag(name: Table.json.long, help: "Print a summary as JSON on stdout, renamed entries and warnings included (docs/JSON.md).") var json = false
        @OptionGroup var formatCharacters: FormatCharacterOption
        @OptionGroup(title: "The imported file's own password (ansible-vault)") var sourcePassword: SourcePasswordOptions
        @OptionGroup(title: "The KeePass database's password and key file (kdbx)") var kdbxSource: KDBXSourceOptions

        func validate() throws {
            if sourcePassword.isGiven, ![.format(.ansibleVault), .auto].contains(format) {
                throw CLIError.invalidArgument("--source-password-file, --source-password-fd and --source-password-command go with --format ansible-vault")
            }
            if kdbxSource.isGiven, ![.format(.kdbx), .auto].contains(format) {
                throw ValidationError("--kdbx-password-file, --kdbx-keyfile and --kdbx-no-password go with --format kdbx")
            }
            if overwrite && skipExisting {
                throw ValidationError("--overwrite and --skip-existing contradict each other (replace existing entries, or leave them); give one")
            }
            do { _ = try prefixFolders() } catch let error as CLIError { throw ValidationError(error.description) }
        }

        /// `--prefix` as folders: a valid name once its trailing '/' is dropped, which the import's
        /// cleaning of names keeps as it is. The user's own argument is refused, never changed:
        /// a format character (a bidi control, a zero-width space), which every new name refuses
        /// and an import leaves out of the names it makes, and a space at either end of a folder,
        /// which it trims (recheck60 R2: `--prefix ' /'` or `$'\u200B'/` placed the entries at the
        /// top level, and `--overwrite` replaced entries there). Nor one so long that a title has
        /// no room after it (`ForeignBuildOptions.maxPrefixBytes`).
        func prefixFolders() throws -> [String] {
            guard var folder = prefix else { return [] }
            while folder.hasSuffix("/") { folder.removeLast() }
            let shown = "--prefix '\(EntryName.escapingFormatCharacters(prefix ?? ""))'"
            guard EntryName.isValid(folder) else {
                do { _ = try EntryName.validate(folder) } catch { throw CLIError.invalidArgument("\(shown): \(error.description)") }
                throw CLIError.invalidArgument("--prefix needs a folder name")
            }
            // The rule of every new name (`validateNew`): no format character, said with its code point.
            do { _ = try EntryName.validateNew(folder) } catch {
                throw CLIError.invalidArgument("\(shown): \(error.description); an import leaves them out of every name it makes "
                    + "(--allow-format-characters does not apply to --prefix)")
            }
            // Every name an import makes is put in Unicode NFC: a prefix typed otherwise (decomposed,
            // NFD) would be changed in every entry, each said as a renaming (recheck62 N4).
            if let composed = EntryName.normalizedIfDifferent(folder) {
                throw CLIError.invalidArgument("\(shown) is not in Unicode NFC (it holds decomposed characters), the form an import gives every name it makes; "
                    + "type it composed: --prefix '\(composed)/'")
            }
            let folders = folder.split(separator: "/").map(String.init)
            if let blank = folders.first(where: { $0.hasPrefix(" ") || $0.hasSuffix(" ") }) {
                let why = blank.allSatisfy { $0 == " " } ? "is only spaces" : "begins or ends with a space"
                throw CLIError.invalidArgument("\(shown): its folder '\(blank)' \(why), which an import trims from every name it makes; "
                    + "give the folder without them")
            }
            // A prefix that leaves no room for the names under it is the prefix's fault, said
            // before the file is read (cold62 L1: it was refused as the file's entry 2).
            let length = EntryName.normalized(folder).utf8.count
            if length > ForeignBuildOptions.maxPrefixBytes {
                throw CLIError.invalidArgument("--prefix is \(length) bytes, which leaves too little room for the names under it; "
                    + "give at most \(ForeignBuildOptions.maxPrefixBytes) bytes")
            }
            return folders
        }

        func run() throws {
            let options = ForeignBuildOptions(keepsHistory: true, prefix: try prefixFolders())
            // A first import before `init` is told so, with init's hint, before the source is read: not
            // after a KeePass password, gpg's prompts or a store's decryption (cold63 F3).
            var status = stat()
            if stat(unlock.location.path, &status) != 0, errno == ENOENT { throw VaultError.vaultMissing(path: unlock.location.path) }
            // Ctrl-C at a prompt (the identities' passphrase, the vault's password) is said as at any other time of an import.
            Terminal.sayWhenInterrupted("nothing was imported")
            // Past 512 KiB of records, an import writes them as encrypted runs beside the vault (`ImportRuns`), merged
            // by the seal (issue 44's memory rule). A dry run seals nothing and lists every name: it keeps them in memory.
            let runs = dryRun ? nil : ImportRuns(directory: Self.directory(of: unlock.location.path))
            let (imported, formatName) = try ImportRuns.$current.withValue(runs) { try load(options: options) }
            // The read's windows, blocks and sorted orders are freed, but glibc keeps the heap's free
            // pages until its top is free: given back before the unlock, whose KDF allocates its memory
            // with the read's code resident (issue 44: that moment is a large import's peak; 0.3 MB of
            // a 1pux's, docs/PERFORMANCE.md, "1pux: the fixed part").
            _ = vaultfile_release_free_heap()
            // The earlier versions are arrays (the entries are records, wiped when freed): zeroed
            // on every way out, once the plan and the vault that share them are done.
            defer { imported.wipeHistory() }
            if dryRun {
                let plan = try planned(imported, in: unlock.open().vault, format: formatName)
                try report(plan, imported: imported, format: formatName)
                return
            }
            let plan = try unlock.update { unlocked -> ImportPlan in
                let plan = try planned(imported, in: unlocked.vault, format: formatName)
                try unlocked.vault.put(contentsOf: plan.entries, clashes: plan.clashes, now: currentTimeMilliseconds())
                for (name, versions) in plan.entries.history ?? [] { try unlocked.vault.importHistory(versions, for: name) }
                return plan
            }
            try report(plan, imported: imported, format: formatName)
        }

        /// The folder of the file at `path`: where the runs of a large import go (`RecordRuns`: a
        /// nameless file, encrypted). Beside the vault rather than in $TMPDIR: the seal writes its
        /// new vault there anyway, so that file system has room for the vault's size, where /tmp is
        /// often a tmpfs, which holds its files in memory (what the runs are written to save).
        static func directory(of path: String) -> String {
            // The seal writes the new vault beside the file a symbolic link names: its runs go there too.
            let path = realpath(path, nil).map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            } ?? path
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return slash == path.startIndex ? "/" : String(path[..<slash])
        }

        /// The entries of the input, built with `options`, and the format they were read in.
        private func load(options: ForeignBuildOptions) throws -> (ImportedEntries, String) {
            // pass and passage read their default store when no folder is given (CryptImport).
            let file = self.file ?? CryptImport.defaultStore(for: format.name)
            let source = file ?? "stdin"
            // Typed without a file to see what it does, it would wait for a document on the terminal.
            if file == nil || file == Input.standardInputName, Stream.isTerminal(STDIN_FILENO) {
                throw CLIError.refused("nothing to import: no file was named, and standard input is a terminal",
                                       hint: "name the export or store folder ('vaultfile import FILE'), or pipe it in; 'vaultfile import --help' lists the formats")
            }
            if self.file == nil, let store = file, !DirectoryImportReaders.isDirectory(store) {
                throw CryptImport.missingDefaultStore(store, format: format.name)
            }
            if let file, file != Input.standardInputName, DirectoryImportReaders.isDirectory(file) {
                let name: String
                if format == .auto {
                    guard let found = DirectoryImportReaders.recognize(directory: file) else {
                        throw CLIError.importFormatUnknown(source: file, why: "it is a folder, and no store marker (.gpg-id for pass, .age-recipients for passage) is in it")
                    }
                    name = found
                } else {
                    name = format.name
                }
                try refuseUnusedSourceOptions(format: name, source: file)
                guard let reader = DirectoryImportReaders.reader(for: name) else {
                    throw CLIError.invalidArgument("\(file) is a folder; --format \(name) reads a file (folders are read by the formats of pass and passage stores)")
                }
                var foreign = try reader.read(directory: file, format: name)
                defer { foreign.wipe() }
                return (try foreign.entries(now: currentTimeMilliseconds(), options: options), name)
            }
            // A regular file is read a window at a time when its format allows (the CSVs, enpass-json and dotenv:
            // issue 44's memory rule); only its head is read here, which tells the format as the whole file would.
            var (bytes, windows) = try file.map { try Input.importFile($0, head: FormatSniffer.window) }
                ?? (Input.readAll(STDIN_FILENO, what: "stdin"), nil)
            defer { wipe(&bytes) }
            // KEY=value lines holding ciphertext (sops's dotenv form, Ansible Vault values) are
            // refused under every --format: read as dotenv, the ciphertext became the secrets and
            // sops's metadata entries (cold60 H1); no reader here decrypts them as they are.
            if let encrypted = FormatSniffer.encryptedLines(bytes) { throw encryptedLinesRefusal(encrypted, source: source) }
            let sniffed = try Self.sniff(bytes, windows: windows)
            let chosen: InterchangeFormat
            switch format {
            case .format(let given):
                chosen = given
                // A file the sniffer recognises as another format (a KDBX database, a Chrome CSV
                // given as dashlane-csv, KEY=value lines given as sops) is refused before its
                // reader runs: before a lenient reader imports it wrongly, or a password is asked
                // for nothing (att58 F5); encrypted values in KEY=value lines were refused above.
                // A ZIP whose head names no export.data may still be a 1pux: its reader looks at the whole archive.
                if let sniffed, sniffed.format != given.rawValue,
                   given != .onePUX || sniffed != FormatSniffer.otherZIP {
                    throw mismatch(sniffed, source: source, given: given.rawValue)
                }
                // Nor is a password asked for a file without KeePass 2's signature, which no
                // reading of it could open (status 4, "damaged", is for a database that has it).
                if given == .kdbx, !FormatSniffer.hasKDBXSignature(bytes) {
                    throw CLIError.refused("\(source) is not kdbx input: it does not start with KeePass 2's signature, as every KDBX database does; nothing was imported",
                                           hint: "a KeePass database is the .kdbx file KeePass or KeePassXC saves; 'vaultfile import FILE' (--format auto) "
                                               + "tells an export's format from its content")
                }
            case .directory(let name):
                // A file of a format import reads (a KDBX database given as a pass store) is said
                // as such, with the command that imports it.
                if let sniffed { throw mismatch(sniffed, source: source, given: name) }
                throw CLIError.invalidArgument("--format \(name) reads a store folder; \(source) is not a folder")
            case .auto:
                chosen = try detected(bytes, sniffed: sniffed, source: source)
            }
            try refuseUnusedSourceOptions(format: chosen.rawValue, source: source)
            if let whole = windows, !Interchange.readsWindows(chosen) {
                windows = nil
                wipe(&bytes)
                do { bytes = try whole.readAll() } catch { throw whole.readError ?? error }
            }
            if chosen == .kdbx {  // its password and/or key file, under the vault's KDF caps
                return (try KDBXImport.entries(taking: &bytes, file: file, options: kdbxSource, limits: unlock.limits(), build: options),
                        chosen.rawValue)
            }
            if CryptImport.handles(chosen) {  // ansible-vault, sops: the file's password or the user's age identities
                return (try CryptImport.read(bytes, format: chosen, file: file, sourcePassword: sourcePassword)
                    .entries(now: currentTimeMilliseconds(), options: options), chosen.rawValue)
            }
            // Sniffed before the read: once another manager's export is read into items, the read
            // takes `bytes` (wiped and freed before the entries are built, issue 44's memory rule).
            let sniffedBeforeRead = sniffed
            // Text without NUL bytes may be Latin-1 that iconv converts; binary data never is (cold60 M3).
            let binary = bytes.withUnsafeBufferPointer { $0.prefix(FormatSniffer.window).contains(0) }
            let otherCSVs: [InterchangeFormat] = [.csv, .keepassxcCSV, .bitwardenCSV, .onePasswordCSV, .lastPassCSV, .chromeCSV, .firefoxCSV]
            let rowOfValues = otherCSVs.contains(chosen) && sniffedBeforeRead == nil
                && FormatSniffer.startsWithRowOfValues(bytes)
            let read = Result { () throws(VaultError) -> ImportedEntries in
                if let windows { return try Interchange.read(windows: windows, format: chosen, options: options) }
                return try Interchange.read(taking: &bytes, format: chosen, options: options)
            }
            switch read {
            case .success(let imported): return (imported, chosen.rawValue)
            case .failure(let error):
                if let failed = windows?.readError { throw failed }
                // Said as the parser said it, naming the input, unless the content is recognised as another format.
                guard case .malformedInput(let why) = error else { throw error }
                if let sniffed = sniffedBeforeRead, sniffed.format != chosen.rawValue { throw mismatch(sniffed, source: source, given: chosen.rawValue) }
                let hint = why.contains("is not UTF-8") && binary
                    ? "it holds NUL bytes: binary data, not a text export; 'vaultfile import FILE' (--format auto) tells an export's format from its content"
                    : why.contains("is not UTF-8")
                    ? "convert it to UTF-8 first (WINDOWS-1252 is what most Windows programs write), then import that file and delete both: "
                        + "iconv -f WINDOWS-1252 -t UTF-8 \(shellPath(file ?? "FILE")) > \(shellPath((file ?? "FILE") + ".utf8"))"
                    : rowOfValues ? headerlessHint
                    : FormatSniffer.EncryptedLines.named(in: why).map(encryptedLinesHint)  // past the sniffer's lines (recheck62 N7)
                throw CLIError.importUnreadable(source: source, format: chosen.rawValue, why: why, hint: hint)
            }
        }

        /// Under `--format auto` the input's own options (`--kdbx-*`, `--source-password-*`) are
        /// accepted before the format is known: once it is, those of another format are refused
        /// (exit 64), naming them, rather than silently ignored.
        private func refuseUnusedSourceOptions(format name: String, source: String) throws {
            if kdbxSource.isGiven, name != InterchangeFormat.kdbx.rawValue {
                throw CLIError.invalidArgument("\(kdbxSource.given.joined(separator: " and ")) \(kdbxSource.given.count == 1 ? "goes" : "go") with a KeePass "
                                               + "database (kdbx), but \(source) is \(name) input; nothing was imported")
            }
            if sourcePassword.isGiven, name != InterchangeFormat.ansibleVault.rawValue {
                throw CLIError.invalidArgument("--source-password-file, --source-password-fd and --source-password-command go with an "
                                               + "ansible-vault file, but \(source) is \(name) input; nothing was imported")
            }
        }

        /// What `bytes` look like (`FormatSniffer.sniff`); a ZIP of which only the head was read
        /// (`windows`) told by its central directory, at its end: a 1pux whose export.data lies
        /// past the head is one all the same.
        private static func sniff(_ bytes: [UInt8], windows: ImportWindows?) throws -> SniffedFormat? {
            let sniffed = FormatSniffer.sniff(bytes)
            guard let windows, windows.byteCount > bytes.count,
                  sniffed == FormatSniffer.otherZIP || sniffed == FormatSniffer.dashlaneZIP else { return sniffed }
            do { return FormatSniffer.sniffZIP(tail: try windows.tail(FormatSniffer.zipTail), fileSize: windows.byteCount) ?? sniffed }
            catch { throw windows.readError ?? error }
        }

        /// The format of `bytes` (`--format auto`), when the content tells it (`sniffed`).
        private func detected(_ bytes: [UInt8], sniffed: SniffedFormat?, source: String) throws -> InterchangeFormat {
            guard !bytes.isEmpty else {
                throw CLIError.importFormatUnknown(source: source, why: "it is empty",
                                                   hint: "check the file's path, or the command that wrote it: an export holds at least a header or one item")
            }
            guard let sniffed else {
                // A CSV whose first line is values: perhaps Dashlane's headerless form, which auto
                // does not guess (nothing in the file says it), but the refusal names (cold58 L3).
                guard FormatSniffer.startsWithRowOfValues(bytes) else {
                    throw CLIError.importFormatUnknown(source: source, why: "it matches none of the formats import reads")
                }
                throw CLIError.importFormatUnknown(source: source, why: "it matches none of the formats import reads "
                                                       + "(its first line is no header line any tool writes: a row of values?)",
                                                   hint: headerlessHint)
            }
            guard let name = sniffed.format else {
                // What the file is and what to do with it (convert a KeePass 1 database, decrypt an
                // age file): that advice is the hint ("name it with --format" would not help).
                // A ZIP archive is one for certain (its magic number): said as such (cold60 M3, L7).
                let zip = sniffed == FormatSniffer.otherZIP || sniffed == FormatSniffer.dashlaneZIP
                throw CLIError.importFormatUnknown(source: source, why: "it \(zip ? "is" : "looks like") \(sniffed.description), which import does not read as it is",
                                                   hint: sniffed.advice)
            }
            guard let format = InterchangeFormat(rawValue: name) else {
                throw CLIError.importFormatUnknown(source: source, why: "it looks like \(sniffed.description), which this build does not import")
            }
            return format
        }

        /// The hint for a CSV without a header line any tool writes: Dashlane's older credentials export.
        private var headerlessHint: String {
            "if it is Dashlane's older credentials export (no header line; rows of title, url, login, password, note), "
                + "import it with: vaultfile import --format dashlane-csv" + (file.map { " \(shellPath($0))" } ?? " < FILE")
        }

        /// The refusal of KEY=value lines holding ciphertext (`FormatSniffer.encryptedLines`), with
        /// the command that decrypts them.
        private func encryptedLinesRefusal(_ kind: FormatSniffer.EncryptedLines, source: String) -> CLIError {
            let what = kind == .sops ? "is" : "holds"
            return .refused("\(source) \(what) \(kind.refusal); nothing was imported", hint: encryptedLinesHint(kind))
        }

        /// How to decrypt KEY=value lines holding ciphertext: the hint of their refusal wherever it is found.
        private func encryptedLinesHint(_ kind: FormatSniffer.EncryptedLines) -> String {
            switch kind {
            case .sops:
                return "decrypt it with sops and import the plain lines: sops -d \(file.map(shellPath) ?? "FILE") | vaultfile import --format dotenv "
                    + "(add --input-type dotenv --output-type dotenv to sops -d when the name does not end in .env)"
            case .ansibleVault:
                return "decrypt the values with ansible-vault and import the plain KEY=value lines with --format dotenv"
            }
        }

        /// The error for input that looks like `sniffed` but was given as `given`.
        private func mismatch(_ sniffed: SniffedFormat, source: String, given: String) -> CLIError {
            let hint: String
            if let name = sniffed.format, InterchangeFormat(rawValue: name) != nil || DirectoryImportReaders.reader(for: name) != nil {
                hint = "import it with: vaultfile import --format \(name)" + (file.map { " \(shellPath($0))" } ?? " < FILE")
            } else if let advice = sniffed.advice {
                hint = advice
            } else {
                hint = "this build does not import \(sniffed.format ?? "it") yet; 'vaultfile import --help' lists the formats it reads"
            }
            return .importFormatMismatch(source: source, given: given, looksLike: sniffed.description, hint: hint)
        }
    }
}
