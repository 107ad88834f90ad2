import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - What a plugin asks of the user

/// The answers to an age plugin's `msg`, `request-public`, `request-secret` and `confirm`: every
/// prompt names the plugin (`[age-plugin-yubikey] Enter PIN:`), and every answer comes from the
/// terminal (`/dev/tty`) only, never from standard input, a file or the environment; without a
/// terminal the plugin is answered `fail`. Messages go to standard error.
struct PluginPrompts: AgePluginUserInterface {
    /// The longest answer read for `request-public` or `confirm`.
    static let maxAnswer = 1_024

    func display(plugin: String, message: String) -> Bool {
        Messages.info("[\(AgePluginName.binary(plugin))] " + Messages.escaped(message))
        return true
    }

    func request(plugin: String, prompt: String, secret: Bool) -> SecureBytes? {
        let shown = "[\(AgePluginName.binary(plugin))] " + Messages.escaped(prompt) + " "
        if secret { return try? Terminal.readSecret(prompt: shown) }
        guard let line = Self.readLine(prompt: shown) else { return nil }
        return SecureBytes(copying: Array(line.utf8))
    }

    func confirm(plugin: String, prompt: String, yes: String, no: String?) -> Bool? {
        let choices = no.map { "[\(Messages.escaped(yes))/\(Messages.escaped($0))]" } ?? "[\(Messages.escaped(yes))]"
        let shown = "[\(AgePluginName.binary(plugin))] " + Messages.escaped(prompt) + " " + choices + " "
        // Asked until one of the choices is typed (a choice's first letter counts), at most three times.
        for _ in 0..<3 {
            guard let answer = Self.readLine(prompt: shown)?.lowercased() else { return nil }
            if answer == yes.lowercased() || (!answer.isEmpty && yes.lowercased().hasPrefix(answer) && no.map({ !$0.lowercased().hasPrefix(answer) }) ?? true) {
                return true
            }
            if let no, answer == no.lowercased() || (!answer.isEmpty && no.lowercased().hasPrefix(answer) && !yes.lowercased().hasPrefix(answer)) {
                return false
            }
        }
        return nil
    }

    /// One line typed on `/dev/tty` with echo, without its newline; nil without a terminal.
    static func readLine(prompt: String) -> String? {
        guard Terminal.promptsAllowed else { return nil }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = Stream.write(Array(prompt.utf8), to: fd)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < maxAnswer {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            if byte == 0x0A { break }
            bytes.append(byte)
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
