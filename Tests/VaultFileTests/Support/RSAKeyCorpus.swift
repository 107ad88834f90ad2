import Foundation
import SecureMemory
@testable import VaultFormat
@testable import VaultModel

/// Hostile edits of an OpenSSH RSA private key, shared by the key tests and the writer of
/// `Fixtures/damaged/keys/ssh-rsa-*` (each edit with the words its refusal contains).
enum RSAKeyCorpus {
    /// The private section of an unencrypted OpenSSH key file's bytes.
    static func privateSection(of bytes: [UInt8]) throws -> [UInt8] {
        try OpenSSHKeyBlob.decode(bytes, source: "k").privateSection
    }

    /// Offsets in a private section: where each field's bytes start (after its length) and its length.
    static func fields(of section: [UInt8]) -> [String: (start: Int, count: Int)] {
        var reader = SSHReader(section[...])
        _ = reader.uint32(); _ = reader.uint32()
        var result: [String: (Int, Int)] = [:]
        for name in ["type", "n", "e", "d", "iqmp", "p", "q", "comment"] {
            let before = section.count - reader.rest.count
            guard let value = reader.string() else { break }
            result[name] = (before + 4, value.count)
        }
        return result
    }

    /// Edits of a private section and the words of the refusal each gets.
    static let privateSectionEdits: [(edit: @Sendable (inout [UInt8]) -> Void, message: String)] = [
        ({ $0[4] ^= 1 }, "check integers differ"),
        ({ flipLast(&$0, field: "n") }, "public half differs"),
        ({ flipLast(&$0, field: "d") }, "do not make one RSA key"),
        ({ flipLast(&$0, field: "p") }, "do not make one RSA key"),
        ({ flipLast(&$0, field: "iqmp") }, "do not make one RSA key"),
        ({ $0.removeLast() }, "not a whole number of blocks"),
    ]

    /// Flips the low bit of the last byte of `field`.
    static func flipLast(_ section: inout [UInt8], field: String) {
        guard let (start, count) = fields(of: section)[field] else { return }
        section[start + count - 1] ^= 1
    }

    /// An unencrypted OpenSSH key file (armored) of `publicWire` and `privateSection`.
    static func keyFile(publicWire: [UInt8], privateSection: [UInt8]) -> [UInt8] {
        let blob = SSHEd25519Identity.magic + sshString(Array("none".utf8)) + sshString(Array("none".utf8)) + sshString([])
            + [0, 0, 0, 1] + sshString(publicWire) + sshString(privateSection)
        let text = base64Encode(blob)
        var lines = [SSHEd25519Identity.begin]
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(70)))
            rest = rest.dropFirst(70)
        }
        lines.append(SSHEd25519Identity.end)
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }
}
