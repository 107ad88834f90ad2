import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Merges two copies of one vault outside git (two USB sticks): the result replaces OURS, and
    /// THEIRS too with `--both`.
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Merge two copies of a vault that were each changed (outside git); the result replaces OURS (and THEIRS with --both).",
            discussion: """
                For copies that forked, such as two USB sticks each written to: the merge that 'git merge' \
                does, for files outside git. With --base (a copy both came from) the merge is three-way, \
                per entry and per field, as in git. Without it, an entry present in one copy only is kept, \
                and an entry whose value or fields differ is a conflict.

                A conflict leaves OURS a valid vault holding both versions (theirs as NAME.conflict-theirs), \
                lists the entries on stderr and exits 1; settle each with 'vaultfile resolve NAME \
                --ours|--theirs'. OURS is replaced atomically under its lock; with --both THEIRS is replaced \
                too, under its own lock, by the same bytes, so that the two copies converge. The result's \
                generation is one more than OURS's, THEIRS's and the one this machine has seen (a copy whose \
                generation is not plausible is left out), so it is newer than both copies: without --both, \
                put it back in both places. A merge is never refused as a write to an older or diverged copy \
                (exit 7): it exists to repair a fork.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Our copy; receives the result.") var ours: String
        @Argument(help: "Their copy (left as it is).") var theirs: String
        @Option(name: .customLong("base"), help: ArgumentHelp("A copy both came from, for a three-way merge.", valueName: "base"))
        var base: String?
        @Flag(name: .customLong("both"), help: "Write the result to THEIRS as well: both copies end byte-identical.")
        var both = false

        func validate() throws {
            // OURS is named by the first argument; a --vault would be ignored, so it is refused.
            if unlock.location.vault != nil { throw ValidationError("name the copies as arguments: vaultfile merge OURS THEIRS [--base BASE]") }
        }

        func run() throws {
            // In git (or with the check off) only the retired file keys are consulted, to seal under the newest key.
            let rollback = try RollbackSetting.mergeCheck(forVaultAt: ours)
            rollback?.acceptRotation = unlock.acceptRotation
            rollback?.allowUntrusted = unlock.allowUntrusted
            defer { UnlockOptions.report(rollback) }
            let store = VaultStore(path: ours, lockTimeout: unlock.location.lockTimeout)
            // The agent's keys first (it keeps every key of the vault id); the unlock sources only
            // for a copy none of them opens.
            let (conflicts, generation) = try store.mergeCopy(
                theirs: theirs, base: base, with: unlock.mergeUnlocker(agentPath: ours),
                allowLowerKDF: environment("VAULTFILE_MERGE_ALLOW_WEAK") == "1", rollback: rollback, writingBoth: both)
            if both {
                Messages.info("merged \(theirs) into \(ours) (generation \(generation)); both now hold the result")
            } else {
                Messages.info("merged \(theirs) into \(ours) (generation \(generation)); copy \(ours) back wherever the vault is kept, "
                    + "or merge with --both next time")
            }
            guard !conflicts.isEmpty else { return }
            for conflict in conflicts { Messages.info("vaultfile: conflict in '\(conflict.name)': \(conflict.reason)") }
            let copies = both ? "; then copy \(ours) over \(theirs), which holds the conflicts until then" : ""
            Messages.info("vaultfile: hint: settle each with 'vaultfile resolve NAME --ours' or '--theirs' (with --vault \(ours))\(copies)")
            throw ExitCode(.conflicts)
        }
    }
}
