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
            + "or ssh-rsa key; 'vaultfile slot list' names them): open it with such a slot of yours (or 'vaultfile unlock' with it, "
            + "and the agent writes by delegation), or ask a member who holds one to make the change or to add you such a slot"
    }
}
