import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Where a password comes from

/// One of the documented password sources, in the order they are considered.
///
/// File, descriptor and command sources lose exactly one trailing newline
/// (`\n`, or `\r\n`); nothing else is changed. A file named `-` is standard
/// input. `VAULTFILE_PASSWORD` is taken as it is (see `EnvironmentPassword`).
enum PasswordSource {
    case file(String)
    case descriptor(Int32)
    case command(String)
    /// `VAULTFILE_PASSWORD`, taken out of the environment at start-up.
    case environment
    case prompt

    /// Whether the source was chosen (an option or a variable), not the fallback prompt.
    var isExplicit: Bool {
        if case .prompt = self { return false }
        return true
    }

    /// The longest password read from a file, descriptor or command.
    static let maxLength = 65_536

    /// Reads the password.
    func read(prompt: String) throws(CLIError) -> SecureBytes {
        switch self {
        case .file(let path) where path == Input.standardInputName:
            // `--password-file -`: the password is standard input (which then holds nothing else).
            // A terminal there would echo it as it is typed: the prompt is the way to type one.
            guard isatty(STDIN_FILENO) == 0 else {
                throw .passwordSourceFailed("'-' is standard input, a terminal here, which would show the password as it is typed; "
                                            + "leave out the password file to be asked without echo")
            }
            try Input.claimStandardInput(for: "the password")
            return try Self.stripNewline(Self.readAll(STDIN_FILENO, what: "standard input"))
        case .file(let path):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .passwordSourceFailed("cannot open \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try Self.stripNewline(Self.readAll(fd, what: path))
        case .descriptor(let fd):
            guard fcntl(fd, F_GETFD) >= 0 else { throw .passwordSourceFailed("descriptor \(fd) is not open") }
            if fd == STDIN_FILENO { try Input.claimStandardInput(for: "the password") }
            // Read to its end, then closed: no child may read the password from it again.
            defer { Inherited.consume(fd) }
            return try Self.stripNewline(Self.readAll(fd, what: "descriptor \(fd)"))
        case .command(let command):
            return try Self.stripNewline(Self.run(command))
        case .environment:
            guard let secret = EnvironmentPassword.password else { throw .passwordSourceFailed("VAULTFILE_PASSWORD is not set") }
            return secret
        case .prompt:
            do {
                return try Terminal.readSecret(prompt: prompt)
            } catch .noPasswordSource where Self.runsInsideExec {
                throw .refused("no password source, and no terminal to ask on: this vaultfile runs inside 'vaultfile exec', "
                               + "which keeps its password sources and the agent from the command it runs",
                               hint: "if the command is meant to open vaults, run it with 'vaultfile exec --allow-nested'; "
                               + "or give this vaultfile --password-file, --password-fd or --password-command")
            }
        }
    }

    /// Whether this process runs under `vaultfile exec`, which marks its children with `VAULTFILE_EXEC=1`.
    static var runsInsideExec: Bool { getenv("VAULTFILE_EXEC").map { strcmp($0, "1") == 0 } ?? false }

    // MARK: Private

    private static func readAll(_ fd: Int32, what: String) throws(CLIError) -> SecureBytes {
        let buffer = SecureBytes(count: maxLength + 1)
        var length = 0
        while length <= maxLength {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .passwordSourceFailed("reading \(what): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            length += count
        }
        guard length <= maxLength else { throw .passwordSourceFailed("\(what) holds more than \(maxLength) bytes") }
        return buffer.slice(0..<length)
    }

    private static func stripNewline(_ secret: SecureBytes) -> SecureBytes {
        let count = secret.count
        let bytes = secret.withUnsafeBytes { (count > 0 ? $0[count - 1] : 0, count > 1 ? $0[count - 2] : 0) }
        guard bytes.0 == 0x0A else { return secret }
        return secret.slice(0..<(bytes.1 == 0x0D ? count - 2 : count - 1))
    }

    /// Runs `sh -c command` with stdin and stderr inherited and captures its stdout.
    private static func run(_ command: String) throws(CLIError) -> SecureBytes {
        let child: Subprocess.Child
        do {
            child = try Subprocess.start(["/bin/sh", "-c", command], captureOutput: true)
        } catch {
            throw .passwordSourceFailed(error.description)
        }
        let output: SecureBytes
        do {
            output = try readAll(child.output!, what: "the password command's output")
        } catch {
            close(child.output!)
            _ = Subprocess.wait(child.pid)
            throw error
        }
        close(child.output!)
        let status = Subprocess.wait(child.pid)
        guard status == 0 else { throw .passwordCommandFailed(status: status) }
        return output
    }
}
