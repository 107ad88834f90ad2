import ArgumentParser
import KDF
import VaultFile
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
                Names are upper-cased and every character outside [A-Z0-9_] becomes _. With --prefix app/ \
                only entries under app/ are used, without the prefix. Two entries that map to one variable \
                are an error. The command's exit status is vaultfile's. Secrets never go into argv.

                An entry is not exported as a variable that makes programs load or run other code (LD_*, \
                PATH, HOME, BASH_ENV, PYTHONPATH, NODE_OPTIONS, GIT_SSH_COMMAND, VAULTFILE_*, …; see man \
                vaultfile) unless --allow-env NAME allows it. The command gets none of vaultfile's password \
                sources (VAULTFILE_PASSWORD*, VAULTFILE_IDENTITY*, VAULTFILE_KEYFILE) and no descriptor \
                vaultfile opened or read its password from; it gets VAULTFILE_EXEC=1 and VAULTFILE_NO_AGENT=1 \
                (no key from the agent either). --allow-nested passes the password sources of the environment \
                and the agent on, for a command that runs vaultfile itself.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("prefix"), help: ArgumentHelp("Only entries under this prefix, which is stripped.", valueName: "prefix"))
        var prefix: String?
        @Option(name: .customLong("only"), help: ArgumentHelp("Only this entry (repeatable).", valueName: "name"), completion: EntryCompletion.names)
        var only: [String] = []
        @Option(name: .customLong("allow-env"), help: ArgumentHelp(
            "Allow an entry to set this variable although it can make programs run other code, e.g. PATH (repeatable).",
            valueName: "name"))
        var allowEnv: [String] = []
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
        }

        func run() throws {
            let vault = try unlock.open().vault
            var names = vault.names(withPrefix: prefix ?? "")
            if !only.isEmpty {
                for name in only where vault.entry(name) == nil { throw VaultError.entryNotFound(name) }
                names = names.filter(only.contains)
            }
            let strip = prefix ?? ""
            let variables = try EnvironmentNames.variables(for: names, strippingPrefix: strip)
            for (variable, name) in variables where Self.isGuarded(variable) && !allowEnv.contains(variable) {
                throw CLIError.refused(
                    "refusing to export the entry '\(name)' as \(variable) without --allow-env \(variable): "
                        + "that variable can make programs load or run other code",
                    hint: "narrow the entries with --prefix or --only, rename the entry, "
                        + "or pass --allow-env \(variable) if the command needs it")
            }
            var environment = Self.currentEnvironment()
            for (variable, name) in variables {
                let value = vault.entry(name)!.value
                guard !value.contains(0), let text = String(validating: value, as: UTF8.self) else {
                    throw CLIError.invalidArgument("'\(name)' holds binary data (a NUL byte or invalid UTF-8), which an environment variable cannot carry")
                }
                environment[variable] = text
            }
            // Marks the child, so a vaultfile inside it that finds no password source says why.
            environment["VAULTFILE_EXEC"] = "1"
            // Nor may it ask the agent: a nested vaultfile would reach entries outside --prefix/--only.
            if !allowNested { environment["VAULTFILE_NO_AGENT"] = "1" }
            let child = try Subprocess.start(command, environment: environment, unlockSources: allowNested ? .passedOn : .withheld)
            throw ExitCode(Subprocess.wait(child.pid))
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
