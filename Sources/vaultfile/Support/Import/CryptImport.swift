import SecureMemory
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Sources that are encrypted: pass, passage, ansible-vault, sops

/// Reads the four encrypted sources of `import` into a `ForeignImport` (the one builder then
/// makes entries of it): the folders of pass and passage decrypted by the user's own gpg and age,
/// ansible-vault files with their vault password, sops files with the user's age identities.
/// Plaintext only ever lives in memory (pipes from the tools), and is wiped once parsed.
enum CryptImport {
    /// Whether `format` is one of the file formats read here (ansible-vault, sops).
    static func handles(_ format: InterchangeFormat) -> Bool {
        format == .ansibleVault || format == .sops
    }

    /// The store `import --format pass|passage` reads when no folder is given, as pass and passage
    /// find theirs: `$PASSWORD_STORE_DIR` or `~/.password-store`; `$PASSAGE_DIR` or `~/.passage/store`.
    static func defaultStore(for format: String) -> String? {
        switch format {
        case "pass": return environment("PASSWORD_STORE_DIR") ?? home(".password-store")
        case "passage": return environment("PASSAGE_DIR") ?? home(".passage/store")
        default: return nil
        }
    }

    /// The error when no folder was given and the default store (`defaultStore`) is not a folder:
    /// it names the folder looked for, the variable that moves it, and how to name another.
    static func missingDefaultStore(_ store: String, format: String) -> CLIError {
        let variable = format == "passage" ? "PASSAGE_DIR" : "PASSWORD_STORE_DIR"
        let set = environment(variable) != nil ? "$\(variable)" : "the default, $\(variable) being unset"
        return .refused("there is no \(format) store at \(store) (\(set)); nothing was imported",
                        hint: "name the store folder: vaultfile import --format \(format) DIR, or set \(variable) to it")
    }

    /// The items of an ansible-vault or sops file already read (`bytes`), from `file` (nil or `-`: stdin).
    static func read(_ bytes: [UInt8], format: InterchangeFormat, file: String?, sourcePassword: SourcePasswordOptions) throws -> ForeignImport {
        let path = file ?? Input.standardInputName
        let shown = path == Input.standardInputName ? "stdin" : path  // as every import message names it (recheck62 N7)
        switch format {
        case .ansibleVault:
            // A file with no vault value holds nothing a password opens: said before one is asked for,
            // by the parse the reader makes (a file that only mentions the header in a comment or a
            // plain string holds none: cold60 M1), which also refuses a malformed vault first.
            let values = try bytes.withUnsafeBufferPointer({ FormatSniffer.contains("$ANSIBLE_VAULT;", in: $0) })
                ? inCommonForm(format, shown) { () throws(VaultError) in try AnsibleVaultReader.vaultValueCount(bytes, file: shown) } : 0
            guard values > 0 else {
                throw CLIError.importUnreadable(source: shown, format: format.rawValue,
                                                why: "it holds no ansible-vault value (no '$ANSIBLE_VAULT;' header, whole on its first line or after a '!vault' tag)",
                                                hint: hint(for: format))
            }
            let passwords = try sourcePassword.read(for: shown)
            return try inCommonForm(format, shown) { () throws(VaultError) in
                try AnsibleVaultReader.read(bytes, file: shown, name: stem(of: path), passwords: passwords)
            }
        case .sops:
            let document = try inCommonForm(format, shown) { () throws(VaultError) in try SopsReader.parse(bytes, file: shown) }
            let dataKey = try sopsDataKey(document, file: shown)
            return try inCommonForm(format, shown) { () throws(VaultError) in
                try SopsReader.read(document, dataKey: dataKey, file: shown, name: stem(of: path))
            }
        default:
            throw CLIError.invalidArgument("\(format.rawValue) is not an encrypted file format")
        }
    }

    /// `body`, a refusal of its reader (`malformedInput`) said in the form of every other reader's:
    /// "cannot read FILE as FORMAT: …; nothing was imported" and a hint (cold60 L5). The reader's
    /// message names the file first; said once, by the common form.
    private static func inCommonForm<T>(_ format: InterchangeFormat, _ shown: String, _ body: () throws(VaultError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            guard case .malformedInput(var why) = error else { throw error }
            if why.hasPrefix(shown + ": ") || why.hasPrefix(shown + ", ") {
                why.removeFirst(shown.count + 2)
            } else if why.hasPrefix(shown + " ") {
                why = "it" + why.dropFirst(shown.count)
            }
            throw CLIError.importUnreadable(source: shown, format: format.rawValue, why: why, hint: hint(for: format))
        }
    }

    /// The hint of a refusal of an ansible-vault or sops file: what the format's file is.
    private static func hint(for format: InterchangeFormat) -> String {
        let what = format == .sops ? "a sops file is the YAML or JSON file 'sops --encrypt' writes, with its 'sops' metadata"
            : "an ansible-vault file is what 'ansible-vault encrypt' writes, or a YAML file of 'ansible-vault encrypt_string' values"
        return what + "; 'vaultfile import FILE' (--format auto) tells an export's format from its content"
    }

    /// pass and passage stores, as a reader of folders (`DirectoryImportReaders`).
    enum StoreReader: DirectoryImportReader {
        static let formats = ["pass", "passage"]

        /// A `.gpg-id` marks a pass (or gopass) store, `.age-recipients` a passage store.
        static func recognize(directory: String) -> String? {
            if access(directory + "/.gpg-id", F_OK) == 0 { return "pass" }
            if access(directory + "/.age-recipients", F_OK) == 0 { return "passage" }
            return nil
        }

        static func read(directory: String, format: String) throws -> ForeignImport {
            try refuseOtherKind(directory, format: format)
            try refuseNoStore(directory, format: format)
            if format == "passage" {
                let path = try identityFile(variable: "PASSAGE_IDENTITIES_FILE", fallback: home(".passage/identities"), format: "passage")
                // A passphrase-protected file is decrypted once, before any age runs (recheck60 R1);
                // a pipe is read once (only one age could read it).
                let identities = try AgeIdentitiesFile.load(path, naming: "the passage identities")
                return try readStore(root: directory, suffix: ".age", format: "passage", tool: "age",
                                     arguments: ["age", "--decrypt"] + identities.arguments, descriptor3: identities.descriptor3)
            }
            return try readStore(root: directory, suffix: ".gpg", format: "pass", tool: "gpg", arguments: ["gpg", "--decrypt", "--batch", "--quiet"])
        }

        /// A store of the other kind (`.gpg` files given as passage, `.age` as pass) would import
        /// nothing with exit 0: refused, naming the format that reads it, before any tool runs.
        private static func refuseOtherKind(_ root: String, format: String) throws {
            let (suffix, other, otherSuffix, kind) = format == "pass" ? (".gpg", "passage", ".age", "a passage store (.age files)")
                : (".age", "pass", ".gpg", "a pass store (.gpg files)")
            guard try StoreWalk(root: root, suffix: suffix).files.isEmpty,
                  let found = try? StoreWalk(root: root, suffix: otherSuffix), !found.files.isEmpty else { return }
            throw CLIError.importFormatMismatch(source: root, given: format, looksLike: kind,
                                               hint: "import it with: vaultfile import --format \(other) \(shellPath(root))")
        }
    }

    /// A folder with no store marker and no file of the store's kind is no store (`/home`, a
    /// passage store's parent `~/.passage`): importing nothing with exit 0 would hide the wrong
    /// folder. Refused (exit 2); passage's own folder (`identities` beside `store/`) names its store.
    private static func refuseNoStore(_ root: String, format: String) throws {
        let (marker, suffix) = format == "pass" ? (".gpg-id", ".gpg") : (".age-recipients", ".age")
        guard access(root + "/" + marker, F_OK) != 0 else { return }
        let inner = root.hasSuffix("/") ? root + "store" : root + "/store"
        if format == "passage", DirectoryImportReaders.isDirectory(inner), access(root + "/identities", F_OK) == 0 {
            throw CLIError.importFormatMismatch(source: root, given: format,
                                               looksLike: "passage's own folder (its identities and the store folder 'store')",
                                               hint: "import the store inside it: vaultfile import --format passage \(shellPath(inner))")
        }
        guard try StoreWalk(root: root, suffix: suffix).files.isEmpty else { return }
        throw CLIError.importFormatMismatch(source: root, given: format,
                                           looksLike: "a folder with neither a \(marker) file nor any \(suffix) file",
                                           hint: "name the store folder (pass: ~/.password-store, passage: ~/.passage/store), or check the path")
    }

    // MARK: Stores

    private static func readStore(root: String, suffix: String, format: String, tool: String, arguments: [String],
                                  descriptor3: SecureBytes? = nil) throws -> ForeignImport {
        let walk = try StoreWalk(root: root, suffix: suffix)
        // Each file is the tool's stdin, opened and checked to be the one the walk found, rather
        // than a path the tool opens again, following whatever link was swapped in (att58 F3).
        var outputs = try ParallelDecryption.run(walk.files.map { ParallelDecryption.Job(arguments: arguments, file: $0.path, opened: $0) }, tool: tool,
                                                 descriptor3: descriptor3)
        defer { for index in outputs.indices { wipe(&outputs[index]) } }
        var files = zip(walk.files, outputs).map { ForeignStoreFile(path: $0.name, bytes: $1) }
        defer { for index in files.indices { wipe(&files[index].bytes) } }
        return try PassReader.read(files, format: format, skipped: walk.skipped)
    }

    // MARK: sops

    /// The most `sops.age` entries a sops file's data key is looked for in (each is one age run).
    static let maxAgeDataKeys = 64

    /// The data key of `document`: each of its age stanzas (at most `maxAgeDataKeys`) given to
    /// `age --decrypt -i KEYS` until one opens (KEYS: SOPS_AGE_KEY_FILE, else sops' default
    /// `$XDG_CONFIG_HOME/sops/age/keys.txt`; read once first when it is protected or a pipe:
    /// `AgeIdentitiesFile`); age's stderr shown for the last one only.
    private static func sopsDataKey(_ document: SopsReader.Document, file: String) throws -> SecureBytes {
        guard !document.ageDataKeys.isEmpty else {
            let others = document.otherKeyKinds.isEmpty ? "no key" : document.otherKeyKinds.joined(separator: ", ")
            throw CLIError.refused("\(file) is encrypted to \(others) and to no age key; vaultfile imports sops files encrypted to age",
                                   hint: "add an age recipient with 'sops updatekeys' or 'sops -r -i --add-age age1…', or decrypt it with sops and import the result")
        }
        // A sops file has one entry per age recipient, a handful; each is one age run (att62 F6).
        guard document.ageDataKeys.count <= maxAgeDataKeys else {
            throw CLIError.refused("\(file) has \(document.ageDataKeys.count) sops.age entries, and vaultfile tries at most \(maxAgeDataKeys) "
                                   + "(one age run each; a sops file has one per recipient); nothing was imported",
                                   hint: "decrypt it with sops and import the result, or take a copy of the file from where it came from")
        }
        let configHome = environment("XDG_CONFIG_HOME") ?? home(".config")
        let keys = try identityFile(variable: "SOPS_AGE_KEY_FILE", fallback: configHome + "/sops/age/keys.txt", format: "sops")
        // Read once when it is protected (age -p: one passphrase prompt, not one per stanza) or a pipe.
        let identities = try AgeIdentitiesFile.load(keys, naming: "the sops age keys")
        var lastError: CLIError?
        for (index, armored) in document.ageDataKeys.enumerated() {
            do {
                // age's stderr is shown for the last entry only: one "no identity matched" per entry buries the error.
                var output = try ParallelDecryption.run([ParallelDecryption.Job(arguments: ["age", "--decrypt"] + identities.arguments,
                                                                                file: file + " (its sops data key)", input: Array(armored.utf8))],
                                                        tool: "age", limit: 1024, descriptor3: identities.descriptor3,
                                                        relayErrors: index == document.ageDataKeys.count - 1)
                defer { for index in output.indices { wipe(&output[index]) } }
                return SecureBytes(copying: output[0])
            } catch {
                lastError = error
            }
        }
        // age's own message went to stderr; said for the sops file, not as a file to decrypt by hand (att58 F7).
        if case .sourceDecryptionFailed(_, _, _?, _)? = lastError { throw CLIError.sopsDataKeyNotOpened(file: file, keys: keys) }
        throw lastError!
    }

    // MARK: Paths

    /// An age identity file from `variable`, else `fallback`; refused when it does not exist.
    private static func identityFile(variable: String, fallback: String, format: String) throws -> String {
        let path = environment(variable) ?? fallback
        guard access(path, R_OK) == 0 else {
            throw CLIError.refused("--format \(format) decrypts with the age identities in \(path), which cannot be read (\(String(cString: strerror(errno))))",
                                   hint: "set \(variable) to the file that holds your age identities (age-keygen's output)")
        }
        return path
    }

    /// The file's name without its folders and its last extension (`group_vars/all/vault.yml` → `vault`).
    static func stem(of path: String) -> String {
        guard path != Input.standardInputName else { return "stdin" }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = base.lastIndex(of: "."), dot > base.startIndex else { return base }
        return String(base[..<dot])
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func home(_ relative: String) -> String {
        (environment("HOME") ?? "/") + "/" + relative
    }
}
