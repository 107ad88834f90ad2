import VaultFile
import VaultFormat

// MARK: - The members of a new vault

extension VaultfileCommand.Init {
    /// Pins the members of the signed vault just created at `path` on this machine, so that its
    /// creator's next command takes it without a first-open note; a state folder that cannot be
    /// used is a warning (the first open pins them then).
    static func pinMembers(_ created: UnlockedVault, path: String) {
        guard let evidence = created.sealEvidence, let state = try? StateFolder.usable(writing: false) else { return }
        do {
            try MemberTrust(state: state).update(created.header.vaultID) { $0.accept(evidence, path: absolutePath(path), recordHeader: true) }
        } catch {
            StateWarning.show(error)
        }
    }
}
