// MARK: - Which kinds of keyslot a header holds

extension VaultHeader {
    /// Whether the vault has a format-1.1 slot of `kind` (the X25519 shape of §3.3).
    public func hasSlot(of kind: SlotKind) -> Bool {
        keyslots.contains { if case .x25519(let slot) = $0 { return slot.kind == kind } else { return false } }
    }

    /// Whether a password opens a slot of the vault: a format-1.0 password slot or a 1.1 one.
    public var hasPasswordSlot: Bool {
        keyslots.contains { if case .password = $0 { return true } else { return false } } || hasSlot(of: .password)
    }

    /// Whether the vault has a post-quantum mlkem768x25519 slot (format 1.4, type 8).
    public var hasPostQuantumSlot: Bool {
        keyslots.contains { if case .mlkem768x25519 = $0 { return true } else { return false } }
    }

    /// Whether the vault has an ssh-rsa slot (format 1.4, type 7).
    public var hasSSHRSASlot: Bool {
        keyslots.contains { if case .sshRSA = $0 { return true } else { return false } }
    }

    /// Whether the vault has an age plugin slot (format 1.4, type 9).
    public var hasPluginSlot: Bool {
        keyslots.contains { if case .plugin = $0 { return true } else { return false } }
    }
}
