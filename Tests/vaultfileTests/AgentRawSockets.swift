import Foundation
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - A client of the agent made by hand

/// One connection to the agent's socket whose bytes the test writes itself, with the timing it
/// chooses: a forged request, a client that dribbles its request, one that stays silent. Every
/// wait is bounded; the descriptor is closed when the value goes.
final class RawAgentConnection {
    /// What the agent did within a wait.
    enum Outcome: Equatable {
        /// It sent these bytes, then closed the connection.
        case answered([UInt8])
        /// It closed the connection without a byte.
        case closed
        /// The connection is still open at the end of the wait (bytes read so far, if any).
        case open([UInt8])
    }

    private let fd: Int32

    /// Connects to the socket at `path` (fails the test when nothing listens there).
    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8.prefix(107))) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
    }

    deinit { close(fd) }

    /// Sends `bytes`; false when the agent closed the connection already.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) == $0.count }
    }

    /// Reads for at most `seconds`: whatever the agent sends, until it closes or the time is up.
    func wait(_ seconds: Double) -> Outcome {
        let deadline = Self.now() + seconds
        var received: [UInt8] = []
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { return .open(received) }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32((left * 1000).rounded(.up))) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                received += buffer.prefix(count)
            } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                return received.isEmpty ? .closed : .answered(received)
            }
        }
    }

    /// Seconds on CLOCK_MONOTONIC.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

// MARK: - An agent of another release

/// A stand-in for an agent of another release (protocol `version`), as release 0.2's agent
/// behaves: it answers a request of another version with `failed` in its own version, and stops
/// (answering `done`, removing its socket) on a stop in its own version, or in any version when it
/// is newer than this build. It records every request body it read. Stopped by `stop()` otherwise.
final class FakeAgent: @unchecked Sendable {
    // @unchecked: `received` and `running` are guarded by `lock`; the descriptor is the thread's.
    private let lock = NSLock()
    private var received: [[UInt8]] = []
    private var running = true
    private let listener: Int32
    private let path: String
    private let version: UInt8

    /// Listens at `path` (which must not exist) as an agent speaking protocol `version`.
    init(path: String, version: UInt8) throws {
        self.path = path
        self.version = version
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8.prefix(107))) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// The request bodies read so far.
    var requests: [[UInt8]] { lock.withLock { received } }

    /// Whether it still listens.
    var isRunning: Bool { lock.withLock { running } }

    /// Stops listening (at the next poll, within 0.1 s) and removes the socket.
    func stop() { lock.withLock { running = false } }

    private func serve() {
        while isRunning {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let body = Self.readFrame(client) {
                lock.withLock { received.append(body) }
                let answer = answer(to: body)
                _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if answer.count == 6 && answer[5] == 0 { stop() }
            }
            close(client)
        }
        close(listener)
        unlink(path)
    }

    /// `done` to a stop it takes, else `failed` naming the versions (release 0.2's own words).
    private func answer(to body: [UInt8]) -> [UInt8] {
        if body.count == 2 && body[1] == 6 && (body[0] == version || version > AgentProtocol.version) {
            return [2, 0, 0, 0, body[0], 0]
        }
        let text = Array("protocol version \(body.first ?? 0) is not supported (this vaultfile speaks version \(version))".utf8)
        let reply = [version, 5, UInt8(text.count & 0xFF), UInt8(text.count >> 8)] + text
        return [UInt8(reply.count & 0xFF), UInt8(reply.count >> 8), 0, 0] + reply
    }

    private static func readFrame(_ fd: Int32) -> [UInt8]? {
        guard let prefix = read(fd, count: 4) else { return nil }
        let length = Int(prefix[0]) | Int(prefix[1]) << 8 | Int(prefix[2]) << 16 | Int(prefix[3]) << 24
        return length <= 1 << 20 ? read(fd, count: length) : nil
    }

    private static func read(_ fd: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, count - filled, 0) }
            guard got > 0 else { return nil }
            filled += got
        }
        return bytes
    }
}
