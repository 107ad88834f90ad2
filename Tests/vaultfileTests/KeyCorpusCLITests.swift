import Foundation
import TestSupport
import Testing

/// Every hostile key file of `Fixtures/damaged/keys/` through the binary: identity files and
/// OpenSSH keys (--identity), recipients files (slot add recipients-file), recovery codes
/// (--recovery-file), OpenSSH private keys stored as entries (set --ssh-key), against a copy of
/// the corpus's intact vault.
@Suite struct KeyCorpusCLITests {
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        var file: String
        var use: String
        var description: String
        var expectStatus: Int32
        var expectMessage: String
        var testDescription: String { file }
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("damaged/keys")
    static let cases: [Case] = (try? JSONDecoder().decode([Case].self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))) ?? []

    @Test func test_corpus_coversEveryParser() {
        #expect(Set(Self.cases.map(\.use)) == ["identity", "recipients", "recovery", "ssh-key"], "Fixtures/damaged/keys/manifest.json is missing or short")
        #expect(Self.cases.count >= 20)
    }

    @Test(arguments: cases)
    func test_keyFile_exitsAsTheManifestSays(item: Case) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let damaged = ProjectPaths.fixtures.appendingPathComponent("damaged")
        try cli.write("v.vault", Array(try Data(contentsOf: damaged.appendingPathComponent("ok-base.vault"))))
        try cli.write("pw", Array("damaged-corpus".utf8))
        let before = try cli.read("v.vault")
        let key = Self.folder.appendingPathComponent(item.file).path
        let arguments: [String]
        switch item.use {
        case "identity": arguments = ["get", "canary/secret", "--vault", cli.path("v.vault"), "--identity", key]
        case "recipients": arguments = ["slot", "add", "recipients-file", key, "--vault", cli.path("v.vault"), "--password-file", cli.path("pw")]
        case "ssh-key": arguments = ["set", "probe/key", "--ssh-key", "--value-file", key, "--vault", cli.path("v.vault"), "--password-file", cli.path("pw")]
        default: arguments = ["get", "canary/secret", "--vault", cli.path("v.vault"), "--recovery-file", key]
        }
        let result = try cli.run(arguments)
        #expect(result.status == item.expectStatus, "\(item.description): \(result.stderr)")
        #expect(result.stderr.contains(item.expectMessage), "'\(result.stderr)' lacks '\(item.expectMessage)'")
        #expect(result.stdout.isEmpty && !result.stderr.contains("PLAINTEXT-CANARY"))
        #expect(!result.stderr.uppercased().contains("GFPYYSJZGFPYYSJZ"), "a message quoted a key")
        #expect(try cli.read("v.vault") == before, "a refused key changed the vault")
    }
}
