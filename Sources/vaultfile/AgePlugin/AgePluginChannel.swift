import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The plugin's two pipes

/// The plugin's side of the age-plugin conversation: stanzas read from standard input through a
/// bounded `AgePluginStanzaReader`, commands written to standard output. Every read waits at most
/// `deadline` seconds for the client's next bytes (`poll(2)`), so a client that stops talking ends
/// the plugin instead of holding it (and a key) forever.
struct AgePluginChannel {
    /// Seconds the client may stay silent while the plugin waits for it.
    static let deadline: Double = 30
    private var reader = AgePluginStanzaReader(limits: .plugin)
    private let input: Int32
    private let output: Int32

    /// The channel over `input` and `output` (standard input and output).
    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// Starts the count of a phase's limits.
    mutating func startPhase() { reader.startPhase() }

    /// The client's next stanza, waiting at most `deadline` seconds for each read.
    mutating func receive() throws(AgePluginError) -> AgeStanza {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        defer { wipe(&buffer) }
        while true {
            if let stanza = try reader.next() { return stanza }
            var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(Self.deadline * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw .timedOut(seconds: Int(Self.deadline)) }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .closed }
            try reader.feed(buffer[0..<count])
        }
    }

    /// The client's answer to a command of the plugin's phase.
    mutating func answer() throws(AgePluginError) -> AgePluginAnswer { try AgePluginAnswer(receive()) }

    /// Writes `command` and, unless it is `done`, reads the client's answer.
    @discardableResult
    mutating func send(_ command: AgePluginIdentityCommand) throws(AgePluginError) -> AgePluginAnswer? {
        var bytes = command.encoded()
        defer { wipe(&bytes) }
        guard Stream.write(bytes, to: output) else { throw .closed }
        if case .done = command { return nil }
        return try answer()
    }

    /// Wipes what the reader holds.
    mutating func close() { reader.wipeBuffer() }
}
