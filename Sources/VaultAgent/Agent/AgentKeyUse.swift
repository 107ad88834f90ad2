import VaultModel

// MARK: - What a key is asked for

/// What a `key` request says the key is for, when it is not an ordinary unlock: the agent passes
/// it to the vault's confirm command, so a person asked to allow a hand-out sees what it is for.
///
/// It is the requesting program's word: the key handed out is the vault's file key whatever the
/// use, so a confirm command should allow a use only for a program it trusts (docs/SECURITY.md).
/// On the wire it follows the header of a `key` request (docs/AGENT.md): a use byte, then the
/// entry as an agent string; a request without it is an ordinary hand-out.
public struct AgentKeyUse: Sendable, Equatable {
    /// The kinds of use.
    public enum Action: UInt8, Sendable {
        /// `age-plugin-vaultfile` unwraps an age file key with the identity kept in `entry`.
        case ageUnwrap = 1
        /// git's credential helper answers `get` for the URL in `entry` (`PROTOCOL://[USER@]HOST[/PATH]`).
        case gitCredentialGet = 2
        /// git's credential helper keeps what git says worked for the URL in `entry` (`store`).
        case gitCredentialStore = 3
        /// git's credential helper removes what git says failed for the URL in `entry` (`erase`).
        case gitCredentialErase = 4

        /// The name the confirm command sees in `VAULTFILE_CONFIRM_ACTION`.
        public var name: String {
            switch self {
            case .ageUnwrap: return "age-unwrap"
            case .gitCredentialGet: return "git-credential-get"
            case .gitCredentialStore: return "git-credential-store"
            case .gitCredentialErase: return "git-credential-erase"
            }
        }

        /// Whether `entry` is a URL git asked about rather than an entry's name.
        public var namesAURL: Bool { self != .ageUnwrap }
    }

    /// What the key is for.
    public var action: Action
    /// The entry whose value the requester will use (`VAULTFILE_CONFIRM_ENTRY`), or for the git
    /// credential helper the URL git asked about (`VAULTFILE_CONFIRM_GIT_URL`).
    public var entry: String

    /// A use of the key.
    public init(action: Action, entry: String) {
        self.action = action
        self.entry = entry
    }

    /// Appends the use after a `key` request's header.
    func encode(into sink: inout some ByteSink) {
        sink.append(action.rawValue)
        sink.appendAgentString(shortened(entry))
    }

    /// The use after a `key` request's header, if the request carries one.
    static func decode(_ reader: inout WireReader) throws(AgentProtocolError) -> AgentKeyUse? {
        guard !reader.isAtEnd else { return nil }
        let byte = try reader.byte("the key's use")
        guard let action = Action(rawValue: byte) else { throw .malformed("unknown key use \(byte)") }
        let entry = try reader.string("the entry of the key's use", limit: AgentProtocol.maxPathLength)
        guard !entry.isEmpty else { throw .malformed("the entry of the key's use is empty") }
        return AgentKeyUse(action: action, entry: entry)
    }
}
