import ArgumentParser
import VaultAgent

// MARK: - unlock --ssh

/// The options of `unlock --ssh`: serve the vault's ssh keys on the agent's ssh socket
/// (docs/AGENT.md, "The ssh-agent socket"). Declarations and their checks only; the serving is
/// Commands/Extensions/Unlock+SSH.swift.
struct SSHServeOptions: ParsableArguments {
    @Flag(name: .customLong("ssh"), help: ArgumentHelp(
        "Also serve the vault's ssh keys on the agent's ssh socket, and print SSH_AUTH_SOCK=…; export SSH_AUTH_SOCK; on stdout."))
    var ssh = false

    @Option(name: .customLong("ssh-keys"), help: ArgumentHelp(
        "Serve only the ssh keys whose entry name starts with this prefix (they replace the keys served under it).",
        valueName: "prefix"))
    var prefix: String?

    @Flag(name: .customLong("ssh-confirm"), help: ArgumentHelp(
        "Run the vault's --confirm-command before each signature with these keys."))
    var confirm = false

    @Option(name: .customLong("ssh-lifetime"), help: ArgumentHelp(
        "Stop serving these keys after this long (90s, 15m, 2h, 1d), even while the vault stays unlocked; 0: no lifetime (as ssh-add -t 0).",
        valueName: "duration"))
    var lifetime: String?

    @Flag(name: .customLong("ssh-allow-sha1"), help: ArgumentHelp(
        "Let ssh-rsa keys sign with SHA-1 (ssh-rsa signatures, for old servers); refused otherwise."))
    var allowSHA1 = false

    @Flag(name: .customLong("ssh-allow-forwarding"), help: ArgumentHelp(
        "Let these keys sign on connections forwarded to other hosts (ssh -A); refused otherwise."))
    var allowForwarding = false

    /// The options each served key gets.
    var keyOptions: SSHKeyOptions {
        var options: SSHKeyOptions = []
        if confirm { options.insert(.confirm) }
        if allowSHA1 { options.insert(.allowSHA1) }
        if allowForwarding { options.insert(.allowForwarding) }
        return options
    }

    /// `--ssh-lifetime` in seconds; 0 (served as long as the vault is held) when not given or given as 0.
    var lifetimeSeconds: UInt32 { lifetime.flatMap(AgentTimeout.seconds) ?? 0 }

    func validate() throws {
        if !ssh, prefix != nil || confirm || lifetime != nil || allowSHA1 || allowForwarding {
            throw ValidationError("--ssh-keys, --ssh-confirm, --ssh-lifetime, --ssh-allow-sha1 and --ssh-allow-forwarding go with --ssh")
        }
        if let lifetime {
            // 0 means no lifetime, as `ssh-add -t 0` and `ssh-agent -t 0` read it (and `unlock --timeout 0`).
            guard AgentTimeout.seconds(lifetime) != nil else {
                throw ValidationError("--ssh-lifetime takes a duration such as 90s, 15m, 2h or 1d (at most 365d; 0: no lifetime), not '\(lifetime)'")
            }
        }
    }
}
