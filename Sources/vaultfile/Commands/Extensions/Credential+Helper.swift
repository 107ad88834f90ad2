import SecureMemory
import VaultAgent
import VaultFormat
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - git's credential helper

/// What `git-credential-vaultfile` (and `vaultfile git credential`) does with one request: reads
/// it (bounded: `GitCredentialRequest`), opens the vault through the one access path
/// (`UnlockOptions.open`/`update`, the agent first), and answers from the entries
/// `GitCredentialEntries` chooses. stdout carries only the answer; messages go to stderr.
struct GitCredentialHelper {
    /// `--vault`, or nil for the usual vault.
    let vault: String?
    /// `--allow-write`: store and erase may change the vault.
    let allowWrite: Bool

    /// Runs `operation`: get, store or erase; any other exits 0 without reading, as
    /// gitcredentials(7) asks of helpers.
    func run(_ operation: String) throws {
        switch operation {
        case "get": try get()
        case "store", "erase":
            var request = try Self.readRequest()
            defer { request.wipePassword() }
            // Read-only by default: git sends store after every success, erase after every failure.
            guard allowWrite else { return }
            // Never a prompt: a write happens only with a vault the agent or a source opens.
            Terminal.promptsAllowed = false
            if operation == "store" { try store(request) } else { try erase(request) }
        default:
            return
        }
    }

    /// Runs `body` with the agent told what the key is for (`AgentKeyUse`: the operation and the
    /// URL git asked about, which the vault's confirm command sees), and says "the vault is locked"
    /// when nothing opens it without a prompt: the helper takes no password option, and store and
    /// erase never prompt, so the way in is `vaultfile unlock` (`gitCredentialVaultLocked`).
    private func opening<R>(_ operation: AgentKeyUse.Action, _ request: GitCredentialRequest, _ body: (UnlockOptions) throws -> R) throws -> R {
        let options = try unlockOptions()
        AgentAccess.keyUse = AgentKeyUse(action: operation, entry: Self.url(of: request))
        defer { AgentAccess.keyUse = nil }
        do {
            return try body(options)
        } catch CLIError.nothingOpens(let report) where report.noTerminal || report.tried.isEmpty {
            throw CLIError.gitCredentialVaultLocked(path: options.location.path, vaultOption: vault, operation: operation.name,
                                                    agentMiss: report.agentMiss)
        } catch CLIError.noPasswordSource {
            throw CLIError.gitCredentialVaultLocked(path: options.location.path, vaultOption: vault, operation: operation.name, agentMiss: nil)
        }
    }

    /// The hint under `gitCredentialVaultLocked`: `vaultfile unlock`, with `--vault PATH` when the
    /// helper was given it (git from an IDE or cron may not see the user's VAULTFILE_PATH).
    static func lockedHint(path: String, vaultOption: String?) -> String {
        "unlock once, and the agent then answers git without a prompt (the helper itself never asks for the vault's password "
            + "when git cannot show a prompt): vaultfile unlock\(vaultOption == nil ? "" : " --vault " + shellPath(path))"
    }

    /// The URL of `request` as the confirm command sees it: `PROTOCOL://[USER@]HOST[/PATH]`, with
    /// control and bidirectional characters escaped (`Messages.escaped`), as a person may be shown it.
    static func url(of request: GitCredentialRequest) -> String {
        let user = request.username.map { $0 + "@" } ?? ""
        let path = request.path.map { "/" + $0 } ?? ""
        return Messages.escaped("\(request.protocolName ?? "")://\(user)\(request.host ?? "")\(path)")
    }

    /// The unlock options of the helper: the usual sources (agent, variables, default identities),
    /// this vault. Filled by the quick reading of `--vault=PATH` (every property wrapper set, as a
    /// verb's own reading sets them); ArgumentParser reads the line when the quick reading declines.
    private func unlockOptions() throws -> UnlockOptions {
        let line = vault.map { ["--vault=" + $0] } ?? []
        if var arguments = QuickArguments(line[...], grammar: UnlockOptions.quickGrammar),
           let options = try? UnlockOptions.quick(&arguments), (try? arguments.checkAllRead()) != nil {
            return options
        }
        return try UnlockOptions.parse(line)
    }

    // MARK: get

    /// Prints `username=` (when the entry has one) and `password=` of the entry that answers, or nothing.
    private func get() throws {
        var request = try Self.readRequest()
        defer { request.wipePassword() }
        guard request.protocolName != nil, request.host?.isEmpty == false else { return }
        if let setting = environment("GIT_TERMINAL_PROMPT"), ["0", "false", "no", "off"].contains(setting.lowercased()) {
            Terminal.promptsAllowed = false
        }
        let vault = try opening(.gitCredentialGet, request) { try $0.open(entriesOnly: true).vault }
        switch GitCredentialEntries.lookUp(request, in: vault) {
        case .none:
            return
        case .ambiguousUsers(let names):
            Messages.note("git credential: \(names.count) entries match with different users (\(names.joined(separator: ", "))); "
                          + "put the user in the URL (\(request.protocolName ?? "https")://USER@\(request.host ?? "HOST")/…) "
                          + "or set credential.username, so that one is chosen")
        case .found(let match):
            var answer: [UInt8] = []
            defer { wipe(&answer) }
            if let user = match.username {
                guard !user.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
                    Messages.warning("git credential: the user name of '\(match.name)' holds a line break; no answer",
                                     hint: Self.lineBreakHint(match.name, field: "username"))
                    return
                }
                answer += Array("username=\(user)\n".utf8)
            }
            let fits = try vault.withValue(of: match.name) { value -> Bool in
                // A line break or NUL would end the line early, or start an attribute of its own.
                guard !value.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else { return false }
                answer += Array("password=".utf8)
                answer.append(contentsOf: value)
                answer.append(0x0A)
                return true
            }
            guard fits else {
                Messages.warning("git credential: the value of '\(match.name)' holds a line break or NUL, which git cannot take; no answer",
                                 hint: Self.lineBreakHint(match.name, field: nil))
                return
            }
            try StandardOutput.write(answer)
        }
    }

    // MARK: store and erase

    /// How to store a value again without the line break `echo` adds.
    static func lineBreakHint(_ name: String, field: String?) -> String {
        let option = field.map { " --field \(shellWord($0))" } ?? ""
        return "was it stored with echo, which adds a newline? store it again with this, typed at the prompt or piped from "
            + "printf '%s' (no newline): vaultfile set \(shellWord(name))\(option)"
    }

    /// Keeps a credential git says worked: nothing when it is there already (no write at all); one
    /// edit of one entry, one version of history (`GitCredentialEntries.store`). A user name or host
    /// that an entry's name could not hold unambiguously is refused with a warning (exit 0: git
    /// ignores what store returns).
    private func store(_ request: GitCredentialRequest) throws {
        let outcome = try opening(.gitCredentialStore, request) { options in
            try options.update { unlocked in try GitCredentialEntries.store(request, in: &unlocked.vault) }
        }
        if case .refused(let why) = outcome {
            Messages.warning("git credential store: \(why); nothing was stored",
                             hint: "set the entry yourself ('vaultfile set git/HOST' and '--field username'), or use another user name")
        }
    }

    /// Removes the entry git says failed (its password must be the entry's value; a request
    /// without a password removes nothing), into the trash of a vault that keeps history.
    private func erase(_ request: GitCredentialRequest) throws {
        // Without a password git's failure says nothing about any entry: nothing to open the vault for.
        guard request.password != nil else { return }
        try opening(.gitCredentialErase, request) { options in
            try options.update { unlocked in
                guard let name = GitCredentialEntries.eraseTarget(for: request, in: unlocked.vault) else { return }
                try unlocked.vault.remove(name)
            }
        }
    }

    // MARK: Input

    /// Reads one request from stdin: up to its blank line or the end, bounded
    /// (`GitCredentialRequest.end`: a 100 MB line stops the reading after 64 KiB).
    static func readRequest() throws -> GitCredentialRequest {
        var bytes: [UInt8] = []
        defer { wipe(&bytes) }
        var chunk = [UInt8](repeating: 0, count: 16_384)
        defer { wipe(&chunk) }
        while try GitCredentialRequest.end(in: bytes) == nil {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError.io(operation: "reading", path: "standard input", errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return try GitCredentialRequest.parse(bytes)
    }
}
