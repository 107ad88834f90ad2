#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - The members in the rollback check

/// What the judgement of the members found of the vault a command unlocked (`RollbackCheck.trust`).
struct TrustState {
    /// The copy unlocked, as the judgement sees it (nil before `opened`, or when the record could not be read).
    var copy: MemberTrust.Copy?
    /// The judgement, once made (on the first step that knows the path).
    var judgement: MemberTrust.Judgement?
    /// The vault written over it, once `willWrite` let it through.
    var written: UnlockedVault?
    /// Whether the command turned the judgement into its error (`takeUntrustedRefusal`): no warning then.
    var refusedByCommand = false
    /// The record the judgement read (nil: none yet), so that a read that teaches nothing new
    /// takes no lock and writes nothing (`trustFinished`).
    var record: MemberTrust.Record?
}

extension RollbackCheck {
    /// After the unlock (`opened`): what the judgement will look at (MemberTrust+Judgement.swift).
    func trustOpened(_ unlocked: UnlockedVault) {
        trust = TrustState()
        trust.copy = MemberTrust.Copy(evidence: unlocked.sealEvidence, vaultID: unlocked.header.vaultID, generation: unlocked.header.generation)
        lastJudgement = nil
    }

    /// The judgement of the copy unlocked at `path`, made once; nil when nothing was unlocked or the
    /// record cannot be read (a problem, reported: this machine then trusts on first use again).
    func trustJudgement(path: String) -> MemberTrust.Judgement? {
        if let judgement = trust.judgement { return judgement }
        guard let copy = trust.copy else { return nil }
        do {
            let record = try memberTrust.record(of: copy.vaultID)
            trust.record = record
            // A vault id with no record here (signed and new, or unsigned) is compared with the signed
            // vaults seen at its path: a new id there is not taken silently, signed or not.
            let other = record == nil ? try memberTrust.otherVault(lastSeenAt: seen.absolute(path), than: copy.vaultID) : nil
            let judgement = MemberTrust.judge(copy, record: record, otherVaultAtPath: other, comparesGenerations: comparesGenerations)
            trust.judgement = judgement
            lastJudgement = judgement
            return judgement
        } catch {
            problem = problem ?? error
            trust.copy = nil
            return nil
        }
    }

    /// Before `unlocked` is sealed over the file at `path` (`willWrite`): the error that refuses a
    /// write to a copy not trusted (nothing is written), unless `allowUntrusted`.
    func trustRefusal(writing unlocked: UnlockedVault, path: String) -> VaultError? {
        trust.written = unlocked
        guard let judgement = trustJudgement(path: path), !judgement.isTrusted, !allowUntrusted else { return nil }
        return .untrustedCopy(path: path, why: judgement.findings)
    }

    /// For a command that hands the values of the copy it read at `path` to a program (`exec`,
    /// `inject`): the error that refuses it when the copy is not trusted (unless `allowUntrusted`),
    /// which then replaces the warning of the read. Call after the read.
    public func takeUntrustedRefusal(path: String) -> VaultError? {
        guard let judgement = lastJudgement, !judgement.isTrusted, !allowUntrusted else { return nil }
        findings.removeAll { if case .untrustedCopy = $0 { return true } else { return false } }
        return .untrustedCopy(path: path, why: judgement.findings)
    }

    /// Once the command is over (`finished`), `wrote` saying whether a new version is at `path`:
    /// records what an accepted copy teaches (`Record.accept`), and returns false for a copy not
    /// trusted, which is reported and records nothing else (its generation and lineage neither),
    /// unless it was written over with `--allow-untrusted` (then nothing of it is pinned).
    func trustFinished(wrote: Bool, path: String) -> Bool {
        defer { trust = TrustState() }
        guard let copy = trust.copy, let judgement = trustJudgement(path: path) else { return true }
        guard judgement.isTrusted else {
            // The members' reason first; then what the key lineage says of it too (it records nothing of a
            // copy not trusted), unless the copy is signed by or holds a key that is no member's: its hints
            // (rekey, --accept-rotation) would be wrong steps for a planted copy.
            findings.append(allowUntrusted ? .untrustedTaken(path: path, why: judgement.findings) : .untrustedCopy(path: path, why: judgement.findings))
            if !wrote, lineage.opened != nil, !judgement.findings.contains(where: \.namesAnOutsider) {
                switch lineage.verdict {
                case .taken: break
                case .retiredHere(let retired): findings.append(.retiredKey(path: path, retired: retired))
                case .refused(let why): findings.append(.refusedCopy(path: path, why: why))
                }
            }
            return wrote
        }
        let written = wrote ? trust.written?.sealEvidence : nil
        guard judgement.signed || written != nil else { return true }
        if judgement.firstOpen, judgement.signed { findings.append(.pinnedOnFirstOpen(path: path, signer: judgement.signerFingerprint)) }
        let absolute = seen.absolute(path)
        func accept(_ record: inout MemberTrust.Record) {
            if let evidence = copy.evidence { record.accept(evidence, path: absolute, recordHeader: true) }
            if let written { record.accept(written, path: absolute, recordHeader: true) }
        }
        // The common read (an agent's get): the copy is the one recorded, and the record would not
        // change. Checked on the record the judgement read, without the state folder's lock.
        if let before = trust.record {
            var after = before
            accept(&after)
            after.trim()
            if after == before { return true }
        }
        do {
            try memberTrust.update(copy.vaultID, accept)
        } catch {
            problem = problem ?? error
        }
        return true
    }

    /// Pins the copy `unlocked` at `path` as accepted by a person (`vaultfile trust`), whatever the
    /// judgement, and has the key lineage adopt it as `--accept-rotation` does; throws the state
    /// folder's problem, since nothing else would be pinned.
    public func pin(_ unlocked: UnlockedVault, path: String) throws(StateFolder.Problem) {
        guard let evidence = unlocked.sealEvidence else { return }
        let own = [SealAncestor(generation: evidence.generation, headerHash: evidence.headerHash)] + evidence.record.ancestors
        try memberTrust.update(unlocked.header.vaultID) { record in
            // A person vouched for it: the keys it holds and its signer are members again here, and its history is the one kept.
            for key in evidence.slots.map({ MemberKey.id(of: $0.key) }) + [evidence.signer.id] { record.readmit(key) }
            record.headers.removeAll { seen in own.contains { $0.generation == seen.generation && $0.headerHash != seen.headerHash } }
            record.accept(evidence, path: seen.absolute(path), recordHeader: true, asNewest: true)
        }
        // The person confirmed the copy, keys and all: the key lineage takes it as `--accept-rotation` does,
        // so that a readmit (a slot key retired here back in the slots) or a rotation made elsewhere is written to.
        let view = KeyLineage.View(unlocked)
        _ = try retiredKeys.update(unlocked.header.vaultID) { KeyLineage.adopt(view, from: .accepted, into: &$0, now: Int64(time(nil))) }
    }
}
