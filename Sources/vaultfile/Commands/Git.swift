import ArgumentParser

extension VaultfileCommand {
    /// `vaultfile git …`: the integration that lets git diff and merge vaults.
    struct Git: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "git",
            abstract: "Git integration: setup, textconv (readable diffs), merge (a three-way merge driver), credential (a credential helper).",
            discussion: """
                Run 'vaultfile git setup' once in a repository. git then calls 'git textconv' for diffs and \
                'git merge' for merges; both need a secret that opens the vault, from the environment \
                (VAULTFILE_IDENTITY_FILE, VAULTFILE_IDENTITY, VAULTFILE_KEYFILE, VAULTFILE_PASSWORD_COMMAND, \
                VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD), the default identities \
                ($XDG_CONFIG_HOME/vaultfile/identity.txt, so git's configuration needs no --identity) or a \
                prompt on the terminal. A branch that \
                removed a keyslot (a new file key) merges with one that edited entries; the result keeps \
                the new key.

                A merge that would take their side's lower KDF settings (a weaker passwd on the branch \
                being merged) stops with exit 1 and leaves the file as it was; set \
                VAULTFILE_MERGE_ALLOW_WEAK=1 to take them. See 'vaultfile git merge --help'.
                """,
            subcommands: [Setup.self, Textconv.self, Merge.self, Credential.self])
    }
}
