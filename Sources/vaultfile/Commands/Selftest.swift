import ArgumentParser
import KDF
import SecureMemory
import VaultFormat

extension VaultfileCommand {
    /// Runs known-answer tests of the linked cryptographic code, for portable and packaged builds.
    struct Selftest: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "selftest",
            abstract: "Check the linked cryptography against known answers (RFC 9106, RFC 7914, XChaCha20-Poly1305, RFC 5869, RFC 7748).",
            discussion: "Exit 0 when every check passes. Run it on a binary you carry on a USB stick or build yourself.")

        func run() throws {
            var failures = 0
            for (name, check) in Self.checks {
                let passed = (try? check()) ?? false
                if !passed { failures += 1 }
                try StandardOutput.line("\(passed ? "ok  " : "FAIL") \(name)")
            }
            if failures > 0 { throw ExitCode(.failure) }
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
            ("HKDF-SHA256 RFC 5869 A.1 (HMAC-SHA256 state API)", {
                let ikm = [UInt8](repeating: 0x0b, count: 22)
                let okm = try ikm.withUnsafeBytes {
                    try HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: Array(0x00...0x0c), info: Array(0xf0...0xf9), outputLength: 42)
                }
                return okm.withUnsafeBytes { hex(Array($0)) }
                    == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
            }),
            ("X25519 RFC 7748 6.1 and the age identity of c2sp.org/age (Bech32)", {
                let alice = SecureBytes(copying: hexBytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
                let shared = try X25519.sharedSecret(secretKey: alice, publicKey: hexBytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
                let identity = try AgeIdentity(parsing: "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
                return shared.withUnsafeBytes { hex(Array($0)) } == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
                    && identity.recipient.description == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
            }),
            ("Ed25519 to X25519 (RFC 8032 7.1 seed)", {
                let seed = SecureBytes(copying: hexBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
                guard let publicKey = Ed25519.publicKey(fromSeed: seed), let secret = Ed25519.x25519SecretKey(fromSeed: seed),
                      let mapped = Ed25519.x25519PublicKey(publicKey) else { return false }
                let derived = try X25519.publicKey(of: secret)
                return hex(publicKey) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a" && derived == mapped
            }),
        ]

        /// Bytes of a hex string (known-answer constants only).
        static func hexBytes(_ text: String) -> [UInt8] {
            let digits = Array(text.utf8)
            return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
        }
    }
}
