import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Runs known-answer tests of the linked cryptographic code, for portable and packaged builds.
    struct Selftest: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "selftest",
            abstract: "Check the linked cryptography against known answers (RFC 9106, RFC 7914, XChaCha20-Poly1305).",
            discussion: "Exit 0 when every check passes. Run it on a binary you carry on a USB stick or build yourself.")

        func run() throws {
            var failures = 0
            for (name, check) in Self.checks {
                let passed = (try? check()) ?? false
                if !passed { failures += 1 }
                try StandardOutput.line("\(passed ? "ok  " : "FAIL") \(name)")
            }
            if failures > 0 { throw ExitCode(ExitStatus.failure.rawValue) }
        }

        static let checks: [(String, @Sendable () throws -> Bool)] = [
            ("Argon2id RFC 9106 §5.3 (libargon2, p=4, secret and associated data)", {
                let key = try [UInt8](repeating: 1, count: 32).withUnsafeBytes {
                    try Argon2id.deriveKey(password: $0, salt: [UInt8](repeating: 2, count: 16),
                                           parameters: .init(memoryKiB: 32, iterations: 3, parallelism: 4),
                                           secret: [UInt8](repeating: 3, count: 8), associatedData: [UInt8](repeating: 4, count: 12))
                }
                return key.withUnsafeBytes { hex(Array($0)) } == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
            }),
            ("Argon2id p=1: libsodium and libargon2 agree", {
                let salt = [UInt8](repeating: 9, count: 16)
                let parameters = Argon2idParameters(memoryKiB: 1024, iterations: 2, parallelism: 1)
                let (a, b) = try Array("selftest".utf8).withUnsafeBytes {
                    (try Argon2id.deriveKey(password: $0, salt: salt, parameters: parameters, backend: .libsodium),
                     try Argon2id.deriveKey(password: $0, salt: salt, parameters: parameters, backend: .libargon2))
                }
                return a.constantTimeEquals(b)
            }),
            ("PBKDF2-HMAC-SHA256 RFC 7914 §11", {
                let key = try Array("passwd".utf8).withUnsafeBytes {
                    try PBKDF2.deriveKey(password: $0, salt: Array("salt".utf8), parameters: .init(iterations: 1), outputLength: 64)
                }
                return key.withUnsafeBytes { hex(Array($0)) }
                    == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
            }),
            ("XChaCha20-Poly1305 draft-irtf-cfrg-xchacha §A.3", {
                let key = Array(0x80...0x9F).map(UInt8.init), nonce = Array(0x40...0x57).map(UInt8.init)
                let aad: [UInt8] = [0x50, 0x51, 0x52, 0x53, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7]
                let message = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
                let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(message, key: $0, nonce: nonce, associatedData: aad) }
                return hex(Array(sealed.prefix(8))) == "bd6d179d3e83d43b" && hex(Array(sealed.suffix(16))) == "c0875924c1c7987947deafd8780acf49"
            }),
        ]
    }
}
