import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The age test vectors of C2SP's CCTV (Fixtures/vectors/age-cctv, see SOURCE.md there): every
/// vector whose features vaultfile reads gives its payload's hash or fails as it expects, with
/// nothing returned, the 19 post-quantum ones (`mlkem768x25519`, identities `AGE-SECRET-KEY-PQ-1…`) too.
@Suite struct AgeCCTVTests {
    static let folder = ProjectPaths.fixtures.appendingPathComponent("vectors/age-cctv")

    /// One vector: its textual header and its age file.
    struct Vector {
        let name: String
        let expect: String
        let payloadHash: String?
        let identities: [String]
        let passphrase: String?
        let file: [UInt8]

        init(name: String, bytes: [UInt8]) throws {
            self.name = name
            var fields: [(String, String)] = []
            var index = 0
            while index < bytes.count {
                let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
                let line = String(decoding: bytes[index..<end], as: UTF8.self)
                index = end + 1
                if line.isEmpty { break }
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                fields.append((parts[0], parts.count > 1 ? parts[1] : ""))
            }
            func field(_ key: String) -> String? { fields.first { $0.0 == key }?.1 }
            expect = field("expect") ?? ""
            payloadHash = field("payload")
            identities = fields.filter { $0.0 == "identity" }.map(\.1)
            passphrase = field("passphrase")
            let body = Array(bytes[min(index, bytes.count)...])
            file = field("compressed") == "zlib" ? try Self.inflate(body) : body
        }

        /// zlib's inflate, through python3 (the vectors keep their compressed form).
        static func inflate(_ bytes: [UInt8]) throws -> [UInt8] {
            let script = "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))"
            let output = try ChildProcess(executable: "/usr/bin/python3", arguments: ["-c", script], environment: ["PATH": "/usr/bin:/bin"],
                                          directory: "/", stdin: bytes).finish()
            guard output.ending == .exit(0) else { throw CocoaError(.fileReadCorruptFile) }
            return output.stdout
        }

        var isPostQuantum: Bool { identities.contains { $0.hasPrefix("AGE-SECRET-KEY-PQ-") } }
    }

    static func vectors() throws -> [Vector] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "SOURCE.md" }.sorted()
        return try names.map { try Vector(name: $0, bytes: Array(Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    /// Whether `error` is the failure `expect` names.
    static func matches(_ error: AgeFileError, _ expect: String) -> Bool {
        switch expect {
        case "no match": return error.category == .wrongPassword
        case "HMAC failure": return error == .headerMACFailed
        case "armor failure": if case .armorMalformed = error { return true } else { return false }
        case "payload failure": if case .payloadDamaged = error { return true } else { return false }
        case "header failure":
            switch error {
            case .armorMalformed, .payloadDamaged, .headerMACFailed: return false
            default: return [.damaged, .unsupported, .overLimit].contains(error.category)
            }
        default: return false
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed: the zlib-compressed CCTV vectors cannot be read; skipped"))
    func test_decrypt_everySupportedCCTVVectorGivesItsOutcome() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 143)
        var passed = 0, postQuantum = 0
        for vector in vectors {
            var identities: [any AgeFileIdentity] = []
            for text in vector.identities {
                identities.append(AgePQIdentity.looksLike(text) ? try AgePQIdentity(parsing: text) : try AgeIdentity(parsing: text))
            }
            if vector.isPostQuantum { postQuantum += 1 }
            let passphrase = vector.passphrase.map { SecureBytes(copying: Array($0.utf8)) }
            do {
                let plaintext = try AgeFile.decrypt(vector.file, identities: identities, passphrase: passphrase)
                let hash = Hex.encode(SHA256.hash(plaintext.withUnsafeBytes { Array($0) }))
                #expect(vector.expect == "success", "\(vector.name): opened, but expected \(vector.expect)")
                #expect(hash == vector.payloadHash, "\(vector.name): payload hash")
                if vector.expect == "success", hash == vector.payloadHash { passed += 1 }
            } catch {
                #expect(Self.matches(error, vector.expect), "\(vector.name): expected \(vector.expect), got \(error)")
                if Self.matches(error, vector.expect) { passed += 1 }
            }
        }
        print("age CCTV vectors: \(passed) passed of \(vectors.count), \(postQuantum) of them post-quantum")
        #expect(postQuantum == 19)
        #expect(passed == vectors.count)
    }
}
