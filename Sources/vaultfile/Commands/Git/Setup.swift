import ArgumentParser
import KDF
import VaultFile
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand.Git {
    /// Configures the current git repository to diff and merge vaults with vaultfile.
    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup",
            abstract: "Configure this git repository to diff and merge vaults with vaultfile (idempotent).")

        @Option(name: .customLong("pattern"), help: ArgumentHelp("Which files are vaults.", valueName: "glob")) var pattern = "*.vault"

        func run() throws {
            let top = try Self.git(["rev-parse", "--show-toplevel"]).strippedWhitespace
            let command = Self.selfCommand()
            var changed = try Self.appendLine("\(pattern) diff=vaultfile merge=vaultfile", to: top + "/.gitattributes")
            changed = try Self.appendLine("\(pattern).lock", to: top + "/.gitignore") || changed
            changed = try Self.setConfig("diff.vaultfile.textconv", "\(command) git textconv") || changed
            // A cached textconv would store entry names in git's notes: never cache.
            changed = try Self.setConfig("diff.vaultfile.cachetextconv", "false") || changed
            changed = try Self.setConfig("merge.vaultfile.name", "vaultfile three-way merge") || changed
            changed = try Self.setConfig("merge.vaultfile.driver", "\(command) git merge %O %A %B") || changed
            guard changed else {
                Messages.info("already configured \(top): '\(pattern)' files diff and merge with vaultfile (\(command)); nothing changed")
                return
            }
            Messages.info("""
                configured \(top): '\(pattern)' files diff and merge with vaultfile (\(command)).
                git runs vaultfile without a terminal for diffs in pagers and for merges; give it the password with
                  export VAULTFILE_PASSWORD_COMMAND='pass show vaultfile'   (or any command that prints it)
                  export VAULTFILE_PASSWORD_FILE=~/.config/vaultfile/password (a 0600 file)
                or VAULTFILE_PASSWORD (least safe). Without one, vaultfile asks on the terminal when there is one.
                A vault shared with your age identity needs none of these: keep it in \(DefaultIdentity.file ?? "~/.config/vaultfile/identity.txt").
                """)
        }

        /// `vaultfile` when that name on PATH is this binary, else this binary's absolute path.
        static func selfCommand() -> String {
            let me = (try? realPath("/proc/self/exe")) ?? "vaultfile"
            for directory in (environment("PATH") ?? "").split(separator: ":") {
                if let found = try? realPath("\(directory)/vaultfile"), found == me { return "vaultfile" }
            }
            return me
        }

        static func realPath(_ path: String) throws -> String {
            guard let resolved = realpath(path, nil) else { throw CLIError.io(operation: "resolving", path: path, errno: errno) }
            defer { free(resolved) }
            return String(cString: resolved)
        }

        /// Appends `line` to `file` unless the file already has it; returns whether it was appended.
        static func appendLine(_ line: String, to file: String) throws -> Bool {
            let existing = (try? Input.readFile(file)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            guard !existing.textLines().contains(where: { String($0).strippedWhitespace == line }) else { return false }
            let separator = existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n"
            try AtomicFileWriter().write(Array((existing + separator + line + "\n").utf8), to: file, mode: 0o644, finalLink: .follow)
            return true
        }

        /// Sets git's `key` to `value` in the repository's config unless it has that value already;
        /// returns whether it was set. (`git config --get` fails when the key is unset.)
        static func setConfig(_ key: String, _ value: String) throws -> Bool {
            if let current = try? git(["config", "--local", "--get", key]), current.dropLast(current.hasSuffix("\n") ? 1 : 0) == value { return false }
            _ = try git(["config", key, value])
            return true
        }

        /// Runs git with `arguments` and returns its standard output.
        static func git(_ arguments: [String]) throws -> String {
            let child: Subprocess.Child
            do {
                child = try Subprocess.start(["git"] + arguments, captureOutput: true)
            } catch {
                throw CLIError.refused(error.description, hint: "install git")
            }
            let output = (try? Input.readAll(child.output!, what: "git's output")) ?? []
            close(child.output!)
            guard Subprocess.wait(child.pid) == 0 else {
                throw CLIError.refused("'git \(arguments.joined(separator: " "))' failed", hint: "run 'vaultfile git setup' inside a git repository")
            }
            return String(decoding: output, as: UTF8.self)
        }
    }
}

extension String {
    /// Without surrounding whitespace and newlines.
    var strippedWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
