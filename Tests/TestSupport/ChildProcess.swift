import CTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its stdin fed and its stdout and stderr drained on
/// one thread of its own.
///
/// The tests run the binary about 1,800 times. Foundation's `Process` took about 33 ms of wall
/// time to start and reap even `/bin/true` here (under 2 ms of it CPU), and three threads per run
/// to feed and drain the pipes: most of the suite's time was spent waiting on it. This does the
/// same in well under a millisecond. The child starts as `Process` started it: signal mask empty,
/// every signal at its default action (the test runner ignores SIGPIPE; a child must not inherit
/// that), no descriptor but 0, 1 and 2, in `directory`, with exactly `environment`.
public final class ChildProcess: @unchecked Sendable {
    /// How a finished child ended.
    public enum Ending: Equatable, Sendable {
        /// It exited with this status.
        case exit(Int32)
        /// A signal ended it.
        case signal(Int32)
    }

    /// What a finished child produced.
    public struct Output: Sendable {
        /// How it ended.
        public let ending: Ending
        /// Everything it wrote to stdout.
        public let stdout: [UInt8]
        /// Everything it wrote to stderr.
        public let stderr: [UInt8]

        /// The exit status, or the signal's number when a signal ended it (as `Process.terminationStatus`).
        public var status: Int32 {
            switch ending {
            case .exit(let status), .signal(let status): status
            }
        }
    }

    /// A failure to start the child.
    public struct SpawnFailed: Error, CustomStringConvertible {
        /// What failed, with errno's text.
        public let description: String
    }

    /// The child's process id.
    public let pid: pid_t

    private let drained = DispatchSemaphore(value: 0)
    private var stdout: [UInt8] = []
    private var stderr: [UInt8] = []
    private var ending: Ending?

    /// Starts `executable` (an absolute path; PATH is not searched) with `arguments` (argv[1…])
    /// and `stdin` written to its standard input, then closed.
    public init(executable: String, arguments: [String], environment: [String: String], directory: String, stdin: [UInt8] = []) throws {
        _ = Self.ignoreSIGPIPEOnce
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe2(&input, O_CLOEXEC) == 0, pipe2(&output, O_CLOEXEC) == 0, pipe2(&errors, O_CLOEXEC) == 0 else {
            let text = String(cString: strerror(errno))
            for fd in input + output + errors where fd >= 0 { close(fd) }
            throw SpawnFailed(description: "pipe: \(text)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        posix_spawn_file_actions_addchdir_np(&actions, directory)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(input[0]); close(output[1]); close(errors[1])
        guard spawned == 0 else {
            close(input[1]); close(output[0]); close(errors[0])
            throw SpawnFailed(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        pid = child
        let (stdinFD, stdoutFD, stderrFD) = (input[1], output[0], errors[0])
        Thread { [self] in
            self.pump(stdin: stdin, into: stdinFD, stdout: stdoutFD, stderr: stderrFD)
            self.drained.signal()
        }.start()
    }

    /// Whether the child has not ended yet (it is not reaped: `finish` still reads its ending).
    public var isRunning: Bool {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return false }
        return info._sifields._sigchld.si_pid == 0
    }

    /// Whether process `pid` (any, not only a child of this one: a tool a child started) has ended:
    /// no such process, or a zombie no one has reaped yet.
    public static func hasEnded(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }

    /// Waits for the child to end and its pipes to close, and returns what it produced. Call once.
    public func finish() -> Output {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        drained.wait()
        // WIFSIGNALED/WEXITSTATUS are macros Swift cannot import: the low 7 bits hold the signal.
        let signal = status & 0x7f
        let ending: Ending = signal == 0 ? .exit((status >> 8) & 0xff) : .signal(signal)
        return Output(ending: ending, stdout: stdout, stderr: stderr)
    }

    // MARK: - The pipes

    /// A child that exits before reading all of its stdin must fail the write (EPIPE), not kill the runner.
    private static let ignoreSIGPIPEOnce: Void = { signal(SIGPIPE, SIG_IGN); return () }()

    /// Writes `stdin` (then closes it) and reads both outputs to their end, whichever is ready.
    private func pump(stdin: [UInt8], into stdinFD: Int32, stdout stdoutFD: Int32, stderr stderrFD: Int32) {
        var written = 0
        var inputFD = stdinFD
        if stdin.isEmpty {
            close(inputFD)
            inputFD = -1
        } else {
            _ = fcntl(inputFD, F_SETFL, fcntl(inputFD, F_GETFL) | O_NONBLOCK)
        }
        var descriptors = [
            pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while descriptors.contains(where: { $0.fd >= 0 }) {
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptors[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if index == 0 { stdout += buffer[..<count] } else { stderr += buffer[..<count] }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(descriptors[index].fd)
                    descriptors[index].fd = -1
                }
            }
            if descriptors[2].fd >= 0 && descriptors[2].revents != 0 {
                let count = stdin.withUnsafeBytes { write(descriptors[2].fd, $0.baseAddress! + written, $0.count - written) }
                if count > 0 { written += count }
                // A child that exits without reading all of stdin closes the pipe: EPIPE, stop writing.
                let failed = count < 0 && errno != EINTR && errno != EAGAIN
                let hungUp = count <= 0 && descriptors[2].revents & Int16(POLLERR | POLLHUP) != 0
                if written == stdin.count || failed || hungUp {
                    close(descriptors[2].fd)
                    descriptors[2].fd = -1
                }
            }
        }
    }
}
