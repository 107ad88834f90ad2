import SecureMemory

// MARK: - The framing of the age-plugin protocol

/// The bounds of one phase of the age-plugin protocol (C2SP age-plugin.md), checked while the
/// bytes arrive, before anything is kept: a hostile peer (a client feeding the plugin, or a plugin
/// answering a client) cannot make either side hold more than this.
public struct AgePluginLimits: Sendable, Equatable {
    /// The most stanzas (commands, grease included) one phase may send.
    public var maxStanzas: Int
    /// The most bytes one phase may send, every line counted with its LF.
    public var maxPhaseBytes: Int
    /// The longest line, without its LF: the `-> ` line of a stanza (an `mlkem768x25519` stanza's
    /// 1,494-column share fits), and any body line.
    public var maxLineLength: Int
    /// The most decoded bytes in one stanza's body.
    public var maxBodyLength: Int

    /// Limits of a phase.
    public init(maxStanzas: Int, maxPhaseBytes: Int, maxLineLength: Int, maxBodyLength: Int) {
        self.maxStanzas = maxStanzas
        self.maxPhaseBytes = maxPhaseBytes
        self.maxLineLength = maxLineLength
        self.maxBodyLength = maxBodyLength
    }

    /// What vaultfile's plugin accepts from a client in one phase: 64 stanzas and 1 MiB (real
    /// files carry a few stanzas; age sends one `recipient-stanza` per stanza of each file).
    public static let plugin = AgePluginLimits(maxStanzas: 64, maxPhaseBytes: 1 << 20, maxLineLength: 4096, maxBodyLength: 64 * 1024)
}

/// Why a conversation of the age-plugin protocol stopped. Messages name what was wrong, never a
/// key or a secret the peer sent.
public enum AgePluginError: CategorizedError, Equatable {
    /// The bytes break the stanza framing (the message says how).
    case malformed(String)
    /// A phase passed one of its limits (the message names it).
    case overLimit(String)
    /// A command that the state machine does not allow at that point, or with the wrong shape.
    case unexpected(String)
    /// The peer closed its side in the middle of a phase.
    case closed
    /// The peer sent nothing for too long (`seconds`).
    case timedOut(seconds: Int)

    public var description: String {
        switch self {
        case .malformed(let why): return "the age-plugin message is malformed: \(why)"
        case .overLimit(let why): return "the age-plugin conversation is over a limit: \(why)"
        case .unexpected(let why): return "unexpected age-plugin message: \(why)"
        case .closed: return "the other side closed the age-plugin conversation in the middle of a phase"
        case .timedOut(let seconds): return "the other side of the age-plugin conversation sent nothing for \(seconds) s"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .malformed, .unexpected, .closed: return .invalidInput
        case .overLimit: return .overLimit
        case .timedOut: return .io
        }
    }
}

// MARK: - Reading stanzas

/// Cuts stanzas out of the bytes of one direction of the protocol, as they arrive.
///
/// The grammar is the age v1 header's (age.md): `-> ` and 1 or more arguments of printable ASCII
/// (VCHAR) separated by one space, LF-ended; then the body as canonical unpadded base64 in lines of
/// 64 columns, ended by a shorter line (an empty one when the body fills whole lines or is empty).
/// Bytes are fed with `feed`; `next` returns a stanza once all of it is in, nil while more is needed.
/// Every limit of `AgePluginLimits` is checked on the bytes as they come, so a line without end or
/// a body without end fails at its limit, not when memory runs out.
public struct AgePluginStanzaReader: Sendable {
    /// The bounds of each phase.
    public let limits: AgePluginLimits
    /// Bytes received and not yet cut into stanzas.
    private var pending: [UInt8] = []
    /// Bytes and stanzas of the phase so far.
    private(set) public var phaseBytes = 0
    /// Stanzas returned in this phase.
    private(set) public var phaseStanzas = 0

    /// A reader with `limits`.
    public init(limits: AgePluginLimits = .plugin) { self.limits = limits }

    /// Starts the count of a new phase (the bytes already received count toward it).
    public mutating func startPhase() {
        phaseBytes = pending.count
        phaseStanzas = 0
    }

    /// Whether bytes are waiting that do not yet make a whole stanza.
    public var hasPartialStanza: Bool { !pending.isEmpty }

    /// Takes `bytes` received from the peer.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(AgePluginError) {
        phaseBytes += bytes.count
        guard phaseBytes <= limits.maxPhaseBytes else { throw .overLimit("a phase sent more than \(limits.maxPhaseBytes) bytes") }
        pending.append(contentsOf: bytes)
    }

    /// The next whole stanza, or nil when more bytes are needed.
    public mutating func next() throws(AgePluginError) -> AgeStanza? {
        var lines: [Range<Int>] = []
        var from = 0
        // The argument line, checked as soon as it is in; then body lines until a short one.
        while true {
            guard let end = try line(from: from) else { return nil }
            let range = from..<end
            lines.append(range)
            from = end + 1
            if lines.count == 1 {
                try checkArgumentLine(pending[range])
                continue
            }
            guard range.count <= AgeHeader.columns else { throw .malformed("a body line is longer than \(AgeHeader.columns) columns") }
            if range.count < AgeHeader.columns { break }
            guard (lines.count - 1) * 48 <= limits.maxBodyLength else {
                throw .overLimit("a stanza body is longer than \(limits.maxBodyLength) bytes")
            }
        }
        let stanza = try decode(lines)
        phaseStanzas += 1
        guard phaseStanzas <= limits.maxStanzas else { throw .overLimit("a phase sent more than \(limits.maxStanzas) stanzas") }
        pending.removeFirst(from)
        return stanza
    }

    /// The index of the LF ending the line that starts at `start`, or nil when it has not arrived;
    /// throws when the line is already longer than the limit.
    private func line(from start: Int) throws(AgePluginError) -> Int? {
        guard let end = pending[start...].firstIndex(of: 0x0A) else {
            guard pending.count - start <= limits.maxLineLength else { throw .overLimit("a line is longer than \(limits.maxLineLength) bytes") }
            return nil
        }
        guard end - start <= limits.maxLineLength else { throw .overLimit("a line is longer than \(limits.maxLineLength) bytes") }
        return end
    }

    /// Checks the `-> ARG…` line: body lines are only looked at after it.
    private func checkArgumentLine(_ line: ArraySlice<UInt8>) throws(AgePluginError) {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].elementsEqual("->".utf8) else {
            throw .malformed("a stanza starts with '-> ' and at least one argument")
        }
        guard parts.dropFirst().allSatisfy({ AgeStanza.isValidArgument($0) }) else {
            throw .malformed("a stanza argument is empty or holds a character other than printable ASCII")
        }
    }

    /// The stanza of the argument line and body lines at `lines` of `pending`.
    private func decode(_ lines: [Range<Int>]) throws(AgePluginError) -> AgeStanza {
        let parts = pending[lines[0]].split(separator: 0x20).dropFirst().map { String(decoding: $0, as: UTF8.self) }
        var body: [UInt8] = []
        for range in lines.dropFirst() {
            guard let decoded = AgeBase64.decodeUnpadded(pending[range]) else {
                throw .malformed("a body line is not canonical unpadded base64")
            }
            body += decoded
        }
        return AgeStanza(type: parts[0], arguments: Array(parts.dropFirst()), body: body)
    }

    /// Wipes what is buffered (a body may carry a file key or a secret).
    public mutating func wipeBuffer() {
        wipe(&pending)
    }
}

// MARK: - Writing stanzas

extension AgeStanza {
    /// The stanza as the protocol writes it: `-> TYPE ARG…`, then the body in lines of 64 columns
    /// ended by a shorter (possibly empty) line. Arguments must be valid (checked: a caller's bug
    /// must not put a space or a line feed on the wire).
    public func pluginMessage() -> [UInt8] {
        precondition(([type] + arguments).allSatisfy { AgeStanza.isValidArgument($0.utf8) }, "a stanza argument is 1 or more VCHARs")
        return encoded()
    }

    /// A message with no argument after its command and an empty body: `-> done`, `-> ok`.
    public static func command(_ name: String, _ arguments: String...) -> AgeStanza {
        AgeStanza(type: name, arguments: arguments, body: [])
    }
}
