import ArgumentParser
import KDF
import SecureMemory
import VaultFile
import VaultModel

extension VaultfileCommand.Git {
    /// git's merge driver: `vaultfile git merge %O %A %B`; the result goes into %A.
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Three-way merge driver for git: vaultfile git merge BASE OURS THEIRS (the result replaces OURS).",
            discussion: """
                Merges per entry and per field. A real conflict leaves OURS a valid vault holding both versions \
                (theirs as NAME.conflict-theirs), lists the entries on stderr and exits 1 so git reports the \
                conflict; settle each with 'vaultfile resolve NAME --ours|--theirs'. Conflict markers are never \
                written into a vault.

                A password or KDF change made on one side only is kept, unless their side lowers the KDF: below \
                OWASP's minimum where ours met it, less Argon2id memory or work, fewer PBKDF2 iterations, or \
                another KDF that does not lift the vault to the minimum. Then the merge stops with exit 1 and \
                OURS is left as it was; VAULTFILE_MERGE_ALLOW_WEAK=1 takes the change.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The common ancestor (%O).") var base: String
        @Argument(help: "Our version (%A); receives the result.") var ours: String
        @Argument(help: "Their version (%B).") var theirs: String

        func run() throws {
            PluginLauncher.forbid("the git merge driver")
            // The agent's keys first (it keeps every key of the vault id, so sides on both sides of a
            // passwd or slot rm open); the unlock sources only for a side none of them opens, read once.
            let conflicts: [VaultMerge.Conflict]
            do {
                // The retired file keys are only read: a merge with the rotated copy is sealed under the newest key.
                let state = try StateFolder.usable(writing: true)
                conflicts = try VaultStore.mergeFiles(base: base, ours: ours, theirs: theirs,
                                                      with: unlock.mergeUnlocker(agentPath: unlock.location.path),
                                                      allowLowerKDF: environment("VAULTFILE_MERGE_ALLOW_WEAK") == "1",
                                                      retiredKeys: state.map(RetiredKeys.init), acceptRotation: unlock.acceptRotation,
                                                      memberTrust: state.map(MemberTrust.init), allowUntrusted: unlock.allowUntrusted,
                                                      refusedSide: { Messages.warning("\($0)") })
            } catch let error as VaultError {
                // A lowered KDF, or a conflict with nowhere to park theirs, is for a person to decide,
                // as a conflict is: exit 1, OURS untouched.
                guard case .mergeRefused(let refusal) = error, Self.isForAPerson(refusal), let report = ErrorReport(error) else { throw error }
                Messages.error(report.description, hint: report.hint)
                throw ExitCode(.conflicts)
            }
            guard !conflicts.isEmpty else { return }
            for conflict in conflicts { Messages.info("vaultfile: conflict in '\(conflict.name)': \(conflict.reason)") }
            Messages.info("vaultfile: hint: settle each with 'vaultfile resolve NAME --ours' or '--theirs', then commit")
            throw ExitCode(.conflicts)
        }

        /// Refusals a person settles as they settle a conflict (git's merge driver exits 1 for them).
        private static func isForAPerson(_ refusal: VaultError.MergeRefusal) -> Bool {
            switch refusal {
            case .lowerKeyDerivation, .conflictNameTaken: return true
            default: return false
            }
        }
    }
}
