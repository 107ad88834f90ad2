import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The one wording when nothing opens the vault

/// What a command says when no source opens the vault (`CLIError.nothingOpens`): the one builder
/// of that message and its hint, for every verb (textconv and the merge driver's sides included).
///
/// It names the sources tried, never their contents; says where identities are looked for; names
/// passwords only for a vault with a password slot; says when an agent socket exists but the agent
/// no longer holds the vault (after `lock`, or its idle timeout) and names `vaultfile unlock`.
/// Its exit status is the one such failures always had: 3, or 2 when the password could not be
/// asked for (no source, no terminal: `noPasswordSource`'s).
struct NothingOpens: Equatable {
    /// The sources tried, named, each once, in order ("the password" for a password).
    let tried: [String]
    /// Whether a password opens a slot of the vault.
    let hasPasswordSlot: Bool
    /// The kinds of the vault's other slots this build knows, in slot order, each once.
    let otherKinds: [SlotKind]
    /// Slot types this build does not know (skipped).
    let unknownTypes: [UInt8]
    /// Where the password came from, for a password tried.
    let passwordFrom: String
    /// Why the agent had no key, when it was asked.
    let agentMiss: AgentMiss?
    /// Where the default identities are looked for (`DefaultIdentity.locations`).
    let identityLocations: String
    /// Whether the password prompt was the next step but there is no terminal to ask on.
    let noTerminal: Bool
    /// Whether no source was given (no option, no variable): only default identities, if any, were tried.
    let noSourceGiven: Bool
    /// The stanza types of the vault's age plugin keyslots, each once (NothingOpens+Plugins.swift).
    var pluginStanzaTypes: [String] = []
    /// Whether the vault has an ssh-rsa keyslot.
    var hasSSHRSASlot = false
    /// Whether the vault has a post-quantum (mlkem768x25519) keyslot.
    var hasPostQuantumSlot = false

    /// The default identities among `tried` that were skipped, not tried: protected, with no terminal to ask on.
    private var skipped: [String] {
        tried.filter { source in IdentityPassphrase.skippedWithoutTerminal.contains { source == "the default identity \($0)" } }
    }

    /// The default identities among `tried` that no passphrase given decrypted (so never tried),
    /// each with where its passphrase came from.
    private var undecrypted: [(source: String, passphrase: String)] {
        tried.compactMap { source in
            IdentityPassphrase.skippedWrongPassphrase.first { source == "the default identity \($0.key)" }.map { (source, $0.value) }
        }
    }

    /// Whether every source tried was a password (or none was tried).
    private var onlyPasswords: Bool { tried.allSatisfy { $0 == Self.password } }

    /// How `UnlockCredential` names every password.
    private static let password = "the password"

    // MARK: The message

    var description: String {
        var parts: [String] = []
        let undecrypted = self.undecrypted
        let named = tried.filter { source in !skipped.contains(source) && !undecrypted.contains { $0.source == source } }
            .map { $0 == Self.password ? "the password (\(passwordFrom))" : $0 }
        if !skipped.isEmpty {
            parts.append("\(Self.list(skipped, or: false)) \(skipped.count == 1 ? "was" : "were") skipped: protected by a passphrase, "
                         + "and no terminal to ask it on")
        }
        // A wrong passphrase is said as one: the identity it protects was never tried against a keyslot.
        for passphrase in Set(undecrypted.map(\.passphrase)).sorted() {
            let identities = undecrypted.filter { $0.passphrase == passphrase }.map(\.source)
            parts.append("wrong passphrase: \(passphrase) does not decrypt \(Self.list(identities, or: false)), "
                         + "so \(identities.count == 1 ? "it was" : "they were") not tried")
        }
        if !skipped.isEmpty || !undecrypted.isEmpty, named.isEmpty, !noTerminal {
            // Nothing else was tried: the skip is the whole story.
        } else if noTerminal {
            parts.append("no password source, and no terminal to ask on")
            if !named.isEmpty { parts.append("no keyslot of the vault opens with \(Self.list(named, or: true))") }
        } else if onlyPasswords, !named.isEmpty {
            // A password given to a vault that has no password slot: said plainly, since the user gave it.
            parts.append("wrong password: no keyslot of the vault opens with \(Self.list(named, or: true))"
                         + (hasPasswordSlot ? "" : "; the vault has no password slot"))
        } else if named.isEmpty {
            parts.append("nothing to open the vault with: no identity or key was given, and none was found in \(identityLocations)")
        } else {
            parts.append("no keyslot of the vault opens with \(Self.list(named, or: true))")
        }
        if let plugins = pluginsFoundNothing { parts.append(plugins) }
        if !unknownTypes.isEmpty {
            parts.append("it also has keyslots of type \(unknownTypes.map(String.init).joined(separator: ", ")), which this vaultfile does not know and skipped")
        }
        switch agentMiss {
        case .notHeld(let socket)?: parts.append("the agent at \(socket) does not hold this vault (it was locked, or its idle timeout passed)")
        case .noAnswer(let socket)?: parts.append("no agent answers at \(socket) (it stopped)")
        case nil: break
        }
        return parts.joined(separator: "; ")
    }

    // MARK: The hint

    var hint: String? {
        var steps: [String] = []
        if agentMiss != nil { steps.append("run 'vaultfile unlock' to hand the agent the vault's key again") }
        if !skipped.isEmpty || !undecrypted.isEmpty {
            steps.append("give \(skipped.isEmpty ? "the passphrase that decrypts it" : "a skipped identity's passphrase") with --identity-passphrase-file FILE, --identity-passphrase-fd N or "
                         + "VAULTFILE_IDENTITY_PASSPHRASE_FILE")
        }
        if noTerminal {
            // As with no source at all (scripts and people know that hint), and where identities are looked for.
            steps.append(ErrorReport.hint(for: CLIError.noPasswordSource) ?? "")
            steps.append("identities are also looked for in \(identityLocations)")
            return steps.joined(separator: "; ")
        }
        if !tried.isEmpty, !onlyPasswords || !hasPasswordSlot { steps.append("'vaultfile slot list' on a machine that opens it shows whose keys it takes") }
        var ways: [String] = []
        if hasPasswordSlot {
            // The prompt follows only when no source was given: said as it is (an --identity switched it off).
            let prompt = noSourceGiven ? "else the prompt on a terminal"
                : "given beside the other sources: the prompt is not shown when --identity, --keyfile or another source is given"
            ways.append("a password (--password-file, --password-fd, --password-command, VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD_COMMAND, "
                        + "VAULTFILE_PASSWORD, \(prompt))")
        }
        let identities = otherKinds.filter { $0 == .recipient || $0 == .sshEd25519 }
        if !identities.isEmpty || hasSSHRSASlot || hasPostQuantumSlot || otherKinds.isEmpty && !unknownTypes.isEmpty && pluginStanzaTypes.isEmpty {
            let kinds = identities.map { $0 == .recipient ? "an age identity" : "an ssh-ed25519 key" } + (hasSSHRSASlot ? ["an ssh-rsa key"] : [])
                + (hasPostQuantumSlot ? ["a post-quantum age identity (AGE-SECRET-KEY-PQ-1…)"] : [])
            ways.append("\(kinds.isEmpty ? "an identity" : kinds.joined(separator: " or ")) (--identity FILE, VAULTFILE_IDENTITY_FILE, "
                        + "VAULTFILE_IDENTITY, else the default identities in \(identityLocations))")
        }
        if let plugin = pluginWay { ways.append(plugin) }
        if otherKinds.contains(.keyfile) { ways.append("a keyfile (--keyfile FILE, VAULTFILE_KEYFILE)") }
        if otherKinds.contains(.recovery) { ways.append("a recovery code (--recovery, --recovery-file FILE)") }
        if let plugins = pluginStep { steps.append(plugins) }
        if !ways.isEmpty { steps.append("this vault opens with " + Self.list(ways, or: true)) }
        return steps.isEmpty ? nil : steps.joined(separator: "; ")
    }

    /// The exit status: that of a wrong password, or of no password source when none could be asked for.
    var category: ErrorCategory { noTerminal ? .invalidInput : .wrongPassword }

    // MARK: Helpers

    /// "a, b and c" (or "a, b or c").
    static func list(_ items: [String], or: Bool = false) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + (or ? " or " : ", ") + items.last!
    }

    /// Where a password comes from, as the options and variables name it (never the password).
    private static func describe(_ source: PasswordSource) -> String {
        switch source {
        case .file(let path): return path == Input.standardInputName ? "standard input" : "the file \(path)"
        case .descriptor(let fd): return "descriptor \(fd)"
        case .command: return "the password command"
        case .environment: return "VAULTFILE_PASSWORD"
        case .prompt: return "typed at the prompt"
        }
    }
}

extension NothingOpens {
    /// The report of `header` after `tried`.
    init(header: VaultHeader, tried: [String], passwordSource: PasswordSource, agentMiss: AgentMiss?, identityLocations: String,
         noTerminal: Bool, noSourceGiven: Bool) {
        var names: [String] = []
        for name in tried where !names.contains(name) { names.append(name) }
        self.tried = names
        hasPasswordSlot = header.hasPasswordSlot
        var kinds: [SlotKind] = []
        for case .x25519(let slot) in header.keyslots where slot.kind != .password && !kinds.contains(slot.kind) { kinds.append(slot.kind) }
        otherKinds = kinds
        unknownTypes = header.keyslots.compactMap { if case .unknown(let type, _) = $0 { return type } else { return nil } }
        passwordFrom = Self.describe(passwordSource)
        self.agentMiss = agentMiss
        self.identityLocations = identityLocations
        self.noTerminal = noTerminal
        self.noSourceGiven = noSourceGiven
        pluginStanzaTypes = Self.pluginStanzaTypes(of: header)
        hasSSHRSASlot = header.hasSSHRSASlot
        hasPostQuantumSlot = header.hasPostQuantumSlot
    }
}

// MARK: - Why the agent had no key

/// Why the agent gave no key for a vault while its socket exists (`AgentAccess.lookup`).
enum AgentMiss: Equatable {
    /// The agent answered that it does not hold the vault.
    case notHeld(socket: String)
    /// Nothing answered at the socket (a socket left by an agent that stopped).
    case noAnswer(socket: String)
}
