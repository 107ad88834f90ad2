import ArgumentParser

extension VaultfileCommand.Git {
    /// git's credential helper: `git-credential-vaultfile [--vault PATH] [--allow-write] OPERATION`,
    /// the binary run through a link of that name, or `vaultfile git credential …`.
    struct Credential: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "credential",
            abstract: "git's credential helper (git-credential-vaultfile): answer get from git/HOST[/PATH] entries.",
            discussion: """
                git config credential.helper vaultfile (git runs the link git-credential-vaultfile), or \
                credential.helper '!vaultfile git credential'. git writes key=value lines on standard input \
                (gitcredentials(7)); 'get' prints username= and password= of the most specific entry: \
                git/USER@HOST/PATH, git/HOST/PATH, … git/HOST (HOST:PORT when the port is not the protocol's \
                default). The value is the password, the field username the user name, the field protocol the \
                one protocol it serves (default https). Nothing matched prints nothing, and git asks its next \
                helper or the user. 'store' and 'erase' change the vault only with --allow-write, and only when \
                it opens without a prompt (the agent, or a source in the environment); without --allow-write \
                they do nothing. Any other operation is ignored (exit 0). Bad input (a line without '=', a NUL \
                byte, a line over 64 KiB) is refused with a message and no answer.
                """)

        @Option(name: Table.vault.long, help: ArgumentHelp(
            "The vault file. Default: $VAULTFILE_PATH, else $XDG_DATA_HOME/vaultfile/default.vault.", valueName: "path"),
                completion: .file())
        var vault: String?
        @Flag(name: Table.allowWrite.long, help: "Let store and erase change the vault (read-only by default).")
        var allowWrite = false
        @Argument(help: ArgumentHelp("get, store or erase (what git asks); any other is ignored.", valueName: "operation"))
        var operation: String

        func run() throws {
            try GitCredentialHelper(vault: vault, allowWrite: allowWrite).run(operation)
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Git.Credential {
    /// The helper's options: named by the declarations above and by its quick reading (git runs it
    /// for every fetch and push that needs a credential: start-up counts).
    enum Table: String, QuickOptionTable {
        case vault, allowWrite = "allow-write"

        var kind: OptionKind { self == .vault ? .option : .flag }

        func read(from arguments: inout QuickArguments, into credential: inout VaultfileCommand.Git.Credential) throws(QuickArguments.Declined) {
            switch self {
            case .vault: credential.vault = arguments.string(self)
            case .allowWrite: credential.allowWrite = arguments.flag(self)
            }
        }
    }

    /// What the helper accepts on its quick path: its options and the operation.
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, positionals: 1)

    /// The helper read from a plain command line (the arguments after `git credential`).
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var credential = Self()
            try arguments.read(Table.self, into: &credential)
            credential.operation = try arguments.positional()
            return credential
        }
    }
}
