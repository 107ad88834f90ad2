import Foundation

/// OpenSSH's `ssh-keygen`, for tests that check keys the real tool makes (Debian: openssh-client).
/// Tests that need it print that they skipped when it is missing.
public enum SSHKeygen {
    /// The path of ssh-keygen, or nil when it is not installed.
    public static let path: String? = ["/usr/bin/ssh-keygen", "/usr/local/bin/ssh-keygen"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Makes a key of `type` (`rsa`, `ed25519`) and `bits` at `file` (and `file.pub`), with
    /// `passphrase` (empty: none) and `comment`; throws when ssh-keygen fails.
    public static func make(_ type: String, bits: Int? = nil, passphrase: String = "", comment: String = "test@vaultfile", at file: String) throws {
        guard let path else { throw ChildProcess.SpawnFailed(description: "ssh-keygen is not installed") }
        let arguments = ["-q", "-t", type] + (bits.map { ["-b", String($0)] } ?? []) + ["-N", passphrase, "-C", comment, "-f", file]
        let output = try ChildProcess(executable: path, arguments: arguments, environment: [:], directory: "/").finish()
        guard output.status == 0 else {
            throw ChildProcess.SpawnFailed(description: "ssh-keygen failed: \(String(decoding: output.stderr, as: UTF8.self))")
        }
    }
}
