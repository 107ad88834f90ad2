import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

extension CLI.Running {
    /// Kills the process with SIGKILL if it still runs (by its pid, never by name) and reaps it.
    /// A process that ended already is left alone: `finish` may only be called once.
    func kill() {
        guard isRunning else { return }
        Glibc.kill(pid, SIGKILL)
        _ = finish()
    }
}

/// Helpers of the agent's CLI tests: every agent a test starts is stopped, by its pid, on the way out;
/// every wait is bounded.
extension CLI {
    /// `agent status` failed (e.g. an agent killed mid-answer): thrown, never a trap, since
    /// `agentPID` polls it while an agent dies.
    struct AgentStatusFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// `vaultfile agent status --json` as a dictionary.
    func agentStatus(extra: [String: String] = [:]) throws -> [String: Any] {
        let result = try run(["agent", "status", "--json"], extra: extra)
        guard result.status == 0, let status = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any] else {
            throw AgentStatusFailed(description: "agent status exited \(result.status): \(result.stderr)")
        }
        return status
    }

    /// The running agent's pid, or nil.
    func agentPID(extra: [String: String] = [:]) -> Int32? {
        guard let status = try? agentStatus(extra: extra), status["running"] as? Bool == true else { return nil }
        return (status["pid"] as? Int).map { Int32($0) }
    }

    /// Kills the agent of this test's socket, if one runs (SIGKILL by pid, after asking it to stop).
    func stopAgent(extra: [String: String] = [:]) {
        let pid = agentPID(extra: extra)
        _ = try? run(["agent", "stop"], extra: extra)
        if let pid, kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    /// Waits at most `seconds` for `condition`; returns whether it became true.
    @discardableResult
    static func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if try condition() { return true }
            usleep(20_000)
        } while Date() < deadline
        return try condition()
    }

    /// Whether a Unix socket file exists at `path`.
    static func socketExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    /// A raw client (python3) that sends `mode`'s bytes to the socket and prints how many bytes came
    /// back and the text of the answer: `status`, `garbage`, `oversized`, `truncated`, `version`,
    /// `old-status` and `old-stop` (release 0.2's requests, protocol version 1), or `silent` (connects,
    /// sends nothing). A connection the agent closes counts as no bytes.
    func writeRawClient() throws -> String {
        try write("raw-client.py", Array("""
            import socket, struct, sys, time
            path, mode = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(15)
            frames = {
                'status': struct.pack('<I', 2) + b'\\x03\\x05',
                'garbage': struct.pack('<I', 5) + b'\\x03\\x09abc',
                'oversized': struct.pack('<I', 0xFFFFFFFF) + b'\\x03\\x05',
                'truncated': struct.pack('<I', 100) + b'\\x03\\x02',
                'version': struct.pack('<I', 2) + b'\\x07\\x05',
                'old-status': struct.pack('<I', 2) + b'\\x01\\x05',
                'old-stop': struct.pack('<I', 2) + b'\\x01\\x06',
            }
            data = b''
            try:
                if mode == 'silent':
                    time.sleep(float(sys.argv[3]))
                else:
                    s.sendall(frames[mode])
                    if mode == 'truncated':
                        s.shutdown(socket.SHUT_WR)
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                print('timeout')
            except (BrokenPipeError, ConnectionResetError):
                pass
            print(len(data), data[8:].decode('utf-8', 'replace') if len(data) > 8 else '')

            """.utf8))
        return path("raw-client.py")
    }

    /// The python3 the raw client runs on, or nil (then the tests that need it are skipped).
    static let python: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : nil
}
