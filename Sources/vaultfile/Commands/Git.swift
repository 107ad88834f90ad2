import ArgumentParser

extension VaultfileCommand {
    /// `vaultfile git …`: the integration that lets git diff and merge vaults.
    struct Git: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "git",
            abstract: "Git integration: setup, textconv (readable diffs), merge (a three-way merge driver).",
            discussion: """
                Run 'vaultfile git setup' once in a repository. git then calls 'git textconv' for diffs and \
                'git merge' for merges; both need the password, from VAULTFILE_PASSWORD_COMMAND, \
                VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD, or a prompt on the terminal.

                A merge that would take their side's lower KDF settings (a weaker passwd on the branch \
                being merged) stops with exit 1 and leaves the file as it was; set \
                VAULTFILE_MERGE_ALLOW_WEAK=1 to take them. See 'vaultfile git merge --help'.
                """,
            subcommands: [Setup.self, Textconv.self, Merge.self])
    }
}
