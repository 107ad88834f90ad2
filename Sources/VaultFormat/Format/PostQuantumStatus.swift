import VaultModel

// MARK: - What "post-quantum" means for a vault (age's no-mixing rule)

/// How far a vault's keyslots resist an attacker with a quantum computer, by the kinds of its
/// slots. A post-quantum slot (type 8) is; a slot wrapped to a classical public key (X25519 age
/// recipients, ssh-ed25519, ssh-rsa, and kinds this build does not know) is not; nor is an age
/// plugin slot (type 9): only the plugin's `labels` answer says whether it is post-quantum, a slot
/// cannot ask it without running the plugin, and real plugins (YubiKey, FIDO2, TPM) are classical,
/// so it counts as classical and a vault is never called post-quantum wrongly; a slot derived
/// from a secret (password, keyfile, recovery code) wraps with X25519 to a public key that only
/// the metadata holds, which is secret from outsiders but not from members or former members.
public enum PostQuantumStatus: Equatable, Sendable {
    /// Every slot is post-quantum.
    case postQuantum
    /// At least one slot is post-quantum and the others are password, keyfile or recovery slots.
    case againstOutsiders
    /// A slot is classical (or there is no post-quantum slot).
    case classical

    /// The status of `keyslots`.
    public init(_ keyslots: [Keyslot]) {
        var postQuantum = 0, derived = 0
        for slot in keyslots {
            switch slot.quantumKind {
            case .postQuantum: postQuantum += 1
            case .derived: derived += 1
            case .classical: self = .classical; return
            }
        }
        if postQuantum == 0 { self = .classical } else { self = derived == 0 ? .postQuantum : .againstOutsiders }
    }

    /// The words `info` prints: `post-quantum`, `post-quantum against outsiders`, nil when classical.
    public var words: String? {
        switch self {
        case .postQuantum: return "post-quantum"
        case .againstOutsiders: return "post-quantum against outsiders"
        case .classical: return nil
        }
    }

    /// The word a state-folder record keeps (`post-quantum`, `against-outsiders`, `classical`).
    public var recordWord: String {
        switch self {
        case .postQuantum: return "post-quantum"
        case .againstOutsiders: return "against-outsiders"
        case .classical: return "classical"
        }
    }

    /// The status a record's word names, nil for any other word.
    public init?(recordWord: Substring) {
        switch recordWord {
        case "post-quantum": self = .postQuantum
        case "against-outsiders": self = .againstOutsiders
        case "classical": self = .classical
        default: return nil
        }
    }

    /// The positions of the slots of `keyslots` that make a vault classical: wrapped to a classical
    /// public key, through an age plugin, or of a kind this build does not know.
    public static func classicalSlots(_ keyslots: [Keyslot]) -> [Int] {
        keyslots.indices.filter { keyslots[$0].quantumKind == .classical }
    }

    /// Refuses adding the classical slot `new` to a vault that is post-quantum, fully or against
    /// outsiders, unless `allowClassical`: the vault would then be only as strong as that slot.
    public static func checkAdding(_ new: NewSlot, to keyslots: [Keyslot], allowClassical: Bool) throws(VaultError) {
        guard new.isClassicalPublicKey, !allowClassical else { return }
        let status = PostQuantumStatus(keyslots)
        guard status != .classical, let words = status.words else { return }
        throw refusal(new, words: "the vault is \(words)")
    }

    /// `init`'s form of the rule: refuses a new vault whose slots mix post-quantum recipients with
    /// a classical key (the first one is named), unless `allowClassical`. Passwords, keyfiles and
    /// recovery codes beside post-quantum recipients are allowed, as `slot add` allows them (the
    /// vault is then post-quantum against outsiders).
    public static func checkCreating(_ slots: [NewSlot], allowClassical: Bool) throws(VaultError) {
        guard !allowClassical, let classical = slots.first(where: \.isClassicalPublicKey) else { return }
        guard slots.contains(where: { if case .postQuantum = $0 { true } else { false } }) else { return }
        throw refusal(classical, words: "the new vault has post-quantum recipients")
    }

    /// The one wording of the rule, for `slot add` and `init`.
    private static func refusal(_ new: NewSlot, words: String) -> VaultError {
        let what = if case .plugin = new { "an age plugin recipient, counted as classical (vaultfile cannot check what the plugin does)" } else { "a classical key" }
        return .slotChangeRefused("\(words), and \(new.keyName ?? "this key") is \(what): "
                                  + "a quantum computer could open the vault through its slot (age's rule: no mixing); "
                                  + "add an age1pq1… recipient instead, or pass --allow-classical to accept it")
    }
}

extension Keyslot {
    /// A slot's kind for `PostQuantumStatus`.
    enum QuantumKind { case postQuantum, derived, classical }

    var quantumKind: QuantumKind {
        switch self {
        case .mlkem768x25519: return .postQuantum
        case .password: return .derived
        case .x25519(let slot):
            switch slot.kind {
            case .password, .keyfile, .recovery: return .derived
            case .recipient, .sshEd25519: return .classical
            }
        // A plugin's kind is its `labels` answer, unknown without running it: classical (see above).
        case .sshRSA, .plugin, .unknown: return .classical
        }
    }
}

extension NewSlot {
    /// Whether the slot would be wrapped to a classical public key (age X25519, ssh-ed25519,
    /// ssh-rsa) or through an age plugin, which counts as classical (`PostQuantumStatus`).
    public var isClassicalPublicKey: Bool {
        switch self {
        case .recipient, .sshEd25519, .sshRSA, .plugin: return true
        case .password, .keyfile, .recovery, .postQuantum: return false
        }
    }
}
