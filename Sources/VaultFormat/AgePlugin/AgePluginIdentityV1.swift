import SecureMemory

// MARK: - identity-v1, phase 1: what the client sends

/// What an age client asks of an `identity-v1` plugin in phase 1: the identities to try and the
/// stanzas of each file, collected from its messages in order (C2SP age-plugin.md, "Unwrapping
/// with identity-v1").
///
/// Commands of other names (grease, later extensions) are ignored, as the spec requires of a
/// uni-directional phase; the two it defines must have their exact shape, else the conversation
/// stops (a client that sends them wrong is not one to unwrap keys for).
public struct AgePluginIdentityRequest: Sendable {
    /// The identities of `add-identity`, in order: their index is the one `error identity` names.
    public private(set) var identities: [String] = []
    /// The stanzas of each file, by file index (from 0, in order).
    public private(set) var files: [[AgeStanza]] = []
    /// Whether `done` ended the phase.
    public private(set) var isComplete = false
    /// The largest file index accepted: age sends one file at a time; a batch of thousands is not age.
    public static let maxFileIndex = 1023

    /// An empty request.
    public init() {}

    /// Takes the next message of phase 1; true once it was `done`.
    public mutating func take(_ message: AgeStanza) throws(AgePluginError) -> Bool {
        guard !isComplete else { throw .unexpected("a message after phase 1's 'done'") }
        switch message.type {
        case "add-identity":
            guard message.arguments.count == 1, message.body.isEmpty else {
                throw .unexpected("'add-identity' takes one identity and no body")
            }
            identities.append(message.arguments[0])
        case "recipient-stanza":
            guard message.arguments.count >= 2, let index = Self.fileIndex(message.arguments[0]) else {
                throw .unexpected("'recipient-stanza' takes a file index (a decimal number) and a stanza type")
            }
            // File indices start at 0 and grow by one: a stanza of an earlier file after a later one
            // (or a gap) is not what the spec allows.
            guard index == files.count - 1 || index == files.count else {
                throw .unexpected("'recipient-stanza' file index \(index) after file \(files.count - 1): indices are ordered and start at 0")
            }
            if index == files.count { files.append([]) }
            files[index].append(AgeStanza(type: message.arguments[1], arguments: Array(message.arguments.dropFirst(2)), body: message.body))
        case "done":
            guard message.arguments.isEmpty, message.body.isEmpty else { throw .unexpected("'done' takes no argument and no body") }
            isComplete = true
        default:
            break
        }
        return isComplete
    }

    /// A canonical decimal number (no sign, no leading zero) up to `maxFileIndex`.
    static func fileIndex(_ text: String) -> Int? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ (0x30...0x39).contains($0) }),
              digits.count == 1 || digits[0] != 0x30, let value = Int(text), value <= maxFileIndex else { return nil }
        return value
    }

    /// Phase 1 as a client writes it: each identity, each file's stanzas, `done` (a later plugin
    /// client, and the tests that play age's part).
    public static func clientMessages(identities: [String], files: [[AgeStanza]]) -> [UInt8] {
        var out: [UInt8] = []
        for identity in identities { out += AgeStanza.command("add-identity", identity).pluginMessage() }
        for (index, stanzas) in files.enumerated() {
            for stanza in stanzas {
                out += AgeStanza(type: "recipient-stanza", arguments: [String(index), stanza.type] + stanza.arguments, body: stanza.body).pluginMessage()
            }
        }
        return out + AgeStanza.command("done").pluginMessage()
    }
}

// MARK: - identity-v1, phase 2: what the plugin sends, and the answers

/// A command of the plugin in phase 2 of `identity-v1`, as written on the wire.
public enum AgePluginIdentityCommand: Sendable {
    /// `msg`: a message to show the user.
    case message(String)
    /// `file-key FILE_INDEX`: the 16-byte file key of a file.
    case fileKey(index: Int, key: SecureBytes)
    /// `error identity INDEX`: an identity is unusable.
    case identityError(index: Int, message: String)
    /// `error internal`: a failure that names neither an identity nor (on purpose) a stanza.
    case internalError(String)
    /// `done`: the end of phase 2.
    case done

    /// The bytes of the command. A `file-key`'s bytes carry the key: the caller wipes them once written.
    public func encoded() -> [UInt8] {
        switch self {
        case .message(let text): return AgeStanza(type: "msg", arguments: [], body: Array(text.utf8)).pluginMessage()
        case .fileKey(let index, let key):
            var body = key.withUnsafeBytes { Array($0) }
            defer { wipe(&body) }
            return AgeStanza(type: "file-key", arguments: [String(index)], body: body).pluginMessage()
        case .identityError(let index, let text):
            return AgeStanza(type: "error", arguments: ["identity", String(index)], body: Array(text.utf8)).pluginMessage()
        case .internalError(let text): return AgeStanza(type: "error", arguments: ["internal"], body: Array(text.utf8)).pluginMessage()
        case .done: return AgeStanza.command("done").pluginMessage()
        }
    }
}

/// The client's answer to a command of a bi-directional phase.
public enum AgePluginAnswer: Sendable, Equatable {
    /// `ok`, with its arguments (`yes`/`no` of a `confirm`) and body (a requested value).
    case ok(arguments: [String], body: [UInt8])
    /// `fail`: the client could not do it (no UI, the user declined).
    case fail
    /// `unsupported`: the client does not know the command.
    case unsupported

    /// The answer `message` is; grease is not allowed here: in a bi-directional phase the
    /// controlled side answers, and only with these.
    public init(_ message: AgeStanza) throws(AgePluginError) {
        switch message.type {
        case "ok": self = .ok(arguments: message.arguments, body: message.body)
        case "fail" where message.arguments.isEmpty: self = .fail
        case "unsupported" where message.arguments.isEmpty: self = .unsupported
        default: throw .unexpected("an answer in phase 2 is 'ok', 'fail' or 'unsupported', not '\(Self.printable(message.type))'")
        }
    }

    /// `text` cut to 32 printable characters, for a message.
    static func printable(_ text: String) -> String { String(text.prefix(32)) }
}
