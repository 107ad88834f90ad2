import Foundation
import SecureMemory
import TestSupport
import VaultFile
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Vaults holding ssh keys

/// Helpers of the ssh-agent tests: keys stored in a vault, `unlock --ssh`, the real OpenSSH
/// tools run against the agent's ssh socket, each under `timeout` so that no wait is unbounded.
extension CLI {
    /// The ssh socket of this test's agent (beside `agent.sock` in the test's folder).
    var sshSocket: String { path("ssh-agent.sock") }

    /// Stores `count` fresh keys of `type` in `t.vault` as `ssh/key000`… (as `set --ssh-key` stores
    /// them: the key and its fields), in one update; returns each entry's `authorized_keys` line
    /// (comment `keyNNN@test`), in order.
    @discardableResult
    func storeGeneratedSSHKeys(_ count: Int, prefix: String = "ssh/key", type: SSHKeyType = .ed25519) throws -> [String] {
        var lines: [String] = []
        try VaultStore(path: path("t.vault")).update(password: SecureBytes(copying: Array("pw".utf8)), limits: .defaults) { unlocked in
            for index in 0..<count {
                let number = String(format: "%03d", index)
                let key = try SSHPrivateKey.generate(type, comment: "key\(number)@test")
                try SSHKeyEntry.store(key, as: prefix + number, in: &unlocked.vault)
                lines.append(key.authorizedKeysLine)
            }
        }
        return lines
    }

    /// Makes a key with ssh-keygen at `file` and stores it as entry `name` with `set --ssh-key`; returns its public line.
    @discardableResult
    func storeKeygenSSHKey(_ name: String, type: String = "ed25519", file: String, comment: String) throws -> String {
        try SSHKeygen.make(type, comment: comment, at: path(file))
        let result = try run(["set", name, "--ssh-key"] + unlock(), stdin: try read(file))
        precondition(result.status == 0, result.stderr)
        return String(decoding: try read(file + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `vaultfile unlock --ssh` with the test's password and `extra` options.
    func unlockSSH(_ extra: [String] = [], environment: [String: String] = [:]) throws -> Result {
        try run(["unlock", "--ssh"] + extra + unlock(), extra: environment)
    }

    /// Runs an OpenSSH tool (or any program) with SSH_AUTH_SOCK at this test's ssh socket, under
    /// `timeout 20` (a hung client fails the test, never CI).
    func withAgent(_ arguments: [String], stdin: [UInt8] = [], socket: String? = nil, environment: [String: String] = [:]) throws -> Result {
        try run(["-k", "1", "20"] + arguments, stdin: stdin, extra: ["SSH_AUTH_SOCK": socket ?? sshSocket].merging(environment) { $1 },
                executable: "/usr/bin/timeout")
    }

    /// The SHA-256 fingerprint of a public key line, as ssh-keygen -l prints it.
    func fingerprint(ofPublicLine line: String) throws -> String {
        try write("fp.pub", Array((line + "\n").utf8))
        let result = try run(["-l", "-f", path("fp.pub")], executable: SSHKeygen.path!)
        return String(result.text.split(separator: " ")[1])
    }

    /// Whether the OpenSSH client tools are installed (openssh-client).
    static let hasSSHClients = ["/usr/bin/ssh", "/usr/bin/ssh-add", "/usr/bin/ssh-agent"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
        && SSHKeygen.path != nil
}

// MARK: - A throw-away sshd

/// OpenSSH's sshd on a loopback port of its own, with a host key, config and authorized_keys in the
/// test's folder; started in the foreground (`-D -e`), waited for at most 5 s, killed by pid.
final class ThrowawaySSHD {
    /// Whether sshd can run here: installed, and run by root (sshd wants /run/sshd, made here if missing).
    static let available: Bool = FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") && CLI.hasSSHClients && getuid() == 0

    let port: Int
    private let process: CLI.Running
    private let cli: CLI

    /// The host key's public line (`host_key.pub`).
    let hostKeyLine: String

    /// Starts sshd letting in the keys of `authorizedKeys` for this user, with a host key of
    /// `hostKeyType` (and `hostKeyBits`); with `certificateAuthority` (a private key file), the host
    /// key is certified by it (`ssh-keygen -s … -h`) and served as sshd's `HostCertificate`.
    init(cli: CLI, authorizedKeys: [String], hostKeyType: String = "ed25519", hostKeyBits: Int? = nil,
         certificateAuthority: String? = nil) throws {
        self.cli = cli
        // A folder of its own: a test may start two.
        let folder = "sshd-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
        let hostKey = cli.path(folder + "/host_key")
        try SSHKeygen.make(hostKeyType, bits: hostKeyBits, comment: "host", at: hostKey)
        hostKeyLine = String(decoding: try cli.read(folder + "/host_key.pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var certificate = ""
        if let certificateAuthority {
            let signed = try SSHKeygen.run(["-q", "-s", certificateAuthority, "-I", "throwaway-host", "-h", "-n", "127.0.0.1", hostKey + ".pub"])
            guard signed.status == 0 else { throw POSIXError(.EINVAL) }  // ssh-keygen -s failed: the test fails here
            certificate = "HostCertificate \(hostKey)-cert.pub\n"
        }
        try cli.write(folder + "/authorized_keys", Array((authorizedKeys.joined(separator: "\n") + "\n").utf8))
        if !FileManager.default.fileExists(atPath: "/run/sshd") { mkdir("/run/sshd", 0o755) }
        port = try Self.freePort()
        try cli.write(folder + "/config", Array("""
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(hostKey)
            \(certificate)AuthorizedKeysFile \(cli.path(folder + "/authorized_keys"))
            PidFile none
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PubkeyAuthentication yes
            PermitRootLogin prohibit-password
            AllowAgentForwarding yes
            LogLevel VERBOSE

            """.utf8))
        process = try cli.start(["-D", "-e", "-f", cli.path(folder + "/config")], executable: "/usr/sbin/sshd")
        guard CLI.waitFor(5, { Self.accepts(port: port) }) else {
            process.kill()
            throw POSIXError(.ETIMEDOUT)
        }
    }

    /// Kills sshd (SIGKILL, by pid) and reaps it.
    func stop() { process.kill() }

    /// `ssh` to this sshd as this user, through the agent at `socket` only, running `command`; with
    /// `knownHosts`, the host key is checked strictly against that file.
    func ssh(_ command: [String], socket: String, options: [String] = [], knownHosts: String? = nil) throws -> CLI.Result {
        let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
        return try cli.run(["-k", "1", "20", "/usr/bin/ssh", "-F", "/dev/null", "-o", "IdentityAgent=\(socket)", "-o", "BatchMode=yes",
                            "-o", "StrictHostKeyChecking=\(knownHosts == nil ? "no" : "yes")", "-o", "UserKnownHostsFile=\(knownHosts ?? "/dev/null")",
                            "-o", "ConnectTimeout=5",
                            "-o", "PreferredAuthentications=publickey", "-p", String(port)] + options + ["\(user)@127.0.0.1"] + command,
                           executable: "/usr/bin/timeout")
    }

    /// A loopback port nobody listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on the loopback `port`.
    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: UInt16(port).bigEndian, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
