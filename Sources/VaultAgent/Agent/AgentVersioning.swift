import SecureMemory

// MARK: - Releases that meet

/// What stays the same in every version of the agent protocol, so that releases can tell each
/// other apart and any can stop any (docs/AGENT.md, "Versions"). A running agent outlives an
/// upgrade of the binary, so a client and an agent of two releases do meet.
///
/// - Every body starts with its version byte; a client and an agent talk only in the same version.
/// - An agent answers a request of another version with `failed`: in version 1's layout to a
///   version-1 client (release 0.2 shows the text), in its own version to any other. A client that
///   reads an answer of another version stops there: it never falls back silently to the password.
/// - `stop` is `VV 06` and its answer `VV 00` in every version; an agent from version 2 on takes a
///   stop of any version and answers in that version. A client whose stop meets an agent of another
///   version sends it again in the agent's version (the version-1 agent takes only its own).
public enum AgentVersioning {
    /// The first version that follows these rules; version 1 (release 0.2) takes only its own frames.
    public static let firstNegotiating: UInt8 = 2

    /// The version a body says it is in: its first byte; nil for an empty body.
    public static func version(of body: UnsafeRawBufferPointer) -> UInt8? {
        body.first
    }

    /// The version of a body that is a `stop` request of any version, else nil.
    public static func stopVersion(of body: UnsafeRawBufferPointer) -> UInt8? {
        body.count == 2 && body[1] == stopType ? body[0] : nil
    }

    /// Whether a body is the `done` answer of any version.
    public static func isDone(_ body: UnsafeRawBufferPointer) -> Bool {
        body.count == 2 && body[1] == doneType
    }

    /// The frame of a `stop` request in `version`.
    public static func stopFrame(version: UInt8) -> SecureBytes {
        SecureBytes(copying: [2, 0, 0, 0, version, stopType])
    }

    /// The frame of a `done` answer in `version`.
    public static func doneFrame(version: UInt8) -> SecureBytes {
        SecureBytes(copying: [2, 0, 0, 0, version, doneType])
    }

    /// The answer to a request of `requestVersion`, another version than this build's: `failed`,
    /// in version 1's layout for a version-1 client (the text then reaches its user), else in this
    /// build's version (whose first byte tells a later client it met another release).
    public static func otherVersionAnswer(requestVersion: UInt8) -> SecureBytes {
        guard requestVersion == 1 else {
            return AgentResponse.failed(AgentProtocolError.unsupportedVersion(requestVersion).description).frame()
        }
        // Version 1's `failed`: the version, type 5, a 16-bit length and the text.
        let text = Array(("this agent is from another release (it speaks agent protocol \(AgentProtocol.version), this vaultfile 1): "
            + "run 'vaultfile agent stop', then unlock again").utf8)
        let body: [UInt8] = [1, 5, UInt8(text.count & 0xFF), UInt8(text.count >> 8)] + text
        return SecureBytes(copying: [UInt8(body.count & 0xFF), UInt8(body.count >> 8), 0, 0] + body)
    }

    private static let stopType: UInt8 = 6
    private static let doneType: UInt8 = 0
}
