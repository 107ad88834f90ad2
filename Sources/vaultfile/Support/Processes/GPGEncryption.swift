import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Running the user's gpg to encrypt one file of a pass store

/// Encrypts bytes with the user's own `gpg --encrypt`, as pass does: the plaintext goes to gpg's
/// stdin through a pipe (never a file, never argv), the ciphertext comes back on its stdout; both
/// pipes are served at once (poll), so a value larger than a pipe's buffer cannot deadlock. gpg's
/// stderr is the user's, so its own message (an unknown or untrusted key) shows as it does for pass.
enum GPGEncryption {
    /// The options pass gives gpg (`--quiet --yes --compress-algo=none --no-encrypt-to`), in batch
    /// mode, and `--auto-key-locate local`: a key id that is not in the keyring fails at once
    /// instead of being looked up on the network (WKD, keyservers) by an offline tool.
    static let options = ["--encrypt", "--batch", "--quiet", "--yes", "--compress-algo=none", "--no-encrypt-to", "--auto-key-locate", "local"]

    /// Whether `id` may be handed to gpg as a key id: not empty, no blank at either end, no
    /// control character, and not starting with '-' (which gpg would read as an option).
    static func isKeyID(_ id: String) -> Bool {
        guard let first = id.unicodeScalars.first, let last = id.unicodeScalars.last else { return false }
        return first != "-" && first != " " && last != " " && !id.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The ciphertext of `plaintext` for `recipients` (key ids, checked by `isKeyID`); `entry`
    /// names the entry in an error.
    static func encrypt(_ plaintext: [UInt8], to recipients: [String], entry: String) throws(CLIError) -> [UInt8] {
        let arguments = ["gpg"] + options + recipients.flatMap { ["--recipient", $0] } + ["--output", "-"]
        let child = try Subprocess.start(arguments, captureOutput: true, feedInput: true)
        // A signal that ends vaultfile ends this gpg too (SignalCleanup), until it has exited.
        SignalCleanup.registerChild(child.pid)
        guard let input = child.input, let output = child.output else {
            SignalCleanup.withdrawChild()
            throw .cannotRun(command: "gpg", errno: EIO)
        }
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
        var ciphertext: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var written = 0
        var inputOpen = true, outputOpen = true
        if plaintext.isEmpty { close(input); inputOpen = false }
        while outputOpen {
            var polls = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            if inputOpen { polls.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
            guard poll(&polls, nfds_t(polls.count), -1) >= 0 || errno == EINTR else { break }
            if inputOpen, polls.count > 1, polls[1].revents != 0 {
                // SIGPIPE blocked for the write: gpg that stops reading (a refused key) makes it fail
                // with EPIPE, not end vaultfile (`withoutSIGPIPE`).
                let count = withoutSIGPIPE { plaintext.withUnsafeBytes { write(input, $0.baseAddress! + written, min($0.count - written, 1 << 16)) } }
                if count > 0 { written += count }
                if written == plaintext.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                    close(input)
                    inputOpen = false
                }
            }
            if polls[0].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
                if count > 0 { ciphertext.append(contentsOf: chunk[0..<count]) } else if count == 0 || errno != EINTR { outputOpen = false }
            }
        }
        if inputOpen { close(input) }
        close(output)
        wipe(&chunk)  // only ciphertext passed through it, but a chunk is cheap to clear
        // Withdrawn once it has exited (a gpg that closed its output may still run), before it is reaped.
        Subprocess.waitUntilExited(child.pid)
        SignalCleanup.withdrawChild()
        let status = Subprocess.wait(child.pid)
        guard status == 0, written == plaintext.count, !ciphertext.isEmpty else {
            throw .storeEncryptionFailed(entry: entry, status: status)
        }
        return ciphertext
    }
}
