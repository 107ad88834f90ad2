import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Starting age plugins as a client

/// Starts `age-plugin-NAME` for the library's plugin client (`AgePluginClient`): the binary is
/// looked up only in the absolute folders of PATH (never `.`, an empty entry or a relative
/// folder: age's GHSA-32gq-x56h-299c), started through `Subprocess` (so it gets none of the
/// variables that unlock a vault: `VAULTFILE_PASSWORD*`, `VAULTFILE_KEYFILE`, `VAULTFILE_IDENTITY*`,
/// and no descriptor vaultfile opened), its waits bounded by a deadline per phase.
struct PluginLauncher: AgePluginLauncher {
    /// The default seconds a plugin may take per phase, counted only while vaultfile waits for it
    /// (not while the user answers a prompt): a touch of a hardware key fits.
    static let defaultDeadline = 120
    /// Set by the commands that must never start a plugin (textconv, the merge driver, the agent):
    /// what they are, for the refusal.
    nonisolated(unsafe) static var forbiddenIn: String?

    /// For the commands that never start a plugin named by a vault (`context` names them in the
    /// refusal): no launcher for keyslots, and every start refused.
    static func forbid(_ context: String) {
        forbiddenIn = context
        AgePluginSlots.launcher = nil
    }

    /// Seconds per phase: `VAULTFILE_PLUGIN_TIMEOUT` (1 to 3600) or the default.
    let deadline: Int
    let userInterface: any AgePluginUserInterface = PluginPrompts()

    /// A launcher with the deadline of the environment.
    init() {
        if let text = environment("VAULTFILE_PLUGIN_TIMEOUT"), let seconds = Int(text), (1...3600).contains(seconds) {
            deadline = seconds
        } else {
            deadline = Self.defaultDeadline
        }
    }

    func start(plugin name: String, stateMachine: AgePluginStateMachine) throws(AgePluginClientError) -> any AgePluginConnection {
        guard AgePluginName.isValid(name) else { throw .invalidName }
        if let context = Self.forbiddenIn { throw .notAllowed(plugin: name, context: context) }
        let path = try Self.find(name)
        let child: Subprocess.Child
        do {
            child = try Subprocess.start([path, "--age-plugin=" + stateMachine.rawValue], captureOutput: true, feedInput: true)
        } catch {
            throw .cannotStart(plugin: name, why: error.description)
        }
        return PluginConnection(plugin: name, child: child, deadline: deadline)
    }

    func announce(plugins: [String]) throws(AgePluginClientError) {
        var found: [String] = []
        for name in plugins {
            guard AgePluginName.isValid(name) else { throw .invalidName }
            if let context = Self.forbiddenIn { throw .notAllowed(plugin: name, context: context) }
            found.append(try Self.find(name))
        }
        Messages.note("the new file key is wrapped again through \(found.joined(separator: ", ")) (its keyslots' age plugins)")
    }

    /// The absolute folders of `path` (PATH), in order; relative and empty entries left out.
    static func searchFolders(_ path: String? = environment("PATH")) -> [String] {
        (path ?? "").split(separator: ":", omittingEmptySubsequences: false).map(String.init).filter { $0.hasPrefix("/") }
    }

    /// `age-plugin-NAME` in the first absolute folder of PATH that holds it as an executable regular file.
    static func find(_ name: String, path: String? = environment("PATH")) throws(AgePluginClientError) -> String {
        let folders = searchFolders(path)
        for folder in folders {
            let candidate = (folder.hasSuffix("/") ? folder : folder + "/") + AgePluginName.binary(name)
            var status = stat()
            if stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        throw .notFound(plugin: name, searched: folders)
    }
}

// MARK: - One running plugin

/// The pipes of one running plugin: phase-1 messages written without blocking past the deadline
/// (and without dying of SIGPIPE when the plugin is gone), its stanzas read through a bounded
/// `AgePluginStanzaReader`. The deadline of a phase is spent only while waiting on the plugin.
final class PluginConnection: AgePluginConnection {
    private let plugin: String
    private let pid: pid_t
    private var input: Int32
    private var output: Int32
    private var reader = AgePluginStanzaReader(limits: AgePluginClient.limits)
    private var remaining: Double
    private let deadline: Int
    private var phase = "phase 1"
    private var closed = false

    init(plugin: String, child: Subprocess.Child, deadline: Int) {
        self.plugin = plugin
        self.pid = child.pid
        self.input = child.input ?? -1
        self.output = child.output ?? -1
        self.remaining = Double(deadline)
        self.deadline = deadline
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
    }

    deinit { close() }

    func send(_ bytes: [UInt8]) throws(AgePluginClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = withoutSIGPIPE { bytes.withUnsafeBytes { write(input, $0.baseAddress! + offset, $0.count - offset) } }
            if written > 0 { offset += written; continue }
            let code = errno
            if written < 0 && code == EINTR { continue }
            guard written < 0 && (code == EAGAIN || code == EWOULDBLOCK) else { throw .exited(plugin: plugin, phase: phase) }
            try wait(for: input, events: Int16(POLLOUT))
        }
    }

    func receive(phase name: String) throws(AgePluginClientError) -> AgeStanza {
        if phase != name {
            phase = name
            reader.startPhase()
            remaining = Double(deadline)
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        defer { wipe(&buffer) }
        while true {
            do {
                if let stanza = try reader.next() { return stanza }
            } catch {
                throw .protocolViolation(plugin: plugin, why: Self.why(error))
            }
            try wait(for: output, events: Int16(POLLIN))
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .exited(plugin: plugin, phase: phase) }
            do {
                try reader.feed(buffer[0..<count])
            } catch {
                throw .protocolViolation(plugin: plugin, why: Self.why(error))
            }
        }
    }

    /// Closes both pipes, gives the plugin a moment to end, then kills it; always reaps it.
    func close() {
        guard !closed else { return }
        closed = true
        reader.wipeBuffer()
        if input >= 0 { Glibc.close(input); input = -1 }
        if output >= 0 { Glibc.close(output); output = -1 }
        var status: Int32 = 0
        for _ in 0..<20 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        kill(pid, SIGTERM)
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Waits until `fd` is ready for `events`, spending the phase's remaining time.
    private func wait(for fd: Int32, events: Int16) throws(AgePluginClientError) {
        while true {
            guard remaining > 0 else { throw .timedOut(plugin: plugin, phase: phase, seconds: deadline) }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let started = Self.now()
            let ready = poll(&descriptor, 1, Int32(min(remaining, 3600) * 1000))
            remaining -= Self.now() - started
            if ready < 0 && errno == EINTR { continue }
            if ready > 0 { return }
            if ready == 0 { remaining = 0 }
        }
    }

    /// Seconds on the monotonic clock.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The reader's refusal, in words.
    private static func why(_ error: AgePluginError) -> String {
        switch error {
        case .malformed(let text), .overLimit(let text), .unexpected(let text): return text
        case .closed: return "it closed its output"
        case .timedOut(let seconds): return "it sent nothing for \(seconds) s"
        }
    }
}
