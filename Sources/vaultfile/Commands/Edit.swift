import ArgumentParser
import CPlatform
import KDF
import SecureMemory
import VaultModel
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
                neovim get options that disable swap, undo and viminfo files. Afterwards the file, and \
                anything the editor left in the folder, is overwritten and removed; on SIGTERM, SIGHUP or \
                SIGINT too (the exit status is then 128 + the signal), and a folder left by a killed edit is \
                wiped by the next vaultfile run. An unchanged value does not rewrite the vault; an editor \
                that fails leaves the vault as it was.

                The vault is not locked while the editor runs (its file key waits in locked memory): on save \
                it is opened again under its lock and the edit applied with merge's per-field three-way rule \
                against the entry as it was when the editor opened. A part someone else changed differently \
                meanwhile is a conflict: their entry stays, the edited one is stored as NAME.conflict-edit, and \
                the command exits 1. A file key rotated meanwhile (passwd) is unlocked again through the usual \
                sources (exit 3 when none opens it; the edited text is wiped).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name (created when it does not exist).", completion: EntryCompletion.names) var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Edit this named field instead of the value.", valueName: "field"))
        var field: String?
        @Flag(name: .customLong("allow-disk-temp"), help: "Allow a temporary file on a disk-backed file system when no tmpfs is available.")
        var allowDiskTemp = false

        func validate() throws {
            try validateEntryArguments(name: name, field: field)
        }

        func run() throws {
            // Before the password: a missing tmpfs is refused at once.
            let base = try PrivateTemporaryFolder.base(allowDisk: allowDiskTemp)
            // Start-up swept the tmpfs base; a disk base (--allow-disk-temp) is swept here.
            if base != PrivateTemporaryFolder.tmpfsBase() { PrivateTemporaryFolder.sweepLeftovers(in: base) }
            let part = EntryPart(field: field)
            // Opened without the lock, which is taken only to save (Edit+Save.swift): other writers
            // never wait on the editor. Only the file key (guarded memory), the seal signer and the
            // entry are kept from this opening.
            var start = try EditStart(unlock.open(), name: name, part: part)
            defer { start.wipe() }
            let folder = try CleanupOnSignal.makeFolder(in: base)
            defer { CleanupOnSignal.removeFolder() }
            let file = folder.path + "/" + Self.fileName(for: name)
            try CleanupOnSignal.exclusive { try folder.write(start.original, to: file) }
            let status = try CleanupOnSignal.runEditor(Self.editorCommand(file: file))
            guard status == 0 else {
                throw CLIError.refused("the editor exited with status \(status); the vault was not changed", hint: "check $VISUAL / $EDITOR")
            }
            var edited = try CleanupOnSignal.exclusive { try Input.readFile(file) }
            defer { wipe(&edited) }
            guard edited != start.original else { return }
            try save(edited, part: part, start: start)
        }

        /// `sh -c '<editor> "$@"' sh FILE`, so $EDITOR may carry its own arguments; vim gets privacy options.
        /// An editor that is plain words (no shell syntax) is started with `exec`, so that the editor
        /// itself, not a shell around it, is the child a signal is forwarded to (`CleanupOnSignal`).
        static func editorCommand(file: String) -> [String] {
            let editor = environment("VISUAL") ?? environment("EDITOR") ?? "vi"
            let program = editor.split(separator: " ").first.map { $0.split(separator: "/").last.map(String.init) ?? "" } ?? ""
            var options = ""
            if ["vi", "vim", "nvim", "gvim", "view"].contains(program) {
                // -n: no swap file; -i NONE: no viminfo/shada; no undo or backup files.
                options = " -n -i NONE --cmd 'set noundofile nobackup nowritebackup'"
            }
            let plainWords = !editor.contains { "|&;<>()$`\\\"'*?[#~=%\t\n".contains($0) }
            return ["/bin/sh", "-c", (plainWords ? "exec " : "") + editor + options + " \"$@\"", "sh", file]
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
