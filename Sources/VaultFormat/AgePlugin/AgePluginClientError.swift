import SecureMemory

// MARK: - What stops a plugin run by vaultfile

/// Why running an age plugin as a client failed. Every message names the plugin; none quotes a
/// file key, a secret the user typed, an identity, or more than a short, printable cut of what the
/// plugin itself wrote.
public enum AgePluginClientError: CategorizedError, Equatable {
    /// The name is not `[A-Za-z0-9._+-]+` (so it is never looked up).
    case invalidName
    /// No `age-plugin-NAME` in any absolute folder of PATH (`searched`: the folders, in order).
    case notFound(plugin: String, searched: [String])
    /// This command never starts a plugin named by a vault (textconv, the merge driver, the agent).
    case notAllowed(plugin: String, context: String)
    /// The plugin could not be started (errno's text).
    case cannotStart(plugin: String, why: String)
    /// The plugin answered with an `error` stanza (its kind and a printable cut of its message).
    case pluginReported(plugin: String, kind: String, message: String)
    /// The plugin broke the protocol or one of vaultfile's limits (what it did).
    case protocolViolation(plugin: String, why: String)
    /// The plugin sent nothing for the rest of a phase's deadline.
    case timedOut(plugin: String, phase: String, seconds: Int)
    /// The plugin closed its output or ended in the middle of a phase.
    case exited(plugin: String, phase: String)
    /// The plugin wrapped nothing for a file key it was given.
    case noStanza(plugin: String)
    /// The plugin's labels say its stanza must be alone (or with stanzas of the same labels), and
    /// it is not (`others`: what it would be mixed with).
    case exclusive(plugin: String, others: String)

    public var description: String {
        switch self {
        case .invalidName: return "an age plugin name holds only A-Z, a-z, 0-9 and . _ + -"
        case .notFound(let plugin, let searched):
            let folders = searched.isEmpty ? "PATH has no absolute folder" : "searched \(searched.joined(separator: ":"))"
            return "the age plugin \(AgePluginName.binary(plugin)) is not installed (\(folders); relative and empty PATH entries are never searched)"
        case .notAllowed(let plugin, let context): return "\(context) never starts an age plugin (\(AgePluginName.binary(plugin)))"
        case .cannotStart(let plugin, let why): return "cannot start the age plugin \(AgePluginName.binary(plugin)): \(why)"
        case .pluginReported(let plugin, let kind, let message):
            return "the age plugin \(AgePluginName.binary(plugin)) reported an error (\(kind)): \(message)"
        case .protocolViolation(let plugin, let why): return "the age plugin \(AgePluginName.binary(plugin)) broke the age-plugin protocol: \(why)"
        case .timedOut(let plugin, let phase, let seconds):
            return "the age plugin \(AgePluginName.binary(plugin)) sent nothing for \(seconds) s during \(phase); it was stopped"
        case .exited(let plugin, let phase): return "the age plugin \(AgePluginName.binary(plugin)) ended in the middle of \(phase)"
        case .noStanza(let plugin): return "the age plugin \(AgePluginName.binary(plugin)) wrapped no stanza for the file key"
        case .exclusive(let plugin, let others):
            return "the age plugin \(AgePluginName.binary(plugin)) asks that its stanza not be mixed with others (labels), and it would be mixed with \(others)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .invalidName: return .invalidArgument
        case .notFound: return .notFound
        case .notAllowed, .exclusive: return .refused
        case .cannotStart, .timedOut, .exited: return .io
        case .pluginReported: return .refused
        case .protocolViolation, .noStanza: return .damaged
        }
    }

    /// A printable cut of text a plugin wrote: printable ASCII and spaces, at most 200 characters.
    static func printable(_ bytes: [UInt8]) -> String {
        let kept = bytes.prefix(200).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }
        return String(decoding: kept, as: UTF8.self) + (bytes.count > 200 ? "…" : "")
    }
}
