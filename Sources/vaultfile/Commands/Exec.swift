import ArgumentParser
import KDF
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Runs a command with entries added to its environment.
    struct Exec: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exec",
            abstract: "Run a command with entries in its environment: db/password becomes DB_PASSWORD.",
            discussion: """
                Names are upper-cased and every character outside [A-Z0-9_] becomes _. With --prefix app \
                (or app/) only entries under app/ are used, without the prefix; --only then takes an entry's \
                full name (app/db) or its name below the prefix (db), and refuses one that is ambiguous or \
                outside the prefix. --fields adds each field as \
                NAME_FIELD (app/db with field user → APP_DB_USER); fields are never exported without it. Two \
                entries or fields that map to one variable are an error. An entry whose value is binary (a NUL \
                byte or invalid UTF-8) cannot be a variable: it is left out with a warning, and is an error \
                (exit 2) when --only names it. A --prefix that matches no entry, or an --only name that names \
                none, is refused (exit 1) before the command runs, unless --allow-empty; an empty --prefix (an unset \
                variable's "$X") is refused (exit 64) unless --allow-empty. The command's exit status is vaultfile's; a command that is not \
                found exits 127, one that cannot be run 126, as in shells. Secrets never go into argv.

                An entry is not exported as a variable that makes programs load or run other code (LD_*, \
                PATH, HOME, BASH_ENV, PYTHONPATH, NODE_OPTIONS, GIT_SSH_COMMAND, VAULTFILE_*, …; see man \
                vaultfile) unless --allow-env NAME allows it. The command gets none of vaultfile's password \
                sources (VAULTFILE_PASSWORD*, VAULTFILE_IDENTITY*, VAULTFILE_KEYFILE) and no descriptor \
                vaultfile opened or read its password from; it gets VAULTFILE_EXEC=1 and VAULTFILE_NO_AGENT=1 \
                (no key from the agent either). --allow-nested passes the password sources of the environment \
                and the agent on, for a command that runs vaultfile itself.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("prefix"), help: ArgumentHelp(
            "Only entries under this prefix (whole path segments: prod means prod/), which is stripped.", valueName: "prefix"))
        var prefix: String?
        @Option(name: .customLong("only"), help: ArgumentHelp(
            "Only this entry (repeatable). Under --prefix, in full (prod/db) or below the prefix (db).", valueName: "name"),
                completion: EntryCompletion.names)
        var only: [String] = []
        @Flag(name: .customLong("allow-empty"), help: "Run the command even when --prefix or --only match no entry (none is exported then), or with an empty --prefix (all are).")
        var allowEmpty = false
        @Flag(name: .customLong("fields"), help: "Also export each field, as NAME_FIELD (e.g. DB_USER for field user of db).")
        var fields = false
        @Option(name: .customLong("allow-env"), help: ArgumentHelp(
            "Allow an entry to set this variable although it can make programs run other code, e.g. PATH (repeatable).",
            valueName: "name"))
        var allowEnv: [String] = []
        @Option(name: .customLong("env-file"), help: ArgumentHelp(
            "Set the variables of this file: VAR=vf://NAME#FIELD lines (and plain VAR=text), as op run --env-file (repeatable; a later line wins).",
            valueName: "file"), completion: .file())
        var envFiles: [String] = []
        @Flag(name: .customLong("allow-nested"), help: """
            Pass the password sources of the environment (VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD_COMMAND, \
            VAULTFILE_IDENTITY*, VAULTFILE_KEYFILE, VAULTFILE_PASSWORD) and the agent on to the command, for a command that runs vaultfile.
            """)
        var allowNested = false
        @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.") var command: [String] = []

        /// Whether an entry may set `variable` only with `--allow-env`: the one list, shared with
        /// `import`'s warnings, is `DangerousEnvironmentNames`.
        static func isGuarded(_ variable: String) -> Bool { DangerousEnvironmentNames.contains(variable) }

        func validate() throws {
            guard !command.isEmpty else { throw ValidationError("give the command after --, e.g. vaultfile exec -- ./deploy.sh") }
            // With --env-file, entries are exported only when chosen: --fields alone chooses none.
            if !envFiles.isEmpty && fields && prefix == nil && only.isEmpty {
                throw ValidationError("--fields with --env-file needs --prefix or --only: with --env-file only the entries they choose are exported")
            }
            // `--prefix "$UNSET"` would export every entry: an empty prefix is a mistake unless said.
            if prefix == "" && !allowEmpty {
                throw ValidationError("--prefix is empty, which would export every entry (an unset variable?): "
                                      + "give a prefix, drop --prefix to export all, or add --allow-empty")
            }
        }

        func run() throws {
            try Self.checkCommand(command[0])
            // The files are read before the vault is unlocked: a typo in one costs no unlock.
            let fileLines = try envFiles.map { ($0, try Self.readEnvFile($0)) }
            let vault = try unlock.open(entriesOnly: true, handingValues: true).vault
            let prefix = EnvironmentNames.segmentPrefix(self.prefix ?? "")
            // With --env-file the file names the variables; entries come too only when --prefix or --only chooses them.
            let choosesEntries = envFiles.isEmpty || self.prefix != nil || !only.isEmpty
            let (sources, values) = choosesEntries ? try exportable(vault, prefix: prefix) : ([], [])
            let bindings = try EnvironmentNames.bindings(for: sources, strippingPrefix: prefix)
            let fromFiles = try Self.resolve(fileLines, in: vault, beside: bindings, allowEnv: allowEnv)
            for binding in bindings where Self.isGuarded(binding.variable) && !allowEnv.contains(binding.variable) {
                throw CLIError.refused(
                    "refusing to export the entry '\(binding.reference)' as \(binding.variable) without --allow-env \(binding.variable): "
                        + "that variable can make programs load or run other code",
                    hint: "narrow the entries with --prefix or --only, rename the entry, "
                        + "or pass --allow-env \(binding.variable) if the command needs it")
            }
            var environment = Self.currentEnvironment()
            for (binding, value) in zip(bindings, values) { environment[binding.variable] = value }
            for variable in fromFiles { environment[variable.name] = variable.value }
            // Marks the child, so a vaultfile inside it that finds no password source says why.
            environment["VAULTFILE_EXEC"] = "1"
            // Nor may it ask the agent: a nested vaultfile would reach entries outside --prefix/--only.
            if !allowNested { environment["VAULTFILE_NO_AGENT"] = "1" }
            let child: Subprocess.Child
            // The fatal signals wait from just before the start until they are passed on to the
            // command (`SignalCleanup.forwardSignals`): a supervisor's SIGTERM in between neither
            // ends vaultfile while its command runs on unwatched, nor is lost. The command starts
            // with the mask vaultfile inherited (`Subprocess`), not this one.
            var fatal = SignalCleanup.fatalSet(), before = sigset_t()
            pthread_sigmask(SIG_BLOCK, &fatal, &before)
            defer { pthread_sigmask(SIG_SETMASK, &before, nil) }
            do {
                child = try Subprocess.start(command, environment: environment, unlockSources: allowNested ? .passedOn : .withheld)
            } catch {
                // Found and runnable a moment ago, yet not started: "cannot execute", as shells say with 126.
                var tooLarge = false
                if case .cannotRun(_, E2BIG) = error { tooLarge = true }
                Messages.error(error.description, hint: tooLarge
                    ? "\(bindings.count) variables were exported: choose fewer with --prefix or --only" : nil)
                throw ExitCode(.cannotRun)
            }
            SignalCleanup.forwardSignals(to: child.pid)
            pthread_sigmask(SIG_SETMASK, &before, nil)
            Subprocess.waitUntilExited(child.pid)
            SignalCleanup.stopForwarding()
            let (status, signal) = Subprocess.ending(child.pid)
            // A command a signal ended ends vaultfile with that signal, as `timeout` and `sudo` do:
            // a shell running a loop of `vaultfile exec` then stops at Ctrl-C as it would without it.
            if let signal { SignalCleanup.endBySignal(signal) }
            throw ExitCode(.command(signal.map { 128 + $0 } ?? status))
        }

        /// The values and fields to export, with their text, in name order: entries under `prefix`
        /// (and among --only), their fields with --fields. Binary data cannot be an environment
        /// variable: such a value is an error when --only names its entry, else it and binary fields
        /// are left out with one warning naming them.
        private func exportable(_ vault: Vault, prefix: String) throws -> (sources: [(name: String, field: String?)], values: [String]) {
            var names = vault.names(withPrefix: prefix)
            // A typo in --prefix would run the command with no secrets, and exit 0.
            if names.isEmpty, let given = self.prefix, !allowEmpty { throw CLIError.execMatchesNothing(prefix: given) }
            var chosen: [[UInt8]] = []
            if !only.isEmpty {
                for name in only {
                    do {
                        chosen.append(Array(try Self.onlyName(name, prefix: prefix, in: vault).utf8))
                    } catch VaultError.entryNotFound where allowEmpty {
                        continue  // --allow-empty: a name that names nothing exports nothing
                    }
                }
                names = names.filter { chosen.contains(Array($0.utf8)) }
            }
            var sources: [(name: String, field: String?)] = [], values: [String] = [], skipped: [String] = []
            for name in names {
                guard let entry = vault.entry(name) else { continue }
                let parts = [(String?.none, entry.value)] + (fields ? entry.fields.sorted { $0.key < $1.key }.map { (Optional($0.key), $0.value) } : [])
                for (field, bytes) in parts {
                    let reference = EntryPart(field: field).reference(to: name)
                    guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
                        if field == nil && !chosen.isEmpty {
                            throw CLIError.refused("'\(name)' holds binary data (a NUL byte or invalid UTF-8), which an environment variable cannot carry",
                                                   hint: "read it with 'vaultfile get \(name)' instead, or leave it out of --only")
                        }
                        skipped.append(reference)
                        continue
                    }
                    sources.append((name, field))
                    values.append(text)
                }
            }
            if !skipped.isEmpty {
                let shown = skipped.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (skipped.count > 5 ? ", …" : "")
                Messages.warning("left out \(skipped.count) binary \(skipped.count == 1 ? "value" : "values") (a NUL byte or invalid UTF-8), "
                                 + "which an environment variable cannot carry: \(shown)")
            }
            return (sources, values)
        }

        /// The stored name that `--only name` means. Under `prefix` (segmentPrefix's form, "" for
        /// none) a name may be given in full (`prod/db`) or below the prefix (`db`), as the variables
        /// drop the prefix; a name that means two different entries under the prefix is an error,
        /// and so is a name outside the prefix (it could never be exported). Each is looked up by its exact
        /// bytes, then its NFC form, as every lookup.
        static func onlyName(_ name: String, prefix: String, in vault: Vault) throws -> String {
            let full = vault.existingName(for: name)
            let below = prefix.isEmpty ? nil : vault.existingName(for: prefix + name)
            if let full, let below, Array(full.utf8) != Array(below.utf8), full.utf8.starts(with: prefix.utf8) {
                let fullBelow = String(decoding: full.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
                throw CLIError.invalidArgument("--only '\(name)' is ambiguous under --prefix \(prefix): it names '\(full)' in full "
                    + "and '\(below)' below the prefix; write '\(fullBelow)' for the first, '\(below)' for the second")
            }
            if let below { return below }
            guard let full else { throw VaultError.entryNotFound(name) }
            guard full.utf8.starts(with: prefix.utf8) else {
                throw CLIError.invalidArgument("--only '\(name)' is not under --prefix \(prefix), so it would not be exported")
            }
            return full
        }

        /// Exits 127 (not found) or 126 (not runnable) with a message, as shells do, before the vault is unlocked.
        static func checkCommand(_ command: String) throws {
            switch CommandSearch.find(command) {
            case .found:
                return
            case .notFound:
                Messages.error(command.contains("/") ? "cannot run '\(command)': no such file" : "'\(command)': command not found")
                throw ExitCode(.commandNotFound)
            case .notExecutable(let file):
                Messages.error("cannot run '\(file)': it is not an executable file")
                throw ExitCode(.cannotRun)
            }
        }

        /// This process's environment as a dictionary.
        static func currentEnvironment() -> [String: String] {
            var result: [String: String] = [:]
            var pointer = environ
            while let entry = pointer.pointee {
                let text = String(cString: entry)
                if let equals = text.firstIndex(of: "=") { result[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
                pointer += 1
            }
            return result
        }
    }
}
