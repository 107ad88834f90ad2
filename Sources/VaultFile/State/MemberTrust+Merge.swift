import VaultFormat
import VaultModel

// MARK: - The members in a merge

extension MemberTrust {
    /// For a merge (git's driver, `vaultfile merge`) of OURS and THEIRS (each a vault opened, its
    /// path, and its role in messages), judged by the record of their vault (only read): throws
    /// `untrustedCopy`, naming the side by role and path, for a side this machine does not trust as
    /// its members' (its entries may be anyone's), unless `allowUntrusted`. A side unsigned in a
    /// vault seen signed here stops the merge too, unless its generation is below the first signed
    /// generation recorded (an old branch from before the vault was signed). Ancestry is not
    /// compared: a merge exists to join forks. A record that cannot be read refuses nothing.
    public func refuseUntrustedSides(
        ours: (vault: UnlockedVault, path: String, role: String), theirs: (vault: UnlockedVault, path: String, role: String), allowUntrusted: Bool
    ) throws(VaultError) {
        guard !allowUntrusted, let record = (try? record(of: ours.vault.header.vaultID)) ?? nil else { return }
        for side in [ours, theirs] {
            let header = side.vault.header
            let copy = Copy(evidence: side.vault.sealEvidence, vaultID: header.vaultID, generation: header.generation)
            var judgement = Self.judge(copy, record: record, otherVaultAtPath: nil, comparesGenerations: false)
            if copy.evidence == nil, let firstSigned = record.firstSigned, header.generation < firstSigned { judgement.findings = [] }
            if !judgement.isTrusted { throw .untrustedCopy(path: "\(side.role) at \(side.path)", why: judgement.findings) }
        }
    }
}

extension RollbackCheck {
    /// After a merge run here wrote `result` at `path` (`VaultStore.mergeCopy`): records its seal as
    /// accepted, a copy signed here by the merging member. Its ancestors (both sides, judged trusted
    /// before the merge) are recorded too: the merge joined the forks, so the next open of the result
    /// does not find it diverged from the side this machine had seen.
    func trustMerged(_ result: UnlockedVault, path: String) {
        guard let evidence = result.sealEvidence else { return }
        do {
            try memberTrust.update(result.header.vaultID) { record in
                for ancestor in evidence.record.ancestors where !record.headers.contains(ancestor) { record.headers.append(ancestor) }
                record.accept(evidence, path: seen.absolute(path), recordHeader: true)
            }
        } catch {
            problem = problem ?? error
        }
    }
}
