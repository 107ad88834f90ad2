import VaultModel

// MARK: - The opening slot as a signer, from the header alone

extension OpenedSlot {
    /// The signer of this slot's own secret in `header` (its key as the metadata holds it, which
    /// the secret derived), for `vaultfile unlock`, which reads only the header and signs a
    /// delegation with it; nil for a slot that cannot sign (a v1 password slot, unknown types) or
    /// cannot delegate (an ssh-rsa slot: the agent's wire carries 64-byte delegation signatures).
    public func sealSigner(in header: VaultHeader) -> SlotSealSigner? {
        guard let secret = signingKey, let key = derivedKey, header.keyslots.indices.contains(index) else { return nil }
        let type = header.keyslots[index].typeByte
        guard let scheme = SealScheme.direct(forSlotType: type), scheme != .rsaPSS else { return nil }
        return SlotSealSigner(position: index, key: MemberKey(type: type, bytes: key), secret: secret)
    }
}
