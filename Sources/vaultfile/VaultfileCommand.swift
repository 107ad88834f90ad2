import ArgumentParser
import KDF
import VaultModel
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The root command

/// `vaultfile`: an offline, single-file encrypted vault for secrets.
@main
struct VaultfileCommand: ParsableCommand {
    // Every command names itself (`commandName:`): otherwise ArgumentParser derives each name
    // with String(describing:) on the type, whose failed protocol casts scan every conformance
    // record of the binary, about 4 ms of each start-up (docs/PERFORMANCE.md).
    static let configuration = CommandConfiguration(
        commandName: "vaultfile",
        abstract: "An offline, single-file encrypted vault for secrets, made for shells and scripts.",
        discussion: """
            One vault is one file: Argon2id (or PBKDF2) derives the key, XChaCha20-Poly1305 seals \
            the contents. Data goes through stdin and stdout byte for byte; messages go to stderr.

            UNLOCK ONCE: 'vaultfile unlock' hands the vault's file key to an agent \
            ($VAULTFILE_AGENT_SOCK, else $XDG_RUNTIME_DIR/vaultfile/agent.sock, else /tmp/vaultfile-$UID/agent.sock); every verb asks it \
            first, unless --no-agent or VAULTFILE_NO_AGENT=1. 'vaultfile lock' forgets the key.

            PASSWORD SOURCES (first match wins): --password-file FILE, --password-fd N, \
            --password-command CMD, $VAULTFILE_PASSWORD_FILE, $VAULTFILE_PASSWORD_COMMAND, \
            $VAULTFILE_PASSWORD (least safe), else a prompt on the terminal. One trailing newline \
            is removed from file, descriptor and command sources.

            OTHER UNLOCK SOURCES, tried first, in order: --identity FILE (age identity or OpenSSH \
            ed25519 key; repeatable), $VAULTFILE_IDENTITY_FILE, $VAULTFILE_IDENTITY (the key \
            itself), --keyfile FILE, $VAULTFILE_KEYFILE, --recovery (asked) or --recovery-file FILE. \
            A passphrase-protected identity (ssh-keygen -N, age -p) is asked for on the terminal only \
            when the vault has a slot of its kind, or read from --identity-passphrase-file FILE, \
            --identity-passphrase-fd N or $VAULTFILE_IDENTITY_PASSPHRASE_FILE. \
            When one is given, the password is tried only if a password source is given too. \
            'vaultfile slot' adds and removes them; 'vaultfile keygen' makes identities and keyfiles.

            DEFAULT IDENTITIES, after the sources given and before the prompt, when the vault has a slot \
            of their kind: $XDG_CONFIG_HOME/vaultfile/identity.txt (else ~/.config/vaultfile/identity.txt; \
            one identity a line) and the files of $XDG_CONFIG_HOME/vaultfile/identities/. They do not count \
            as a given source: a vault with a password slot still prompts when they open nothing.

            EXIT STATUS:
              0   success
              1   entry (or keyslot) not found
              2   other error (I/O, permission, vault missing, bad input)
              3   wrong password, or no keyslot opens with the sources given, or nothing
                  at hand can sign a write to a signed vault
              4   vault damaged, tampered with, truncated, or not a vault
              5   busy (the vault's lock was not acquired in time)
              6   over a limit (KDF cap, size limit, a regular expression's work budget)
              7   stale copy: a write to a copy older than one seen on this machine
                  (--allow-rollback), diverged from it or at an implausible generation
                  (merge --both), sealed under a file key retired here by passwd,
                  slot rm or rekey (rekey, or merge), or possibly planted by a removed
                  member (--accept-rotation, after 'vaultfile slot list'), or a signed
                  copy not trusted as its members' (also exec, inject: --allow-untrusted,
                  or 'vaultfile trust' to pin it)
              8   audit found a weak, reused, old or breached secret
              64  usage error

            OLDER COPIES: outside git, each unlock is compared with the highest generation of that vault \
            seen on this machine, kept in $VAULTFILE_STATE_DIR (default $XDG_STATE_HOME/vaultfile, else \
            ~/.local/state/vaultfile). Reading an older copy warns; writing to it exits 7 unless \
            --allow-rollback; copies that diverged are combined with 'vaultfile merge --both', which \
            writes the result to both. The state folder must be yours, with no write for group or others, \
            or writes exit 2. Signed vaults: the first open pins the members (keyslots) here; a copy \
            not signed by a member pinned here or added by one, or holding a removed key, is warned \
            about on read and refused on write, exec and inject (exit 7) until 'vaultfile trust'. \
            VAULTFILE_ROLLBACK_CHECK=on|off|auto (default auto: off inside a git work tree). \
            VAULTFILE_QUIET_WEAK_KDF=1 silences the weak-KDF warning, else shown once a day per vault. \
            VAULTFILE_QUIET_WEAK_PASSWORD=1 silences the weak-password warning of init, passwd and slot add \
            password for a password not typed at the prompt. \
            VAULTFILE_PLUGIN_TIMEOUT=SECONDS (default 120) bounds each phase of an age plugin \
            (age1NAME1… recipients, AGE-PLUGIN-NAME-1… identities: age-plugin-NAME from PATH's absolute folders).

            Shell completions: vaultfile --generate-completion-script bash|zsh|fish. See man vaultfile.
            """,
        version: vaultfileVersion,
        subcommands: [
            Init.self, Set.self, Get.self, Totp.self, List.self, Ls.self, Rm.self, Mv.self, Cp.self, Edit.self, History.self, Restore.self, Trash.self, Search.self,
            Generate.self, Exec.self, Inject.self, Read.self, Import.self, Export.self, Share.self, Receive.self, AgeIdentityVerb.self, Batch.self, Merge.self, Git.self, Resolve.self,
            Info.self, Verify.self, Audit.self, Passwd.self, Slot.self, Trust.self, Rekey.self, Keygen.self, SSHKeygen.self, Calibrate.self, Selftest.self,
            Unlock.self, Lock.self, Agent.self, ClipboardClear.self,
        ]
    )

    /// Hardens the process, runs the command, and turns errors into messages and exit statuses.
    static func main() {
        Hardening.apply()
        // Started through a link of another name (age-plugin-vaultfile, …): that program (LinkedNames.swift).
        if let program = CommandLine.arguments.first, let run = LinkedNames.handler(for: program, arguments: CommandLine.arguments.dropFirst()) {
            Glibc.exit(run(Array(CommandLine.arguments.dropFirst())))
        }
        // Plugin keyslots and plugin recipients run age-plugin-NAME through this launcher; textconv,
        // the merge driver and the agent take it away (PluginLauncher.forbid).
        AgePluginSlots.launcher = PluginLauncher()
        do {
            try ArgumentEncoding.check(ArgumentEncoding.rawArguments)
            // `vaultfile --vault X get a` as `vaultfile get --vault X a` (issue 47).
            // Started as a link (git-credential-vaultfile, …): that link's verb (Support/Parsing/LinkedNames.swift).
            let given = LinkedNames.arguments(program: CommandLine.arguments.first ?? "", Array(CommandLine.arguments.dropFirst()))
            let arguments = try Usage.movingVaultAfterVerb(given, root: Self.self)
            // `vaultfile` alone: a few lines on stderr, not the whole help, and a usage status.
            guard !arguments.isEmpty else {
                Messages.info(Usage.short)
                exit(withError: ExitCode(.usage))
            }
            // `--version` alone, answered before ArgumentParser builds the command tree by reflection
            // (a third of the instructions of a start); the same line ArgumentParser prints.
            if arguments == ["--version"] {
                try? StandardOutput.line(vaultfileVersion)
                exit()
            }
            // A plain line of a hot verb (get, set, list, ls, init, rm, verify) is read without
            // ArgumentParser's reflection (QuickArguments.swift).
            if var quick = QuickCommand.parse(arguments) {
                try quick.run()
                return
            }
            if let shell = CompletionAliases.requestedShell(in: arguments) {
                try StandardOutput.line(CompletionAliases.script(for: shell, root: Self.self))
                exit()
            }
            if let unknown = Usage.unknownVerb(in: arguments, root: Self.self) { throw unknown }
            if let empty = Usage.emptyInlineValue(in: arguments) { throw empty }
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            guard let report = ErrorReport(error) else {
                // A help request of a vault verb: its own options first, the vault options after.
                if exitCode(for: error) == .success, let help = HelpLayout.reordered(fullMessage(for: error)) {
                    try? StandardOutput.line(help)
                    exit()
                }
                let code = exitCode(for: error)
                guard code != .success else { exit(withError: error) }
                // ArgumentParser's own errors in vaultfile's style, as every other error: its
                // message (`message(for:)`, without its "Error:" and usage lines) after
                // `vaultfile: error:`, escaped (it quotes argv: "Unknown option '--\u{1B}[2J'"), and a
                // hint naming the help of the verb the arguments reached.
                let message = message(for: error)
                if !message.isEmpty {
                    let lines = message.split(separator: "\n").map { String($0.drop { $0 == " " }) }.filter { !$0.isEmpty }
                    // Through a link (git-credential-vaultfile): the help of the verb it stands for.
                    let line = LinkedNames.arguments(program: CommandLine.arguments.first ?? "", Array(CommandLine.arguments.dropFirst()))
                    Messages.error(lines.joined(separator: " "), hint: Usage.helpHint(for: line, root: Self.self))
                }
                Glibc.exit(code.rawValue)
            }
            Messages.error(report.description, hint: report.hint)
            // Straight to exit(3): ArgumentParser's exit(withError:) builds the help of the whole
            // command tree by reflection (about 3 M instructions) only to return the status.
            Glibc.exit(report.status.rawValue)
        }
    }
}

/// The version `--version` prints.
let vaultfileVersion = "0.4.0"
