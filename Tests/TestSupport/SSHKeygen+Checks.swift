import Foundation

// MARK: - ssh-keygen as the judge of ssh keys and signatures

extension SSHKeygen {
    /// The longest a single ssh-keygen run may take before it is killed (a key of 2,048 bits
    /// takes well under a second; nothing here prompts).
    public static let deadlineSeconds = 20.0

    /// Runs ssh-keygen with `arguments` and `stdin`, killed after `deadlineSeconds` and always reaped.
    public static func run(_ arguments: [String], stdin: [UInt8] = []) throws -> ChildProcess.Output {
        guard let path else { throw ChildProcess.SpawnFailed(description: "ssh-keygen is not installed") }
        let child = try ChildProcess(executable: path, arguments: arguments, environment: [:], directory: "/", stdin: stdin)
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while child.isRunning && Date() < deadline { usleep(5_000) }
        if child.isRunning { kill(child.pid, SIGKILL) }
        return child.finish()
    }

    /// Makes a key of `type` (`ed25519`, `ecdsa`, `rsa`) at `file` with optional `bits`,
    /// `passphrase` (empty: none; else under 2 bcrypt-pbkdf rounds, `-a 2`: ssh-keygen's 16 take
    /// seconds in a debug build), `cipher` (`-Z`, e.g. aes256-gcm@openssh.com) and `comment`.
    public static func make(_ type: String, bits: Int?, passphrase: String, cipher: String?, comment: String, at file: String) throws {
        let arguments = ["-q", "-t", type] + (bits.map { ["-b", String($0)] } ?? []) + (cipher.map { ["-Z", $0] } ?? [])
            + (passphrase.isEmpty ? [] : ["-a", "2"])
            + ["-N", passphrase, "-C", comment, "-f", file]
        let output = try run(arguments)
        guard output.status == 0 else { throw ChildProcess.SpawnFailed(description: "ssh-keygen failed: \(String(decoding: output.stderr, as: UTF8.self))") }
    }

    /// `ssh-keygen -y`: the public key line of the private key `file` (0600), opened with `passphrase`.
    public static func publicLine(of file: String, passphrase: String = "") throws -> String {
        let output = try run(["-y", "-P", passphrase, "-f", file])
        guard output.status == 0 else { throw ChildProcess.SpawnFailed(description: "ssh-keygen -y failed: \(String(decoding: output.stderr, as: UTF8.self))") }
        return String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `ssh-keygen -l`: the `SHA256:…` fingerprint it prints for the key file `file`.
    public static func fingerprint(of file: String) throws -> String {
        let output = try run(["-l", "-E", "sha256", "-f", file])
        let words = String(decoding: output.stdout, as: UTF8.self).split(separator: " ")
        guard output.status == 0, words.count >= 2 else { throw ChildProcess.SpawnFailed(description: "ssh-keygen -l failed") }
        return String(words[1])
    }

    /// Whether `ssh-keygen -Y check-novalidate -n namespace` accepts the armored SSHSIG
    /// `signature` (written to `file`) over `message`.
    public static func checkSignature(_ signature: String, of message: [UInt8], namespace: String, file: String) throws -> (ok: Bool, stderr: String) {
        try Data(signature.utf8).write(to: URL(fileURLWithPath: file))
        let output = try run(["-Y", "check-novalidate", "-n", namespace, "-s", file], stdin: message)
        return (output.status == 0, String(decoding: output.stderr, as: UTF8.self))
    }
}
