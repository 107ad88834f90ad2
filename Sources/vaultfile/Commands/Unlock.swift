import ArgumentParser
import SecureMemory
import VaultAgent
import VaultFile
import VaultFormat
import VaultModel

extension VaultfileCommand {
    /// Hands the vault's file key to the agent, so that later commands need no password.
    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock",
            abstract: "Unlock the vault once: hand its file key to the agent, so that other commands need no password.",
            discussion: """
                Opens a keyslot with the usual unlock sources (an identity, a keyfile, a recovery code, a \
                password), unwraps the vault's file key and hands the key \
                (never the password) to the agent, which starts in the background when none runs and exits \
                when it holds no key. Every verb then asks the agent for the key of its vault's header before \
                it asks for a password; writes still happen in the command, under the vault's lock. The agent \
                forgets the key after --timeout of idle time (since it last handed the key out), on \
                'vaultfile lock', on 'vaultfile agent stop' and on SIGTERM, SIGINT or SIGHUP. While it holds \
                a key, any process of yours can ask for it, as with ssh-agent. For a signed vault the slot \
                that opened it also delegates signing to a fresh key the agent keeps until the timeout from now \
                (30 days with 0), so that writes through the agent are signed; the slot's own secret never \
                reaches the agent. A source given on purpose (--password-file, --password-fd, --password-command, \
                their variables, --identity, --keyfile, --recovery) is checked even when the agent holds the \
                key: a wrong one exits 3. Prints nothing unless --verbose.

                With --ssh it also serves the vault's ssh keys (entries stored with set --ssh-key) on the \
                agent's ssh socket, ssh-agent.sock beside its own: it prints each key's fingerprint and comment on \
                stderr and 'SSH_AUTH_SOCK=PATH; export SSH_AUTH_SOCK;' on stdout, for eval "$(vaultfile unlock --ssh)". \
                Locking the vault, or its timeout, stops serving them at once.

                The socket: $VAULTFILE_AGENT_SOCK, else $XDG_RUNTIME_DIR/vaultfile/agent.sock, else \
                /tmp/vaultfile-$UID/agent.sock. See docs/AGENT.md and man vaultfile.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("timeout"), help: ArgumentHelp(
            "Forget the key after this much idle time: 90s, 15m, 2h, 1d; 0 keeps it until 'vaultfile lock'.", valueName: "duration"))
        var timeout: String = "15m"
        @Option(name: .customLong("confirm-command"), help: ArgumentHelp(
            "Run this command with 'sh -c' before each hand-out of the key; exit status 0 allows it.", valueName: "command"))
        var confirmCommand: String?
        @Flag(name: .customLong("verbose"), help: "Say what was unlocked, where, and for how long.") var verbose = false
        @OptionGroup var ssh: SSHServeOptions

        func validate() throws {
            guard AgentTimeout.seconds(timeout) != nil else {
                throw ValidationError("--timeout takes a duration such as 90s, 15m, 2h or 1d (0: until 'vaultfile lock'), not '\(timeout)'")
            }
            if let confirmCommand {
                guard !confirmCommand.isEmpty, confirmCommand.utf8.count <= AgentProtocol.maxCommandLength, !confirmCommand.contains("\0") else {
                    throw ValidationError("--confirm-command takes a command of 1 to \(AgentProtocol.maxCommandLength) bytes")
                }
            }
            if ssh.confirm && confirmCommand == nil {
                throw ValidationError("--ssh-confirm runs the vault's confirm command: give it with --confirm-command")
            }
            if unlock.noAgent || AgentAccess.disabledByEnvironment {
                throw ValidationError("unlock hands the key to the agent, which --no-agent and VAULTFILE_NO_AGENT turn off")
            }
        }

        func run() throws {
            let socket = AgentSocketPath.current
            let sshSocket = ssh.ssh ? try Self.sshSocketPath(socket) : nil
            try socket.prepareDirectory()
            let store = unlock.location.store
            let seconds = AgentTimeout.seconds(timeout)!
            let (header, fileKey, opened) = try key(of: store)
            var handOver = AgentKeyHandOver(vaultID: header.vaultID, fileKey: fileKey, timeoutSeconds: seconds, onlyIfHeld: false,
                                            path: absolutePath(store.path), confirmCommand: confirmCommand ?? "")
            // A signed vault: the slot that opened it delegates signing to a fresh key the agent
            // keeps (never the slot's own secret). A key taken from the agent keeps its delegation.
            if header.isSigned, let opened {
                if let signer = opened.sealSigner(in: header) {
                    handOver.delegation = try AgentDelegations.make(for: header.vaultID, fileKey: fileKey, signer: signer, timeoutSeconds: seconds)
                } else {
                    let rsa: Bool
                    if header.keyslots.indices.contains(opened.index), case .sshRSA = header.keyslots[opened.index] { rsa = true } else { rsa = false }
                    let why = rsa ? "is ssh-rsa, which signs a direct write itself ('--no-agent') but cannot delegate signing to the agent"
                        : "cannot sign"
                    Messages.warning("the slot that opened \(store.path) (\(opened.credential.source)) \(why): it is unlocked for reading, "
                                     + "and writes through the agent will be refused; to unlock for writing, run 'vaultfile lock --vault "
                                     + "\(store.path)', then 'vaultfile unlock --vault \(store.path)' with a slot that signs: its password "
                                     + "(--password-fd 0, --password-file FILE, or typed at the prompt on a terminal without --identity), "
                                     + "a --keyfile, a --recovery code, or an age1… X25519 or ssh-ed25519 identity")
                }
            }
            let client = AgentClient(socket: socket)
            var response: AgentResponse?
            do {
                response = try client.send(.add(handOver))
            } catch {
                // An agent that just forgot its last key closes without an answer on its way out:
                // start the next one (which waits for it to go). Any other failure stands.
                guard case .agentFailed = error else { throw error }
                response = nil
            }
            if response == nil {
                try AgentLauncher.start(socket)
                response = try client.send(.add(handOver))
            }
            switch response {
            case .done?: break
            case .unproven?: throw CLIError.agentHoldsOtherKeys(path: store.path)
            case .denied?: throw CLIError.agentChangeDenied(path: store.path)
            case .failed(let why)?: throw CLIError.agentFailed("the agent did not take the key: \(why)")
            case nil: throw CLIError.agentFailed("the agent at \(socket.path) stopped before it took the key")
            default: throw CLIError.agentFailed("the agent at \(socket.path) answered with something other than 'done'")
            }
            if verbose {
                let duration = seconds == 0 ? "until 'vaultfile lock'" : "for \(AgentTimeout.text(seconds)) of idle time"
                let signing = handOver.delegation.map { "; it signs writes until \(utcText(seconds: Int64(clamping: $0.delegation.expiry)))" } ?? ""
                Messages.info("vaultfile: unlocked \(store.path) (vault \(hex(header.vaultID))) in the agent at \(socket.path), \(duration)\(signing)")
            }
            if let sshSocket { try serveSSHKeys(vaultID: header.vaultID, fileKey: fileKey, socket: socket, sshSocket: sshSocket) }
        }

        /// The file key: from the agent when it holds it already and no source was given on purpose
        /// (then only the timeout and the confirm command change), else unwrapped with the unlock sources (identities, keyfiles,
        /// recovery codes, passwords) from the header alone, with the slot that opened it. A signed
        /// vault the agent holds but can no longer sign for (its delegation expired, or none) is
        /// opened with the unlock sources all the same, so that its slot delegates afresh.
        private func key(of store: VaultStore) throws -> (VaultHeader, SecureBytes, OpenedSlot?) {
            // One header read: the agent is asked for its key (whatever --no-agent's checks, which
            // `validate` made), and the unlock sources are read only when it has none that verifies.
            // A source given on purpose (a password file, descriptor, command or variable, an
            // identity, a keyfile, a recovery code) is checked even then: a wrong one fails (exit 3).
            let checksSources = unlock.source.isExplicit || unlock.keys.isGiven
            let unlocker = Unlocker(lookup: checksSources ? nil : AgentAccess.lookup(vaultPath: store.path),
                                    credentials: unlock.lazyCredentials(UnlockOptions.announce))
            // As a write does: the agent of a signed vault signs writes only when a slot that signs
            // opened it, so such slots come first (on a terminal the password is asked for after a
            // default identity that opened a post-quantum or plugin slot, as 'set' asks it).
            var unlocked = try store.unlockFileKey(with: unlocker, preferringSigner: true)
            if unlocked.opened == nil, unlocked.header.isSigned,
               AgentDelegations.held(unlocked.header.vaultID)?.signsUntil ?? 0 <= AgentDelegations.now() {
                unlocked = try store.unlockFileKey(with: Unlocker(credentials: unlock.lazyCredentials(UnlockOptions.announce)), preferringSigner: true)
            }
            guard unlocked.opened != nil else { return (unlocked.header, unlocked.fileKey, nil) }
            // The warning `UnlockOptions.warnIfWeak` gives every verb that opens the vault (once a day).
            for case .password(let slot) in unlocked.header.keyslots where !slot.kdf.meetsRecommendedMinimum {
                if UnlockOptions.weakKDFWarningIsDue(unlocked.header.vaultID) {
                    Messages.warning("this vault's key derivation (\(slot.kdf)) is below OWASP's minimum; strengthen it with 'vaultfile passwd'")
                }
                break
            }
            return (unlocked.header, unlocked.fileKey, unlocked.opened)
        }
    }
}
