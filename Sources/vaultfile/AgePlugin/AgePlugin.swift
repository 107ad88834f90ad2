import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - age-plugin-vaultfile

/// `age-plugin-vaultfile`: the vaultfile binary run by age (or any age client: sops, pyrage, rage)
/// through a link of that name, to decrypt with an age identity kept in a vault.
///
/// It speaks the C2SP age-plugin protocol's `identity-v1` state machine on its standard input and
/// output. Each `AGE-PLUGIN-VAULTFILE-1…` identity names a vault and a lent entry
/// (`VaultfilePluginIdentity`); the vault is the one the agent holds under that id (its confirm
/// command runs for every entry, with `VAULTFILE_CONFIRM_ACTION=age-unwrap`), else the usual vault
/// (`VAULTFILE_PATH`, the default) opened with the usual sources. The X25519 unwrap runs here, in
/// this non-dumpable process, in guarded memory: only the 16-byte file key of each file goes back.
enum AgePlugin {
    /// Runs the plugin with `arguments` (those after the program's name); returns its exit status.
    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, arguments[0].hasPrefix("--age-plugin=") else {
            Messages.error("age-plugin-vaultfile is run by age, as 'age-plugin-vaultfile --age-plugin=identity-v1'",
                           hint: "give age the identity line of 'vaultfile age-identity NAME --lend' (age -d -i FILE)")
            return ExitStatus.usage.rawValue
        }
        switch arguments[0].dropFirst("--age-plugin=".count) {
        case "identity-v1":
            // A client gone mid-write must end this process with an error, not a signal.
            signal(SIGPIPE, SIG_IGN)
            var channel = AgePluginChannel()
            defer { channel.close() }
            do {
                try identityV1(&channel)
                return ExitStatus.success.rawValue
            } catch {
                Messages.error("age-plugin-vaultfile: \(error.description)")
                return (error.category == .overLimit ? ExitStatus.overLimit : ExitStatus.failure).rawValue
            }
        case "recipient-v1":
            let text = "age-plugin-vaultfile only decrypts (identity-v1): encrypt to the entry's own recipient instead"
            let hint = "'vaultfile age-identity NAME --recipient' prints it (age1…)"
            Messages.error(text, hint: hint)
            // age shows an `error` of the plugin, not its standard error.
            var channel = AgePluginChannel()
            defer { channel.close() }
            AgePluginRecipientRefusal.answer(&channel, message: "\(text); \(hint)")
            return ExitStatus.usage.rawValue
        default:
            Messages.error("age-plugin-vaultfile does not know the state machine '\(Messages.escaped(String(arguments[0].dropFirst("--age-plugin=".count).prefix(64))))'")
            return ExitStatus.usage.rawValue
        }
    }

    /// Phase 1 (the client's identities and stanzas), then phase 2 (errors, file keys, `done`).
    static func identityV1(_ channel: inout AgePluginChannel) throws(AgePluginError) {
        var request = AgePluginIdentityRequest()
        channel.startPhase()
        while try !request.take(channel.receive()) {}
        channel.startPhase()
        // Only files with a stanza this plugin may open make it look for a vault: an unrelated
        // file (another recipient's) never asks the agent nor its confirm command.
        var refusedFiles: [Int] = []
        var candidates: [Int] = []
        for (index, stanzas) in request.files.enumerated() {
            if !AgePluginUnwrap.isWellFormed(stanzas) { refusedFiles.append(index) } else if AgePluginUnwrap.hasCandidates(stanzas) { candidates.append(index) }
        }
        // Failures never say which stanza: a malformed file is refused whole, by its index alone.
        for index in refusedFiles {
            try channel.send(.internalError("file \(index) holds a malformed X25519 or mlkem768x25519 stanza; it was not unwrapped"))
        }
        guard !candidates.isEmpty, !request.identities.isEmpty else { return try finish(&channel) }
        let identities: [[AgeIdentity]]
        // Warnings of the open (an older copy, an unsafe agent folder) reach the user as `msg`.
        Messages.relayed = []
        let loaded = AgePluginKeys.load(request.identities)
        for text in Messages.relayed ?? [] { try channel.send(.message("age-plugin-vaultfile: " + text)) }
        Messages.relayed = nil
        switch loaded {
        case .success(let loaded): identities = loaded
        case .failure(let list):
            // The spec: an unusable identity stops every unwrap of this run.
            for failure in list.failures { try channel.send(.identityError(index: failure.index, message: failure.message)) }
            return try finish(&channel)
        }
        let all = identities.flatMap { $0 }
        for index in candidates {
            switch AgePluginUnwrap.unwrap(request.files[index], with: all) {
            case .fileKey(let key): try channel.send(.fileKey(index: index, key: key))
            case .refused: try channel.send(.internalError("file \(index) holds a malformed X25519 stanza; it was not unwrapped"))
            case .none: break
            }
        }
        try finish(&channel)
    }

    /// Ends phase 2.
    private static func finish(_ channel: inout AgePluginChannel) throws(AgePluginError) {
        try channel.send(.done)
    }
}
