import SecureMemory
import VaultFormat
import VaultModel

// MARK: - After the explicit sources

/// The later steps of one command's unlock (`Unlocker.Credentials.next`), asked once the explicit
/// sources (options and variables: `UnlockOptions.credentials()`) opened nothing, with the header:
///
/// 1. the default identities (`DefaultIdentity`), when the vault has a slot of their kind;
/// 2. the password typed at the prompt, up to `promptTries` times, when no source was given
///    (the default identities do not count as given) and the vault has a password slot.
///
/// When no step is left, the one error that says nothing opens (`NothingOpens`), or, for a
/// merge (which names each side that failed itself), the library's own error. In a write to a
/// signed vault, a slot that cannot sign that an earlier source opened (`UnlockProgress.heldSlot`)
/// is the end instead: the steps give nil, and the write is refused naming that slot (`slotCannotSign`).
///
/// Steps are numbered per unlock (`UnlockProgress.step`) and what each gave is kept, so that a
/// merge, which opens up to three sides with one set of sources, reads the default identities
/// and asks for the password once, and tries them on each side in the same order.
final class UnlockSteps {
    /// One later step.
    private enum Step {
        case defaultIdentities([UnlockCredential])
        case prompt(try: Int)
    }

    private let options: UnlockOptions
    /// Whether the password prompt may follow: no source was given (option or variable).
    private let prompts: Bool
    /// Whether the end is `NothingOpens` (every verb) or the library's error (merges).
    private let endsWithReport: Bool
    /// Why the agent had no key, when it was asked (`AgentAccess.lookup`).
    var agentMiss: AgentMiss?
    private var identities: [UnlockCredential]?
    /// The passphrase source of protected identities, the given ones' and the default ones':
    /// one per unlock, so that a descriptor is read once.
    let passphrases: IdentityPassphraseSource
    private var typed: [UnlockCredential] = []
    /// How many credentials the explicit sources gave: they count toward `KeySourceOptions.maxIdentities`.
    var given = 0

    /// The steps of `options`' unlock; `endsWithReport` false for a merge.
    init(_ options: UnlockOptions, endsWithReport: Bool = true) {
        self.options = options
        prompts = !options.keys.isGiven && !options.source.isExplicit
        self.endsWithReport = endsWithReport
        passphrases = options.keys.identityPassphrases()
    }

    /// The most tries of a password typed at the prompt, as sudo, gpg and ssh allow.
    static let promptTries = 3

    /// The sources of the step `progress` asks for, or the end (nil, or the error that says so).
    func next(_ progress: UnlockProgress) throws -> [UnlockCredential]? {
        let plan = self.plan(for: progress.header)
        guard progress.step < plan.count else {
            if progress.heldSlot != nil { return nil }
            if prompts, progress.header.hasPasswordSlot { throw CLIError.typedPasswordWrong(tries: Self.promptTries) }
            guard endsWithReport else { return nil }
            throw CLIError.nothingOpens(report(progress))
        }
        switch plan[progress.step] {
        case .defaultIdentities(let found): return found
        case .prompt(let number):
            do {
                return [try password(try: number, progress)]
            } catch CLIError.nothingOpens where progress.heldSlot != nil {
                // No terminal to ask: the held slot's refusal says how to give the password.
                return nil
            } catch CLIError.emptyPassword where progress.heldSlot != nil {
                // Enter at the prompt that follows a slot which opened the vault but cannot sign:
                // the password is declined, as without a terminal (`unlock` unlocks for reading; a
                // write is refused naming the slot and how to give the password), never "the
                // password is empty" for a vault that opened.
                return nil
            }
        }
    }

    /// The steps for `header`: the default identities that may open one of its slots, then the prompts.
    private func plan(for header: VaultHeader) -> [Step] {
        if identities == nil { identities = DefaultIdentity.credentials(passphrases: passphrases, given: given) }
        let usable = (identities ?? []).filter { DefaultIdentity.mayOpen($0, in: header) }
        var plan: [Step] = usable.isEmpty ? [] : [.defaultIdentities(usable)]
        if prompts, header.hasPasswordSlot { plan += (1...Self.promptTries).map { Step.prompt(try: $0) } }
        return plan
    }

    /// The password of try `number` (from 1): asked at the prompt, or the one typed then for an earlier side of a merge.
    private func password(try number: Int, _ progress: UnlockProgress) throws -> UnlockCredential {
        if number <= typed.count { return typed[number - 1] }
        if number > 1 {
            Messages.info("Sorry, that password does not open \(options.location.path); try again (\(number) of \(Self.promptTries)).")
        } else if let held = progress.heldSlot, Terminal.isAvailable {
            // Said only when the prompt follows (without a terminal the refusal says how to give it).
            Messages.info("keyslot \(held.index), which \(held.credential.source) opens, cannot sign the seals of this signed vault; "
                          + "its password can, to write it:")
        }
        do {
            let credential = UnlockCredential(.password(try options.password()), source: "the password")
            typed.append(credential)
            return credential
        } catch CLIError.noPasswordSource where endsWithReport {
            throw CLIError.nothingOpens(report(progress, noTerminal: true))
        }
    }

    /// What `NothingOpens` says of `progress`.
    private func report(_ progress: UnlockProgress, noTerminal: Bool = false) -> NothingOpens {
        NothingOpens(header: progress.header, tried: progress.tried, passwordSource: options.source, agentMiss: agentMiss,
                     identityLocations: DefaultIdentity.locations, noTerminal: noTerminal, noSourceGiven: prompts)
    }
}
