import ArgumentParser
import SecureMemory
import VaultFile
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// `vaultfile keygen`: an age identity (as age-keygen makes it), or a keyfile.
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen",
            abstract: "Make an age identity (as age-keygen does; --pq: post-quantum), or with --keyfile a 64-byte keyfile.",
            discussion: """
                With -o FILE the identity is written to FILE (mode 0600; an existing file is never \
                replaced; missing folders on its way are made with mode 0700, as init makes them) and its \
                recipient (age1…) alone goes to standard output. An identity kept in \
                $XDG_CONFIG_HOME/vaultfile/identity.txt (~/.config/vaultfile/identity.txt) is tried by \
                every command without --identity. Without -o the identity \
                goes to standard output and 'Public key: age1…' to standard error. The identity works with \
                age itself (age -d -i FILE), and its recipient with 'vaultfile slot add recipient' and age -r.

                --pq makes a post-quantum hybrid identity (ML-KEM-768 + X25519, AGE-SECRET-KEY-PQ-1…) as \
                age-keygen -pq (age 1.3) does; its recipient is age1pq1… (1,959 characters). It works \
                everywhere an identity does (--identity, the default identity file, unlock) and with age 1.3 \
                and later; age 1.1 refuses a whole identity file holding one such line, so keep it in a \
                file of its own when older age reads the others.

                --keyfile FILE writes a keyfile for 'slot add keyfile' and 'init --with-keyfile': 56 random \
                bytes and an 8-byte mark vaultfile recognises (mode 0600, never replacing a file).
                """)

        @Option(name: .customShort("o"), help: ArgumentHelp("Write the identity to this file (0600; refuses to replace one; makes missing folders, 0700).", valueName: "file"))
        var output: String?
        @Option(name: .customLong("keyfile"), help: ArgumentHelp("Write a new keyfile here instead (0600; refuses to replace one).", valueName: "file"))
        var keyfile: String?
        @Flag(name: .customLong("pq"), help: "Make a post-quantum identity (ML-KEM-768 + X25519, AGE-SECRET-KEY-PQ-1…), as age-keygen -pq does.")
        var postQuantum = false

        func validate() throws {
            if output != nil && keyfile != nil { throw ValidationError("give -o (an identity) or --keyfile (a keyfile), not both") }
            if postQuantum && keyfile != nil { throw ValidationError("--pq makes an identity; a keyfile has no kind: give one of --pq and --keyfile") }
        }

        func run() throws {
            if let keyfile {
                var bytes = Keyfile.generate()
                defer { wipe(&bytes) }
                try Self.createPrivately(keyfile, bytes)
                Messages.info("wrote a keyfile to \(keyfile); add it with: vaultfile slot add keyfile \(shellPath(keyfile))")
                return
            }
            let recipient: String, secret: String
            if postQuantum {
                let identity = try AgePQIdentity.generate()
                (recipient, secret) = (identity.recipient.description, identity.encodedSecretKey())
            } else {
                let identity = AgeIdentity.generate()
                (recipient, secret) = (identity.recipient.description, identity.encodedSecretKey())
            }
            var text = Array("# created: \(Self.createdStamp())\n# public key: \(recipient)\n\(secret)\n".utf8)
            defer { wipe(&text) }
            if let output {
                try Self.createPrivately(output, text)
                try StandardOutput.line(recipient)
            } else {
                try StandardOutput.write(text)
                Messages.info("Public key: \(recipient)")
            }
        }

        /// `2026-11-23T19:22:05Z`, as age-keygen writes it.
        static func createdStamp() -> String {
            let stamp = timestamp(milliseconds: currentTimeMilliseconds())
            return String(stamp.prefix(19)) + "Z"
        }

        /// Creates `path` with mode 0600 and writes `bytes`; never replaces an existing file. Missing
        /// folders on its way are made first with mode 0700 (`Init.createFolders`, said on stderr).
        ///
        /// Its folder is walked and held open as `--out`'s is (`OutputFolder`: a secret key is never
        /// put where another user could swap a folder on its way), and the file is written whole
        /// there and hard-linked into place, which never replaces a name.
        static func createPrivately(_ path: String, _ bytes: [UInt8]) throws {
            try Init.createFolders(try Init.missingFolders(for: path, what: path))
            let folder = try OutputFolder(for: path)
            do throws(VaultError) {
                try AtomicFileWriter().write(bytes, in: folder.descriptor, name: folder.name, path: path, mode: 0o600, replacingExisting: false)
            } catch {
                guard case .vaultExists = error else { throw error }
                throw CLIError.refused("\(path) exists already; refusing to replace it", hint: replaceHint(path))
            }
        }

        /// What to do when `path` exists: for the default identity file, where a second identity
        /// goes (the identities/ folder, also tried by every command, or a line appended).
        static func replaceHint(_ path: String) -> String {
            guard let file = DefaultIdentity.file, let folder = DefaultIdentity.folder, sameFile(path, file) else { return "choose another path" }
            return "that is the default identity file; to keep a second identity, append its line to it ('vaultfile keygen >>' and "
                + "its path: one identity a line), or write it to \(folder)/NAME, which every command tries too, as in: "
                + "vaultfile keygen --pq -o \(shellPath(folder + "/pq.txt"))"
        }

        /// Whether two paths name the same existing file (their device and inode).
        private static func sameFile(_ a: String, _ b: String) -> Bool {
            var x = stat(), y = stat()
            return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
        }
    }
}
