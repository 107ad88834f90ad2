import SecureMemory

// MARK: - The seam: a running plugin and the user

/// The state machines of the C2SP age-plugin protocol, as a client plays them.
public enum AgePluginStateMachine: String, Sendable {
    /// Wrapping file keys (`--age-plugin=recipient-v1`).
    case recipientV1 = "recipient-v1"
    /// Unwrapping file keys (`--age-plugin=identity-v1`).
    case identityV1 = "identity-v1"
}

/// One running plugin as the client's state machine sees it. The executable implements it over
/// the plugin's pipes (the library never starts a process); tests may implement it in memory.
public protocol AgePluginConnection: AnyObject {
    /// Writes one phase-1 message (waiting at most for what is left of the phase's deadline).
    func send(_ bytes: [UInt8]) throws(AgePluginClientError)
    /// The plugin's next stanza, cut and bounded by an `AgePluginStanzaReader` with
    /// `AgePluginClient.limits`, within what is left of the phase's deadline.
    func receive(phase: String) throws(AgePluginClientError) -> AgeStanza
    /// Ends the plugin: closes its pipes, waits briefly, kills it if needed, and reaps it.
    func close()
}

/// The user, as a plugin may ask for them (a PIN, a touch, a choice). Every answer comes from
/// the terminal only; without one each method returns nil (the client answers `fail`).
public protocol AgePluginUserInterface: Sendable {
    /// Shows `message` from `plugin`; false when it could not be shown.
    func display(plugin: String, message: String) -> Bool
    /// Asks for a value (`secret`: without echo) with `prompt`; nil when it could not be asked.
    func request(plugin: String, prompt: String, secret: Bool) -> SecureBytes?
    /// Asks to choose `yes` or `no` (nil: only `yes` offered); nil when it could not be asked.
    func confirm(plugin: String, prompt: String, yes: String, no: String?) -> Bool?
}

/// Starts plugins: the executable's (PATH rules, environment, deadlines), handed to the library.
public protocol AgePluginLauncher: Sendable {
    /// `age-plugin-NAME --age-plugin=STATE_MACHINE`, started.
    func start(plugin name: String, stateMachine: AgePluginStateMachine) throws(AgePluginClientError) -> any AgePluginConnection
    /// Who answers the plugin's requests.
    var userInterface: any AgePluginUserInterface { get }
    /// Before a rotation runs any plugin: finds every one of `plugins`, says which binaries will
    /// run, and throws `notFound` for the first one missing (so nothing is half done).
    func announce(plugins: [String]) throws(AgePluginClientError)
}

// MARK: - The client's state machines

/// recipient-v1 and identity-v1 as a client runs them, every message of the spec, with
/// vaultfile's limits: at most `maxStanzasPerFile` stanzas of at most `maxStanzaBody` bytes for a
/// file key; `file-key` exactly 16 bytes, once, for a file index that was sent; a reply of any
/// other shape stops the run. Unknown commands in the plugin's phase are answered `unsupported`.
public enum AgePluginClient {
    /// The most stanzas a plugin may return for one file key.
    public static let maxStanzasPerFile = 8
    /// The largest stanza body a plugin may return (4 KiB).
    public static let maxStanzaBody = 4_096
    /// The bounds of the plugin's phase: messages of at most 64 KiB, 256 of them, 1 MiB in all.
    public static let limits = AgePluginLimits(maxStanzas: 256, maxPhaseBytes: 1 << 20, maxLineLength: 4_096, maxBodyLength: 64 * 1024)
    /// The phases' names in messages.
    static let phaseOne = "phase 1", phaseTwo = "phase 2"

    /// What a recipient-v1 run returned: the stanzas of each file key, and the plugin's labels
    /// (nil when it sent none).
    public struct Wrapped: Sendable {
        /// The stanzas, by file index.
        public let stanzas: [[AgeStanza]]
        /// The labels the plugin sent with `labels`, or nil.
        public let labels: [String]?
    }

    // MARK: recipient-v1

    /// Runs `age-plugin-NAME --age-plugin=recipient-v1` to wrap each of `fileKeys` to every
    /// recipient (and identity, for plugins that encrypt to their own identities).
    public static func wrap(_ fileKeys: [SecureBytes], plugin: String, recipients: [String], identities: [String] = [],
                            launcher: any AgePluginLauncher) throws(AgePluginClientError) -> Wrapped {
        guard AgePluginName.isValid(plugin) else { throw .invalidName }
        let connection = try launcher.start(plugin: plugin, stateMachine: .recipientV1)
        defer { connection.close() }
        var phase = recipientMessages(fileKeys, recipients: recipients, identities: identities)
        defer { wipe(&phase) }
        try connection.send(phase)
        let wrappers = recipients.count + identities.count
        var stanzas = [[AgeStanza]](repeating: [], count: fileKeys.count)
        var labels: [String]?
        let ui = launcher.userInterface
        while true {
            let message = try connection.receive(phase: phaseTwo)
            switch message.type {
            case "recipient-stanza":
                guard message.arguments.count >= 2, let index = fileIndex(message.arguments[0], below: fileKeys.count) else {
                    throw .protocolViolation(plugin: plugin, why: "'recipient-stanza' names no file index that was sent")
                }
                guard stanzas[index].count < min(maxStanzasPerFile, wrappers) else {
                    throw .protocolViolation(plugin: plugin, why: "more than \(min(maxStanzasPerFile, wrappers)) stanzas for one file key")
                }
                guard message.body.count <= maxStanzaBody else {
                    throw .protocolViolation(plugin: plugin, why: "a stanza body of \(message.body.count) bytes (at most \(maxStanzaBody))")
                }
                stanzas[index].append(AgeStanza(type: message.arguments[1], arguments: Array(message.arguments.dropFirst(2)), body: message.body))
                try answer(.ok(arguments: [], body: []), on: connection)
            case "labels":
                guard labels == nil else { throw .protocolViolation(plugin: plugin, why: "'labels' sent twice") }
                guard message.body.isEmpty else { throw .protocolViolation(plugin: plugin, why: "'labels' with a body") }
                labels = message.arguments
                try answer(.ok(arguments: [], body: []), on: connection)
            case "error":
                try? answer(.ok(arguments: [], body: []), on: connection)
                throw reported(message, plugin: plugin)
            case "done":
                guard message.arguments.isEmpty, message.body.isEmpty else { throw .protocolViolation(plugin: plugin, why: "'done' with arguments or a body") }
                guard stanzas.allSatisfy({ !$0.isEmpty }) else { throw .noStanza(plugin: plugin) }
                return Wrapped(stanzas: stanzas, labels: labels)
            default:
                try interact(message, plugin: plugin, ui: ui, connection: connection)
            }
        }
    }

    /// recipient-v1's phase 1: each recipient and identity, grease, each file key, `extension-labels`, `done`.
    static func recipientMessages(_ fileKeys: [SecureBytes], recipients: [String], identities: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for recipient in recipients { out += AgeStanza.command("add-recipient", recipient).pluginMessage() }
        for identity in identities { out += AgeStanza.command("add-identity", identity).pluginMessage() }
        out += grease()
        for key in fileKeys {
            var body = key.withUnsafeBytes { Array($0) }
            out += AgeStanza(type: "wrap-file-key", arguments: [], body: body).pluginMessage()
            wipe(&body)
        }
        out += AgeStanza.command("extension-labels").pluginMessage()
        return out + AgeStanza.command("done").pluginMessage()
    }

    // MARK: identity-v1

    /// Runs `age-plugin-NAME --age-plugin=identity-v1` with `identities` over the stanzas of each
    /// file; returns the file keys the plugin unwrapped, by file index (absent: not unwrapped).
    public static func unwrap(files: [[AgeStanza]], plugin: String, identities: [String],
                              launcher: any AgePluginLauncher) throws(AgePluginClientError) -> [Int: SecureBytes] {
        guard AgePluginName.isValid(plugin) else { throw .invalidName }
        let connection = try launcher.start(plugin: plugin, stateMachine: .identityV1)
        defer { connection.close() }
        var phase = AgePluginIdentityRequest.clientMessages(identities: identities, files: files)
        phase.insert(contentsOf: grease(), at: 0)
        defer { wipe(&phase) }
        try connection.send(phase)
        var keys: [Int: SecureBytes] = [:]
        let ui = launcher.userInterface
        while true {
            let message = try connection.receive(phase: phaseTwo)
            switch message.type {
            case "file-key":
                guard message.arguments.count == 1, let index = fileIndex(message.arguments[0], below: files.count) else {
                    throw .protocolViolation(plugin: plugin, why: "'file-key' names no file index that was sent")
                }
                guard keys[index] == nil else { throw .protocolViolation(plugin: plugin, why: "a second 'file-key' for file \(index)") }
                guard message.body.count == AgeCrypto.fileKeyLength else {
                    throw .protocolViolation(plugin: plugin, why: "a file key of \(message.body.count) bytes, not \(AgeCrypto.fileKeyLength)")
                }
                keys[index] = SecureBytes(copying: message.body)
                try answer(.ok(arguments: [], body: []), on: connection)
            case "error":
                try? answer(.ok(arguments: [], body: []), on: connection)
                throw reported(message, plugin: plugin)
            case "done":
                guard message.arguments.isEmpty, message.body.isEmpty else { throw .protocolViolation(plugin: plugin, why: "'done' with arguments or a body") }
                return keys
            default:
                try interact(message, plugin: plugin, ui: ui, connection: connection)
            }
        }
    }

    // MARK: Both

    /// `msg`, `confirm`, `request-public`, `request-secret`, answered through `ui`; anything else `unsupported`.
    static func interact(_ message: AgeStanza, plugin: String, ui: any AgePluginUserInterface,
                         connection: any AgePluginConnection) throws(AgePluginClientError) {
        switch message.type {
        case "msg":
            try answer(ui.display(plugin: plugin, message: text(message.body)) ? .ok(arguments: [], body: []) : .fail, on: connection)
        case "request-public", "request-secret":
            guard let value = ui.request(plugin: plugin, prompt: text(message.body), secret: message.type == "request-secret") else {
                return try answer(.fail, on: connection)
            }
            var body = value.withUnsafeBytes { Array($0) }
            defer { wipe(&body) }
            try answer(.ok(arguments: [], body: body), on: connection)
        case "confirm":
            guard (1...2).contains(message.arguments.count),
                  let yes = AgeBase64.decodeUnpadded(message.arguments[0].utf8Slice),
                  let no = message.arguments.count == 2 ? AgeBase64.decodeUnpadded(message.arguments[1].utf8Slice) : [] else {
                throw .protocolViolation(plugin: plugin, why: "'confirm' takes one or two base64 choices")
            }
            switch ui.confirm(plugin: plugin, prompt: text(message.body), yes: text(yes), no: message.arguments.count == 2 ? text(no) : nil) {
            case true?: try answer(.ok(arguments: ["yes"], body: []), on: connection)
            case false?: try answer(.ok(arguments: ["no"], body: []), on: connection)
            case nil: try answer(.fail, on: connection)
            }
        default:
            try answer(.unsupported, on: connection)
        }
    }

    /// Writes the client's answer to a command of the plugin's phase.
    static func answer(_ answer: AgePluginAnswer, on connection: any AgePluginConnection) throws(AgePluginClientError) {
        let stanza: AgeStanza
        switch answer {
        case .ok(let arguments, let body): stanza = AgeStanza(type: "ok", arguments: arguments, body: body)
        case .fail: stanza = .command("fail")
        case .unsupported: stanza = .command("unsupported")
        }
        var bytes = stanza.pluginMessage()
        defer { wipe(&bytes) }
        try connection.send(bytes)
    }

    /// The error an `error` stanza reports.
    static func reported(_ message: AgeStanza, plugin: String) -> AgePluginClientError {
        let kind = message.arguments.first.map { ["recipient", "identity", "stanza", "internal"].contains($0) ? $0 : "unknown" } ?? "unknown"
        return .pluginReported(plugin: plugin, kind: kind, message: AgePluginClientError.printable(message.body))
    }

    /// A canonical decimal file index below `count`.
    static func fileIndex(_ text: String, below count: Int) -> Int? {
        guard let index = AgePluginIdentityRequest.fileIndex(text), index < count else { return nil }
        return index
    }

    /// A plugin's text (a prompt, a message) for the terminal: control characters and anything
    /// but printable ASCII and UTF-8 letters become `?`, at most 512 bytes.
    static func text(_ bytes: [UInt8]) -> String {
        let decoded = String(decoding: bytes.prefix(512), as: UTF8.self)
        return String(decoded.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) ? "?" : Character($0) })
    }

    /// One grease stanza, as age sends it: a random command the plugin must ignore.
    static func grease() -> [UInt8] {
        let tag = AgeCrypto.randomBytes(count: 4).map { String($0, radix: 16) }.joined()
        return AgeStanza.command("grease-" + tag).pluginMessage()
    }
}
