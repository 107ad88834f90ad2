import ArgumentParser

extension VaultfileCommand {
    /// `vaultfile slot …`: who can open the vault.
    struct Slot: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "slot",
            abstract: "List, add, remove and label keyslots: the passwords, age and ssh keys, keyfiles and recovery codes that open the vault.",
            discussion: """
                Each keyslot wraps the vault's file key for one secret. 'slot add' keeps the file key; \
                'slot rm' rotates it and wraps the new key to every remaining slot from its public key, so \
                the removed secret cannot open the new file. Copies of the old file (git history, backups) \
                still open with it.

                The first slot added sets the vault's keyslots flag (format 1.1, or 1.2 with history): \
                vaultfile 0.1.0 then refuses it \
                ("upgrade vaultfile") instead of dropping the new slots. Labels and public keys are \
                encrypted in the header: 'vaultfile info' shows only the number and kinds of slots.
                """,
            subcommands: [SlotList.self, SlotAdd.self, SlotRm.self, SlotLabel.self])
    }
}
