import ArgumentParser
import KDF
import VaultFile

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
            """)

    @OptionGroup var unlock: UnlockOptions
    @Argument(help: "The common ancestor (%O).") var base: String
    @Argument(help: "Our version (%A); receives the result.") var ours: String
    @Argument(help: "Their version (%B).") var theirs: String

    func run() throws {
        let password = try unlock.password()
        let conflicts = try VaultStore.mergeFiles(base: base, ours: ours, theirs: theirs, password: password, limits: try unlock.limits())
        guard !conflicts.isEmpty else { return }
        for conflict in conflicts { Messages.info("vaultfile: conflict in '\(conflict.name)': \(conflict.reason)") }
        Messages.info("vaultfile: hint: settle each with 'vaultfile resolve NAME --ours' or '--theirs', then commit")
        throw ExitCode(1)
    }
}
}
