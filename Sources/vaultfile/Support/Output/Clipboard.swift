import ArgumentParser
import KDF
import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The clipboard

/// Copies a secret to the desktop clipboard through a helper program, and arranges for it to be
/// cleared later only if the clipboard still holds it.
///
/// The secret goes to the helper's stdin, never its argv. The clearer is this binary again
/// (`/proc/self/exe _clipboard-clear`), detached in a new session with stdio on /dev/null; it
/// holds a keyed BLAKE2b hash of the secret and its random key (on its stdin), not the secret.
/// xclip cannot offer the `x-kde-passwordManagerHint` target beside the text (one target per
/// process), so only `wl-copy --sensitive` marks the copy as sensitive.
enum Clipboard {
    /// A clipboard helper: how to copy (secret on stdin), read back, and clear.
    struct Tool {
        let name: String
        let copy: [String]
        /// Nil: the clipboard cannot be read back, so it is never cleared.
        let paste: [String]?
        /// Nil: clear by copying nothing with `copy`.
        let clear: [String]?
    }

    /// The default time before clearing, in seconds.
    static let defaultClearAfter = 45.0
    /// The longest time before clearing: a day. (Past 2^63 s the seconds no longer fit an `Int`.)
    static let maxClearAfter = 86_400.0

    /// The helper to use: `VAULTFILE_CLIPBOARD_COMMAND` (run with sh -c; read back with
    /// `VAULTFILE_CLIPBOARD_PASTE_COMMAND`), else wl-copy under Wayland, else xclip or xsel under X.
    static func tool(named wanted: String? = nil) throws(CLIError) -> Tool {
        let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
        if let command = environment("VAULTFILE_CLIPBOARD_COMMAND"), !command.isEmpty, wanted == nil || wanted == "command" {
            let paste = environment("VAULTFILE_CLIPBOARD_PASTE_COMMAND").flatMap { $0.isEmpty ? nil : ["/bin/sh", "-c", $0] }
            return Tool(name: "command", copy: ["/bin/sh", "-c", command], paste: paste, clear: nil)
        }
        let wayland = environment("WAYLAND_DISPLAY").map { !$0.isEmpty } ?? false
        let x11 = environment("DISPLAY").map { !$0.isEmpty } ?? false
        if wayland, wanted == nil || wanted == "wl-copy", let copy = findInPath("wl-copy") {
            let sensitive = supportsSensitive(copy) ? ["--sensitive"] : []
            return Tool(name: "wl-copy", copy: [copy] + sensitive, paste: findInPath("wl-paste").map { [$0, "--no-newline"] }, clear: [copy, "--clear"])
        }
        if x11, wanted == nil || wanted == "xclip", let xclip = findInPath("xclip") {
            return Tool(name: "xclip", copy: [xclip, "-selection", "clipboard"], paste: [xclip, "-selection", "clipboard", "-o"], clear: nil)
        }
        if x11, wanted == nil || wanted == "xsel", let xsel = findInPath("xsel") {
            return Tool(name: "xsel", copy: [xsel, "--clipboard", "--input"], paste: [xsel, "--clipboard", "--output"], clear: [xsel, "--clipboard", "--delete"])
        }
        guard wayland || x11 else {
            // No graphical session (a console, ssh without X forwarding): no tool could reach a clipboard.
            throw .refused("no display for the clipboard: neither $WAYLAND_DISPLAY nor $DISPLAY is set",
                           hint: "run it in a desktop session, with wl-clipboard (apt install wl-clipboard) under Wayland "
                               + "or xclip (apt install xclip) or xsel under X11; or set VAULTFILE_CLIPBOARD_COMMAND "
                               + "to a command that reads the secret on stdin")
        }
        let install = wayland ? "wl-clipboard (apt install wl-clipboard)" : "xclip (apt install xclip) or xsel"
        let session = wayland ? "Wayland ($WAYLAND_DISPLAY is set)" : "X11 ($DISPLAY is set)"
        throw .refused("no clipboard tool found for \(session): install \(install)",
                       hint: "install \(install), or set VAULTFILE_CLIPBOARD_COMMAND to a command that reads the secret on stdin")
    }

    /// Copies `secret` and starts the clearer (unless `clearAfter` is 0 or the tool cannot read back).
    /// Returns what to tell the user.
    static func copy(_ secret: UnsafeRawBufferPointer, clearAfter: Double) throws(CLIError) -> String {
        let tool = try tool()
        try run(tool.copy, input: secret)
        guard clearAfter > 0 else { return "copied; not cleared (--clear-after 0)" }
        guard tool.paste != nil else { return "copied; not cleared: set VAULTFILE_CLIPBOARD_PASTE_COMMAND so that the clipboard can be checked" }
        let key = SecureBytes(copying: randomBytes(count: 32))
        var message = key.withUnsafeBytes { Array($0) } + KeyedHash.blake2b256(secret, key: key)
        defer { wipe(&message) }
        let clearer = try Subprocess.start(["/proc/self/exe", "_clipboard-clear", "--tool", tool.name, "--after", String(clearAfter)],
                                           feedInput: true, detached: true)
        if let input = clearer.input {
            _ = message.withUnsafeBytes { writeWithoutSIGPIPE($0, to: input) }
            close(input)
        }
        return "copied; clears in \(clearAfter == clearAfter.rounded() ? String(Int(clearAfter)) : String(clearAfter)) s"
    }

    /// The seconds before clearing: `--clear-after`, else `VAULTFILE_CLIP_TIME`, else 45; "0" means never.
    static func clearAfter(_ option: String?) throws(CLIError) -> Double {
        guard let text = option ?? getenv("VAULTFILE_CLIP_TIME").map({ String(cString: $0) }), !text.isEmpty else { return defaultClearAfter }
        if text == "0" || text == "0s" { return 0 }
        guard let seconds = TimeSpan.parseSeconds(text) else {
            throw .invalidArgument("the clipboard time '\(text)' is not a duration such as 45s or 0")
        }
        guard seconds <= maxClearAfter else {
            throw .invalidArgument("the clipboard time '\(text)' is longer than a day (\(Int(maxClearAfter))s), the longest it can be; 0 never clears")
        }
        return seconds
    }

    /// Runs `arguments` with `input` on stdin (its stdout and stderr on /dev/null: xclip stays
    /// behind to serve the selection and must not hold our stdout open); throws if it fails.
    ///
    /// A tool that exits before reading everything is reported, not a SIGPIPE that ends vaultfile (status 141).
    static func run(_ arguments: [String], input: UnsafeRawBufferPointer) throws(CLIError) {
        let child = try Subprocess.start(arguments, feedInput: true, detached: true)
        var writeError: Int32 = 0
        if let fd = child.input {
            if !writeWithoutSIGPIPE(input, to: fd) { writeError = errno }
            close(fd)
        }
        let status = Subprocess.wait(child.pid)
        guard status == 0 else { throw .refused("the clipboard tool failed (exit status \(status))", hint: "check that the desktop session's clipboard is reachable") }
        guard writeError == 0 else {
            throw .io(operation: "writing the value to", path: "the clipboard tool (it exited with status 0 before reading it all)", errno: writeError)
        }
    }

    /// Writes `bytes` to the pipe `fd` with SIGPIPE blocked in this thread: a reader that is gone
    /// makes the write fail with EPIPE instead of ending the process. The SIGPIPE that the write
    /// raised (pending while blocked, directed at this thread) is taken before the mask is restored.
    static func writeWithoutSIGPIPE(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var wasPending = sigset_t()
        sigpending(&wasPending)
        let alreadyPending = sigismember(&wasPending, SIGPIPE) == 1
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        let written = Stream.write(bytes, to: fd)
        let code = errno
        if !written && code == EPIPE && !alreadyPending {
            var none = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&pipeSignal, nil, &none) < 0 && errno == EINTR {}
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        errno = code
        return written
    }

    /// Reads what the clipboard holds, with `paste`; nil when it cannot be read.
    static func readBack(_ paste: [String]) -> [UInt8]? {
        guard let child = try? Subprocess.start(paste, captureOutput: true, detached: true), let fd = child.output else { return nil }
        var output: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || output.count > 1 << 28 { break }
            output += chunk[0..<count]
        }
        close(fd)
        wipe(&chunk)
        return Subprocess.wait(child.pid) == 0 ? output : nil
    }

    // MARK: Private

    private static func findInPath(_ program: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Whether this wl-copy knows `--sensitive` (wl-clipboard 2.2+), from its `--help`.
    private static func supportsSensitive(_ wlCopy: String) -> Bool {
        guard let help = readBack([wlCopy, "--help"]) else { return false }
        return String(decoding: help, as: UTF8.self).contains("--sensitive")
    }
}

// MARK: - Options

/// `--clip` and `--clear-after`, shared by `get` and `totp`.
struct ClipboardOptions: ParsableArguments {
    @Flag(name: Table.clip.long, help: "Copy to the clipboard instead of printing; cleared later if unchanged.")
    var clip = false
    @Option(name: Table.clearAfter.long,
            help: ArgumentHelp("With --clip: clear after this long, if unchanged (default 45s, or VAULTFILE_CLIP_TIME; 0 = never).", valueName: "duration"))
    var clearAfter: String?
}

extension ClipboardOptions: QuickOptionGroup {
    /// The options of `ClipboardOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case clip, clearAfter = "clear-after"

        var kind: OptionKind {
            switch self {
            case .clip: .flag
            case .clearAfter: .option
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout ClipboardOptions) {
            switch self {
            case .clip: options.clip = arguments.flag(self)
            case .clearAfter: options.clearAfter = arguments.string(self)
            }
        }
    }
}
