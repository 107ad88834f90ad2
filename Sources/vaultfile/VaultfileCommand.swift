import ArgumentParser
import KDF
import VaultFile

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

            PASSWORD SOURCES (first match wins): --password-file FILE, --password-fd N, \
            --password-command CMD, $VAULTFILE_PASSWORD_FILE, $VAULTFILE_PASSWORD_COMMAND, \
            $VAULTFILE_PASSWORD (least safe), else a prompt on the terminal. One trailing newline \
            is removed from file, descriptor and command sources.

            EXIT STATUS:
              0   success
              1   entry not found
              2   other error (I/O, permission, vault missing, bad input)
              3   wrong password (no keyslot opens)
              4   vault damaged, tampered with, truncated, or not a vault
              5   busy (the vault's lock was not acquired in time)
              6   over a limit (KDF cap, size limit)
              64  usage error

            Shell completions: vaultfile --generate-completion-script bash|zsh|fish. See man vaultfile.
            """,
        version: vaultfileVersion,
        subcommands: [
            Init.self, Set.self, Get.self, List.self, Rm.self, Mv.self, Edit.self, Search.self,
            Generate.self, Exec.self, Inject.self, Import.self, Export.self, Batch.self, Git.self, Resolve.self,
            Info.self, Verify.self, Passwd.self, Calibrate.self, Selftest.self,
        ]
    )

    /// Hardens the process, runs the command, and turns errors into messages and exit statuses.
    static func main() {
        Hardening.apply()
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            // `vaultfile` alone: a few lines on stderr, not the whole help, and a usage status.
            guard !arguments.isEmpty else {
                Messages.info(Usage.short)
                exit(withError: ExitCode(ExitStatus.usage.rawValue))
            }
            if let unknown = Usage.unknownVerb(in: arguments, root: Self.self) { throw unknown }
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            guard let report = ErrorReport(error) else {
                // A help request of a vault verb: its own options first, the vault options after.
                if exitCode(for: error) == .success, let help = HelpLayout.reordered(fullMessage(for: error)) {
                    try? StandardOutput.line(help)
                    exit()
                }
                exit(withError: error)
            }
            Messages.error(report.description, hint: report.hint)
            exit(withError: ExitCode(report.status.rawValue))
        }
    }
}

/// The version `--version` prints.
let vaultfileVersion = "0.1.0"
