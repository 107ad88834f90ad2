import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Prompts on /dev/tty

/// Secret prompts on the controlling terminal, with echo off, so stdin stays free for data.
enum Terminal {
    /// The terminal settings to restore if the user interrupts a prompt. On the heap: a
    /// global `termios` is laid out with its size (57) but copied with its stride (60),
    /// which AddressSanitizer reports as an overflow.
    nonisolated(unsafe) private static let savedSettings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    nonisolated(unsafe) private static var savedFD: Int32 = -1
    /// The lines an interrupted prompt writes on stderr (SIGINT's, SIGTERM's), built before any
    /// prompt (a signal handler cannot build text): `import` says "nothing was imported", as it
    /// does for a signal while its tools run (cold62 L7). Nil: nothing is said.
    nonisolated(unsafe) private static var interruptedLines: (interrupt: UnsafeMutableBufferPointer<UInt8>, terminate: UnsafeMutableBufferPointer<UInt8>)?
    /// Set by SIGCONT during a prompt: vaultfile was stopped (started in the background, it was
    /// stopped when it turned echo off; or Ctrl-Z) and continued (`fg`), and the prompt it wrote
    /// before lies above the shell's lines: written again before the next read (cold62 L7).
    nonisolated(unsafe) private static var continued: sig_atomic_t = 0

    /// The longest secret a prompt accepts.
    static let maxSecretLength = 4_096

    /// Whether a prompt may open the terminal at all. False in the git credential helper's `store`
    /// and `erase` (they write only with a vault that opens without a prompt) and in its `get`
    /// under GIT_TERMINAL_PROMPT=0: every prompt then fails as with no terminal (`noPasswordSource`).
    nonisolated(unsafe) static var promptsAllowed = true

    /// Whether a prompt could be shown now: prompts are allowed and `/dev/tty` opens (for messages
    /// that must say whether a prompt follows, and for refusals that name what is missing).
    static var isAvailable: Bool {
        guard promptsAllowed else { return false }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// Makes a prompt interrupted by SIGINT or SIGTERM end its line and write
    /// `vaultfile: interrupted (SIGINT): WHAT` on stderr before vaultfile exits (`import`:
    /// "nothing was imported"). Called once, before any prompt.
    static func sayWhenInterrupted(_ what: String) {
        func line(_ signal: Int32) -> UnsafeMutableBufferPointer<UInt8> {
            let bytes = Array("vaultfile: interrupted (\(ImportSignals.name(of: signal))): \(what)\n".utf8)
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
            _ = buffer.initialize(from: bytes)
            return buffer
        }
        guard interruptedLines == nil else { return }
        interruptedLines = (line(SIGINT), line(SIGTERM))
    }

    /// Asks for a secret on `/dev/tty` without echo; the final newline is not part of it.
    static func readSecret(prompt: String) throws(CLIError) -> SecureBytes {
        guard promptsAllowed else { throw .noPasswordSource }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .noPasswordSource }
        defer { close(fd) }
        _ = Stream.write(Array(prompt.utf8), to: fd)

        var original = termios()
        let hasSettings = tcgetattr(fd, &original) == 0
        // The dispositions before the prompt, put back whole after it (a caller may have ignored
        // SIGINT; SignalCleanup's handler keeps its mask and flags).
        var previousInterrupt = sigaction(), previousTerminate = sigaction(), previousContinue = sigaction()
        if hasSettings {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            silent.c_lflag |= tcflag_t(ICANON)
            savedSettings.pointee = original
            savedFD = fd
            var restoring = sigaction()
            restoring.__sigaction_handler.sa_handler = { signal in Terminal.restoreAndExit(signal) }
            sigemptyset(&restoring.sa_mask)
            restoring.sa_flags = SA_RESTART
            _ = sigaction(SIGINT, &restoring, &previousInterrupt)
            _ = sigaction(SIGTERM, &restoring, &previousTerminate)
            // No SA_RESTART: a read waiting when vaultfile is continued returns, and the prompt is written again.
            continued = 0
            var noting = sigaction()
            noting.__sigaction_handler.sa_handler = { _ in Terminal.continued = 1 }
            sigemptyset(&noting.sa_mask)
            _ = sigaction(SIGCONT, &noting, &previousContinue)
            // Started in the background, vaultfile is stopped here (SIGTTOU) until `fg`; the SIGCONT
            // handler (no SA_RESTART) then ends the call with EINTR: made again, or echo stayed on.
            while tcsetattr(fd, TCSAFLUSH, &silent) != 0 && errno == EINTR {}
        }
        defer {
            if hasSettings {
                while tcsetattr(fd, TCSAFLUSH, &original) != 0 && errno == EINTR {}
                savedFD = -1
                _ = sigaction(SIGINT, &previousInterrupt, nil)
                _ = sigaction(SIGTERM, &previousTerminate, nil)
                _ = sigaction(SIGCONT, &previousContinue, nil)
            }
            _ = Stream.write([0x0A], to: fd)
        }

        let buffer = SecureBytes(count: maxSecretLength)
        var length = 0
        var byte: UInt8 = 0
        while true {
            if continued != 0 {
                continued = 0
                _ = Stream.write(Array(prompt.utf8), to: fd)
            }
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == 0x0A { break }
            guard length < maxSecretLength else { throw .passwordSourceFailed("longer than \(maxSecretLength) bytes") }
            buffer.withUnsafeMutableBytes { $0[length] = byte }
            length += 1
        }
        byte = 0
        if length > 0 && buffer.withUnsafeBytes({ $0[length - 1] }) == 0x0D { length -= 1 }
        return buffer.slice(0..<length)
    }

    /// Asks twice and insists both answers match (for new passwords and typed values).
    static func readNewSecret(prompt: String, confirm: String) throws(CLIError) -> SecureBytes {
        let first = try readSecret(prompt: prompt)
        let second = try readSecret(prompt: confirm)
        guard first.constantTimeEquals(second) else { throw .passwordsDiffer }
        return first
    }

    /// Restores echo after Ctrl-C (or SIGTERM) during a prompt, ends the prompt's line, writes
    /// `interruptedLines`' line if any, then exits as interrupted by `signal`. Only
    /// async-signal-safe calls: `tcsetattr`, `write`, `_exit`.
    private static func restoreAndExit(_ signal: Int32) -> Never {
        if savedFD >= 0 {
            _ = tcsetattr(savedFD, TCSAFLUSH, savedSettings)
            var newline: UInt8 = 0x0A
            _ = write(savedFD, &newline, 1)
        }
        if let lines = interruptedLines {
            let line = signal == SIGTERM ? lines.terminate : lines.interrupt
            _ = write(STDERR_FILENO, line.baseAddress, line.count)
        }
        _exit(ExitStatus.killed(by: signal == SIGTERM ? SIGTERM : SIGINT).rawValue)
    }
}
