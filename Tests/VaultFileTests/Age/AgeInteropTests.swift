import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// `AgeFile` against the real age 1.1.1 (Debian's `age`): files each side writes, the other reads.
@Suite struct AgeInteropTests {
    static let installed = FileManager.default.isExecutableFile(atPath: AgeTool.age)
    /// util-linux's `script`: a terminal for age's passphrase prompt, which reads only /dev/tty.
    static let script = "/usr/bin/script"
    static let message = Array("shared through age\n".utf8)

    /// Runs `age arguments…` under `script` with `typed` fed to its terminal (each line after a pause).
    static func ageOnTerminal(_ arguments: [String], typed lines: [String], in folder: TemporaryDirectory) throws {
        let quoted = ([AgeTool.age] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let feed = lines.map { "sleep 0.5; printf '%s\\n' '\($0)'" }.joined(separator: "; ") + "; sleep 2"
        let command = "(\(feed)) | \(script) -qec \"\(quoted)\" /dev/null >/dev/null"
        let output = try ChildProcess(executable: "/bin/sh", arguments: ["-c", command], environment: ["PATH": "/usr/bin:/bin", "TERM": "dumb"],
                                      directory: folder.url.path).finish()
        guard output.ending == .exit(0) else { throw CocoaError(.executableLoad) }
    }

    // MARK: - decrypt: files of the real age

    @Test(.enabled(if: installed && FileManager.default.isExecutableFile(atPath: script), "age or script (util-linux) is not installed: age -p files skipped"))
    func test_decrypt_readsAFileOfAgeDashP() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(Self.message).write(to: folder.url.appendingPathComponent("in.txt"))
        try Self.ageOnTerminal(["-p", "-o", "out.age", "in.txt"], typed: ["pass word 1", "pass word 1"], in: folder)
        let file = Array(try Data(contentsOf: folder.url.appendingPathComponent("out.age")))
        #expect(try AgeFile.needsPassphrase(file))
        let plaintext = try AgeFile.decrypt(file, identities: [], passphrase: SecureBytes(copying: Array("pass word 1".utf8)))
        #expect(plaintext.withUnsafeBytes { Array($0) } == Self.message)
        #expect(throws: AgeFileError.wrongPassphrase) { try AgeFile.decrypt(file, identities: [], passphrase: SecureBytes(copying: Array("pass word 2".utf8))) }
    }

    @Test(.enabled(if: installed, "age is not installed (apt-get install age): skipped"))
    func test_decrypt_readsAgeDashEFilesToX25519BinaryAndArmored() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let identity = AgeIdentity.generate()
        for armor in [false, true] {
            let made = try ChildProcess(executable: AgeTool.age, arguments: ["-e", "-r", identity.recipient.description] + (armor ? ["-a"] : []),
                                        environment: [:], directory: folder.url.path, stdin: Self.message).finish()
            #expect(made.ending == .exit(0))
            #expect(try AgeFile.decrypt(made.stdout, identities: [identity]).withUnsafeBytes { Array($0) } == Self.message)
        }
    }

    // MARK: - encrypt: files the real age reads

    @Test(.enabled(if: installed, "age is not installed (apt-get install age): skipped"))
    func test_encrypt_givesFilesAgeDashDOpensForX25519() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let identity = AgeIdentity.generate()
        try Data((identity.encodedSecretKey() + "\n").utf8).write(to: folder.url.appendingPathComponent("key.txt"))
        for (size, armor) in [(0, false), (19, true), (200_000, false), (131_072, true)] {
            let bytes = size == 19 ? Self.message : (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            let file = try bytes.withUnsafeBytes { try AgeFile.encrypt($0, to: [identity.recipient], armor: armor) }
            let opened = try ChildProcess(executable: AgeTool.age, arguments: ["-d", "-i", "key.txt"], environment: [:],
                                          directory: folder.url.path, stdin: file).finish()
            #expect(opened.ending == .exit(0), "\(size): \(String(decoding: opened.stderr, as: UTF8.self))")
            #expect(opened.stdout == bytes)
        }
    }

    @Test(.enabled(if: installed && FileManager.default.isExecutableFile(atPath: script), "age or script (util-linux) is not installed: skipped"))
    func test_encrypt_givesPassphraseFilesAgeDashDOpens() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let passphrase = SecureBytes(copying: Array("open sesame".utf8))
        let limits = KDFLimits(maxMemoryBytes: 1 << 30, maxArgon2WorkKiB: 1, maxPBKDF2Iterations: 1)
        let file = try Self.message.withUnsafeBytes { try AgeFile.encrypt($0, to: [AgeScryptPassphrase(passphrase: passphrase, limits: limits, logN: 14)]) }
        try Data(file).write(to: folder.url.appendingPathComponent("in.age"))
        try Self.ageOnTerminal(["-d", "-o", "out.txt", "in.age"], typed: ["open sesame"], in: folder)
        #expect(Array(try Data(contentsOf: folder.url.appendingPathComponent("out.txt"))) == Self.message)
    }

    @Test(.enabled(if: installed && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen"), "age or ssh-keygen is not installed: skipped"))
    func test_encrypt_givesSSHEd25519FilesAgeReadsAndReadsAgesOwn() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let keygen = try ChildProcess(executable: "/usr/bin/ssh-keygen", arguments: ["-q", "-t", "ed25519", "-N", "", "-C", "me", "-f", "id"],
                                      environment: [:], directory: folder.url.path).finish()
        #expect(keygen.ending == .exit(0))
        let publicLine = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("id.pub")), as: UTF8.self)
        let recipient = try SSHEd25519PublicKey(parsing: publicLine.trimmingCharacters(in: .whitespacesAndNewlines))
        let identity = try SSHEd25519Identity.parse(Array(try Data(contentsOf: folder.url.appendingPathComponent("id"))), source: "id")
        let file = try Self.message.withUnsafeBytes { try AgeFile.encrypt($0, to: [recipient]) }
        let opened = try ChildProcess(executable: AgeTool.age, arguments: ["-d", "-i", "id"], environment: [:], directory: folder.url.path, stdin: file).finish()
        #expect(opened.ending == .exit(0), "\(String(decoding: opened.stderr, as: UTF8.self))")
        #expect(opened.stdout == Self.message)
        let theirs = try ChildProcess(executable: AgeTool.age, arguments: ["-e", "-R", "id.pub"], environment: [:], directory: folder.url.path,
                                      stdin: Self.message).finish()
        #expect(theirs.ending == .exit(0))
        #expect(try AgeFile.decrypt(theirs.stdout, identities: [identity]).withUnsafeBytes { Array($0) } == Self.message)
    }

    @Test(.enabled(if: installed && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen"), "age or ssh-keygen is not installed: skipped"))
    func test_encrypt_givesSSHRSAFilesAgeReadsAndReadsAgesOwn() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let keygen = try ChildProcess(executable: "/usr/bin/ssh-keygen", arguments: ["-q", "-t", "rsa", "-b", "3072", "-N", "", "-C", "me", "-f", "id"],
                                      environment: [:], directory: folder.url.path).finish()
        #expect(keygen.ending == .exit(0))
        let publicLine = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("id.pub")), as: UTF8.self)
        let recipient = try SSHRSAPublicKey(parsing: publicLine.trimmingCharacters(in: .whitespacesAndNewlines))
        let identity = try SSHRSAIdentity.parse(Array(try Data(contentsOf: folder.url.appendingPathComponent("id"))), source: "id")
        let file = try Self.message.withUnsafeBytes { try AgeFile.encrypt($0, to: [recipient, AgeIdentity.generate().recipient]) }
        let opened = try ChildProcess(executable: AgeTool.age, arguments: ["-d", "-i", "id"], environment: [:], directory: folder.url.path, stdin: file).finish()
        #expect(opened.ending == .exit(0), "\(String(decoding: opened.stderr, as: UTF8.self))")
        #expect(opened.stdout == Self.message)
        for armor in [false, true] {
            let theirs = try ChildProcess(executable: AgeTool.age, arguments: ["-e", "-R", "id.pub"] + (armor ? ["-a"] : []), environment: [:],
                                          directory: folder.url.path, stdin: Self.message).finish()
            #expect(theirs.ending == .exit(0))
            #expect(try AgeFile.decrypt(theirs.stdout, identities: [identity]).withUnsafeBytes { Array($0) } == Self.message)
        }
    }
}
