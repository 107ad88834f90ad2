import VaultAgent

// MARK: - What a member whose slot cannot sign can do

/// The hint for a signed vault opened through a slot with no signing key (post-quantum, plugin).
enum SigningAdvice {
    /// What to do when the opening slot cannot sign, given how many of the vault's slots can: a
    /// member holding one of them writes (directly, or through the agent after 'vaultfile unlock'
    /// with it, by delegation); a post-quantum or plugin slot never can, not even through the agent.
    static func hint(signers: Int) -> String {
        guard signers > 0 else {
            return "none of its slots can sign, so no member can write it; restore a copy from before its last signing slot left"
        }
        let count = signers == 1 ? "1 of its slots can" : "\(signers) of its slots can"
        return "only a slot that signs can write it (\(count): a password, keyfile, recovery code, age1… X25519, ssh-ed25519 "
            + "or ssh-rsa key; 'vaultfile slot list' names them): give such a secret of yours beside the key that opened it (its "
            + "password with --password-file or --password-fd (or at the prompt on a terminal, shown only when no "
            + "other source is given), a --keyfile, a --recovery code, or the identity file of "
            + "such a key), which a write tries first, or 'vaultfile unlock' with it and the agent writes by delegation; or ask a member who holds one "
            + "to make the change or to add you such a slot"
    }

    /// What to do when the agent did not sign a write for `reason`. For a key of a slot that cannot
    /// sign (`noDelegation`), the advice above in the agent's terms: its key is tried before any source given.
    static func throughAgent(path: String, reason: AgentSignRefusal) -> String {
        guard reason == .noDelegation else {
            return "write with --no-agent and a slot's secret, or unlock again with a slot that delegates (password, keyfile, recovery, "
                + "age1… X25519 or ssh-ed25519; not post-quantum, plugin, ssh-rsa or 1.0 password): vaultfile unlock --vault \(path)"
        }
        return "only a slot that signs can write it ('vaultfile slot list' names them): write with --no-agent and such a secret of yours "
            + "(its password with --password-file, --password-fd or at the prompt, a --keyfile, a --recovery code, or your ssh-rsa "
            + "identity, which signs a direct write); or lock the vault, then unlock it with such a slot (a password, keyfile, "
            + "recovery code, age1… X25519 or ssh-ed25519 key), and the agent writes by delegation: "
            + "vaultfile lock --vault \(path) && vaultfile unlock --vault \(path)"
    }
}
