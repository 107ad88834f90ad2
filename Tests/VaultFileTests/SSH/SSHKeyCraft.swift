import Foundation
import SecureMemory
@testable import VaultFormat

// MARK: - Hostile OpenSSH key files, made by hand

/// Builds OpenSSH private key files field by field, so that each hostile case changes one thing.
enum SSHKeyCraft {
    /// An armored `openssh-key-v1` file of `keys` (public blob, private section) pairs.
    static func file(_ keys: [(publicWire: [UInt8], section: [UInt8])], cipher: String = "none", kdf: String = "none",
                     kdfOptions: [UInt8] = [], count: UInt32? = nil, trailing: [UInt8] = []) -> [UInt8] {
        armored(container(keys, cipher: cipher, kdf: kdf, kdfOptions: kdfOptions, count: count) + trailing)
    }

    /// The container before armor.
    static func container(_ keys: [(publicWire: [UInt8], section: [UInt8])], cipher: String = "none", kdf: String = "none",
                          kdfOptions: [UInt8] = [], count: UInt32? = nil) -> [UInt8] {
        var blob = Array("openssh-key-v1".utf8) + [0]
        appendString(&blob, Array(cipher.utf8))
        appendString(&blob, Array(kdf.utf8))
        appendString(&blob, kdfOptions)
        appendUInt32(&blob, count ?? UInt32(keys.count))
        for key in keys { appendString(&blob, key.publicWire) }
        for key in keys { appendString(&blob, key.section) }
        return blob
    }

    /// `blob` armored in lines of 70 characters.
    static func armored(_ blob: [UInt8]) -> [UInt8] {
        let text = base64Encode(blob)
        var lines = ["-----BEGIN OPENSSH PRIVATE KEY-----"]
        var rest = Substring(text)
        while !rest.isEmpty { lines.append(String(rest.prefix(70))); rest = rest.dropFirst(70) }
        lines.append("-----END OPENSSH PRIVATE KEY-----")
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// A private section: check integers, `body` (the key's type and numbers), `comment`, padding to `block`.
    static func section(_ body: [UInt8], comment: [UInt8] = Array("c".utf8), checks: (UInt32, UInt32) = (7, 7), block: Int = 8, padding: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        appendUInt32(&out, checks.0)
        appendUInt32(&out, checks.1)
        out += body
        appendString(&out, comment)
        if let padding { return out + padding }
        var pad: UInt8 = 1
        while out.count % block != 0 { out.append(pad); pad += 1 }
        return out
    }

    /// `section(body)` whose padding bytes (when there are any; else one block of them) are all zero.
    static func zeroPadded(_ body: [UInt8]) -> [UInt8] {
        var out = section(body)
        let plain = section(body, padding: [])
        if out.count == plain.count { return plain + [UInt8](repeating: 0, count: 8) }
        for index in plain.count..<out.count { out[index] = 0 }
        return out
    }

    /// The parts of a key: its public blob and the body of its private section (type and numbers).
    static func parts(of key: SSHPrivateKey) throws -> (publicWire: [UInt8], body: [UInt8]) {
        var section = try key.privateSection()
        defer { wipe(&section) }
        var reader = SSHReader(section[8...])
        var body: [UInt8] = []
        // Walk the fields up to the comment: the body is everything before the last string and padding.
        var fields: [ArraySlice<UInt8>] = []
        while let field = reader.string() { fields.append(field) }
        for field in fields.dropLast() { appendString(&body, field) }
        return (key.publicKey.wireBytes, body)
    }

    /// SSH wire fields of `values` as strings.
    static func strings(_ values: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for value in values { appendString(&out, value) }
        return out
    }

    /// The fields of a blob (each string's bytes).
    static func fields(_ blob: [UInt8]) -> [[UInt8]] {
        var reader = SSHReader(blob[...])
        var fields: [[UInt8]] = []
        while let field = reader.string() { fields.append(Array(field)) }
        return fields
    }
}
