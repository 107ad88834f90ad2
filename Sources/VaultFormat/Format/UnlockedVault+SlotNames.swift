import VaultModel

// MARK: - Naming a slot

extension UnlockedVault {
    /// The id of the slot `text` names (`slot rm`, `slot label`), tried in this order:
    /// - a number that is a slot's id (its position in the header, as `slot list` shows it);
    /// - a post-quantum recipient cut as `slot list` shows it (`age1pq1…` and its last 8 characters);
    /// - a key: `age1…`, `age1pq1…` or an ssh public key line (`ssh-ed25519 AAAA… [comment]`, `ssh-rsa AAAA…`, the comment
    ///   ignored), matched by the key the slot holds; or a fingerprint as `slot list` shows it
    ///   (`SHA256:…`, `x25519:…`, `mlkem768x25519:…`);
    /// - a label: one slot's whole label, else the one label that starts with `text`.
    ///
    /// A label prefix (or a label) that several slots share is refused naming each candidate
    /// (`slotNameAmbiguous`), so a command never picks one of two people by chance.
    public func slotIndex(named text: String) throws(VaultError) -> Int {
        if let index = Int(text), header.keyslots.indices.contains(index) { return index }
        let slots = self.slots
        // A post-quantum recipient as `slot list`'s table shows it (`age1pq1…` and its last 8
        // characters), copied from there: the slots whose recipient that table shows so.
        if text.hasPrefix(Self.shortenedPQPrefix) {
            let matches = slots.filter { $0.recipient.map(AgePQRecipient.shortened) == text }
            guard let match = matches.first else { throw .slotNotFound(Self.echoed(text)) }
            guard matches.count == 1 else {
                throw .slotNameAmbiguous(name: text, candidates: matches.map { "\($0.index) (\($0.label.isEmpty ? $0.kind : "\($0.kind), \($0.label)"))" })
            }
            return match.index
        }
        if let key = try keyNamed(text) {
            // Named as `slot list` shows it: a post-quantum recipient cut short, a long ssh-rsa line by its fingerprint.
            guard let match = slots.first(where: { $0.fingerprint == key || $0.recipient == key }) else {
                throw .slotNotFound(text.count > Self.longestKeyEchoed && !AgePQRecipient.looksLike(text) ? key : AgePQRecipient.shortened(text))
            }
            return match.index
        }
        if text.hasPrefix("SHA256:") || text.hasPrefix("x25519:") || text.hasPrefix(HybridSlot.fingerprintPrefix) {
            if let match = slots.first(where: { $0.fingerprint == text }) { return match.index }
        }
        let whole = slots.filter { !$0.label.isEmpty && $0.label == text }
        let matches = whole.isEmpty ? slots.filter { !text.isEmpty && $0.label.hasPrefix(text) } : whole
        guard let match = matches.first else { throw .slotNotFound(Self.echoed(text)) }
        guard matches.count == 1 else {
            throw .slotNameAmbiguous(name: text, candidates: matches.map { "\($0.index) (\($0.label.isEmpty ? $0.kind : "\($0.kind), \($0.label)"))" })
        }
        return match.index
    }

    /// How `AgePQRecipient.shortened` starts a post-quantum recipient it cuts.
    static let shortenedPQPrefix = "age1pq1…"

    /// The longest key text an error repeats as given: an ssh-ed25519 line with a comment fits; a
    /// longer one (ssh-rsa) is named by its fingerprint.
    static let longestKeyEchoed = 160

    /// `text` as an error repeats a name no slot has: whole up to `longestKeyEchoed` characters
    /// (longer than any label), else its start and its length.
    static func echoed(_ text: String) -> String {
        guard text.count > longestKeyEchoed else { return text }
        return String(text.prefix(longestKeyEchoed / 2)) + "… (\(text.count) characters)"
    }

    /// The ids of the slots `names` name, each resolved against the slots as they are now (before
    /// any removal), in the order given, each once.
    public func slotIndices(named names: [String]) throws(VaultError) -> [Int] {
        var result: [Int] = []
        for name in names {
            let index = try slotIndex(named: name)
            if !result.contains(index) { result.append(index) }
        }
        return result
    }

    /// The fingerprint (`age1…`, `SHA256:…` or `mlkem768x25519:…`) of the key `text` spells, nil when it spells none;
    /// an `age1…` or `ssh-…` text that is not a valid key is refused as such (malformed input).
    private func keyNamed(_ text: String) throws(VaultError) -> String? {
        // Before `age1`: a post-quantum recipient is past Bech32's 90 characters, which only its parser allows.
        if AgePQRecipient.looksLike(text) { return HybridSlot.fingerprint(of: try AgePQRecipient(parsing: text).publicKey.bytes) }
        if text.hasPrefix("age1") { return try AgeRecipient(parsing: text).description }
        if text.hasPrefix(SSHRSAPublicKey.typeName + " ") { return try SSHRSAPublicKey(parsing: text).fingerprint }
        if text.hasPrefix("ssh-") { return try SSHEd25519PublicKey(parsing: text).fingerprint }
        return nil
    }

    // MARK: Relabelling

    /// Gives slot `index` the label `label` (`slot label`). Who can open the vault does not change,
    /// so the file key stays (no rotation): only the encrypted metadata is sealed anew. In a signed
    /// vault the slot that opened it attests the slot again under its new label (docs/FORMAT.md,
    /// "Signed seals"), so that the seal record still verifies and trust still traces it; a vault
    /// opened without a slot's secret (the agent's file key) cannot attest and is refused
    /// (`noSealSigner`). Returns the old label; false as `changed` when it was the label already.
    public func relabelSlot(_ index: Int, label: String) throws -> (old: String, changed: Bool) {
        guard SlotMetadata.isValidLabel(label) else {
            throw VaultError.slotChangeRefused("a slot label is at most \(SlotMetadata.maxLabelLength) bytes of UTF-8 without control characters")
        }
        guard header.keyslots.indices.contains(index) else { throw VaultError.slotNotFound(String(index)) }
        guard header.usesKeyslots11, var entries = slotMetadata, entries.indices.contains(index) else {
            throw VaultError.slotChangeRefused("a vault of format 1.0 keeps no slot labels; adding a slot ('vaultfile slot add') "
                                               + "moves it to format 1.1, whose slots have labels")
        }
        let old = entries[index].label
        guard old != label else { return (old, false) }
        if isSigned {
            let attester = try attestingSigner()
            guard sealState.attestations.indices.contains(index) else {
                throw VaultError.headerDamaged("the seal record has no attestation for keyslot \(index)")
            }
            sealState.attestations[index] = try attester.attest(vaultID: header.vaultID, type: entries[index].type,
                                                                slotKey: entries[index].publicKey, label: label)
        }
        entries[index].label = label
        slotMetadata = entries
        headerChanged = true
        return (old, true)
    }
}
