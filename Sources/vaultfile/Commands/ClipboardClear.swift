import ArgumentParser
import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// The detached clearer that `--clip` starts: waits, then clears the clipboard if it still
    /// holds what was copied. Internal; not listed in help.
    struct ClipboardClear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "_clipboard-clear", shouldDisplay: false)

        @Option(name: .customLong("tool")) var tool: String
        @Option(name: .customLong("after")) var after: Double

        func run() throws {
            // stdin: the 32-byte hash key, then the 32-byte keyed hash of what was copied.
            var message = [UInt8](repeating: 0, count: 64)
            var filled = 0
            while filled < 64 {
                let count = message.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress! + filled, 64 - filled) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                filled += count
            }
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if null >= 0 { dup2(null, STDIN_FILENO); close(null) }
            let key = SecureBytes(copying: message[0..<32])
            let expected = Array(message[32..<64])
            wipe(&message)
            let after = after.isFinite ? min(max(after, 0), Clipboard.maxClearAfter) : Clipboard.maxClearAfter  // never traps converting to Int
            var remaining = timespec(tv_sec: Int(after), tv_nsec: Int((after - after.rounded(.down)) * 1e9))
            var left = timespec()
            while nanosleep(&remaining, &left) != 0 && errno == EINTR { remaining = left }
            let tool = try Clipboard.tool(named: tool)
            guard let paste = tool.paste, var current = Clipboard.readBack(paste) else { return }
            defer { wipe(&current) }
            let unchanged = current.withUnsafeBytes { KeyedHash.blake2b256($0, key: key) } == expected
            guard unchanged else { return }  // someone copied something else meanwhile: leave it
            if let clear = tool.clear {
                let child = try Subprocess.start(clear, detached: true)
                _ = Subprocess.wait(child.pid)
            } else {
                try Clipboard.run(tool.copy, input: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
    }
}
