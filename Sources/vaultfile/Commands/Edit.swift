import ArgumentParser
import CPlatform
import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Edits an entry's value in $VISUAL / $EDITOR through a private file on tmpfs.
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Edit an entry's value in $VISUAL, $EDITOR or vi, through a private file on tmpfs.",
            discussion: """
                The value goes into a 0600 file in a 0700 folder under $XDG_RUNTIME_DIR or /dev/shm (both \
                memory-backed); with no tmpfs the command refuses unless --allow-disk-temp is given. vim and \
                neovim get options that disable swap, undo and viminfo files. Afterwards the file is \
                overwritten and removed. An unchanged value does not rewrite the vault; an editor that fails \
                leaves the vault as it was. The vault stays locked while the editor runs.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name (created when it does not exist).") var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Edit this named field instead of the value.", valueName: "field"))
        var field: String?
        @Flag(name: .customLong("allow-disk-temp"), help: "Allow a temporary file on a disk-backed file system when no tmpfs is available.")
        var allowDiskTemp = false

        func validate() throws {
            try validateEntryArguments(name: name, field: field)
        }

        func run() throws {
            let folder = try PrivateTemporaryFolder(allowDisk: allowDiskTemp)
            defer { folder.remove() }
            try unlock.update { unlocked in
                let part = EntryPart(field: field)
                var original = (try? unlocked.vault.value(of: name, part: part)) ?? []  // a missing entry or field starts empty
                defer { wipe(&original) }
                let file = folder.path + "/" + Self.fileName(for: name)
                try folder.write(original, to: file)
                defer { folder.shred(file) }
                let status = try Exec.spawn(Self.editorCommand(file: file), environment: Exec.currentEnvironment())
                guard status == 0 else {
                    throw CLIError.refused("the editor exited with status \(status); the vault was not changed", hint: "check $VISUAL / $EDITOR")
                }
                var edited = try Input.readFile(file)
                defer { wipe(&edited) }
                guard edited != original else { return }
                try unlocked.vault.setValue(edited, for: name, part: part)
            }
        }

        /// `sh -c '<editor> "$@"' sh FILE`, so $EDITOR may carry its own arguments; vim gets privacy options.
        static func editorCommand(file: String) -> [String] {
            let editor = environment("VISUAL") ?? environment("EDITOR") ?? "vi"
            let program = editor.split(separator: " ").first.map { $0.split(separator: "/").last.map(String.init) ?? "" } ?? ""
            var options = ""
            if ["vi", "vim", "nvim", "gvim", "view"].contains(program) {
                // -n: no swap file; -i NONE: no viminfo/shada; no undo or backup files.
                options = " -n -i NONE --cmd 'set noundofile nobackup nowritebackup'"
            }
            return ["/bin/sh", "-c", editor + options + " \"$@\"", "sh", file]
        }

        /// A file name that keeps the entry's last component (editors pick syntax from it) and nothing else.
        static func fileName(for name: String) -> String {
            let last = name.split(separator: "/").last.map(String.init) ?? "value"
            let safe = String(last.unicodeScalars.map { scalar -> Character in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar)
                    ? Character(scalar) : "_"
            }).prefix(64)
            return "entry-" + safe
        }
    }
}

// MARK: - A private folder in memory

/// A 0700 folder on tmpfs ($XDG_RUNTIME_DIR, else /dev/shm) for plaintext that must exist as a file for a moment.
struct PrivateTemporaryFolder {
    let path: String

    /// tmpfs's `f_type` (statfs(2)).
    private static let tmpfsMagic = 0x0102_1994

    init(allowDisk: Bool) throws {
        var candidates: [String] = []
        if let runtime = environment("XDG_RUNTIME_DIR") { candidates.append(runtime) }
        candidates.append("/dev/shm")
        var base = candidates.first { Self.isTmpfs($0) }
        if base == nil {
            guard allowDisk else {
                throw CLIError.refused("no tmpfs found ($XDG_RUNTIME_DIR, /dev/shm): the value would be written to a disk",
                                       hint: "pass --allow-disk-temp to accept that risk")
            }
            base = environment("TMPDIR") ?? "/tmp"
        }
        var template = Array((base! + "/vaultfile-edit-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CLIError.io(operation: "creating a private folder in", path: base!, errno: errno)
        }
        path = String(cString: created)
        chmod(path, 0o700)
    }

    static func isTmpfs(_ path: String) -> Bool {
        guard access(path, W_OK) == 0 else { return false }
        return vaultfile_filesystem_type(path) == tmpfsMagic
    }

    /// Writes `bytes` to a new 0600 file.
    func write(_ bytes: [UInt8], to file: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CLIError.io(operation: "creating", path: file, errno: errno) }
        defer { close(fd) }
        guard Stream.write(bytes, to: fd) else { throw CLIError.io(operation: "writing", path: file, errno: errno) }
    }

    /// Overwrites the file with zeros to its current length, then removes it.
    func shred(_ file: String) {
        let fd = open(file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0, info.st_size > 0 {
                _ = Stream.write([UInt8](repeating: 0, count: Int(info.st_size)), to: fd)
                _ = fsync(fd)
            }
            close(fd)
        }
        unlink(file)
    }

    /// Shreds anything an editor left (backup files) and removes the folder.
    func remove() {
        if let handle = opendir(path) {
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { shred(path + "/" + name) }
            }
            closedir(handle)
        }
        rmdir(path)
    }
}
