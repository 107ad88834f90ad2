import Foundation
import TestSupport
import Testing

/// Every case of `Fixtures/damaged/` through the binary: the exact exit status, the message, and no plaintext.
@Suite struct DamagedCorpusCLITests {
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        var file: String
        var description: String
        var expectStatus: Int32
        var expectMessage: String
        var testDescription: String { file }
    }

    struct Manifest: Decodable, Sendable {
        var password: String
        var canaryName: String
        var canaryValue: String
        var cases: [Case]
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("damaged")
    static let manifest: Manifest? = try? JSONDecoder().decode(
        Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))

    @Test func test_corpus_hasAtLeastSixtyCases() {
        #expect((Self.manifest?.cases.count ?? 0) >= 60, "Fixtures/damaged/manifest.json is missing or short")
    }

    @Test(arguments: manifest?.cases ?? [])
    func test_verifyAndGet_exitAsTheManifestSays(item: Case) throws {
        let manifest = try #require(Self.manifest)
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array(manifest.password.utf8))
        // A private copy: the corpus itself is never touched, not even by a lock file.
        try cli.write(item.file, Array(try Data(contentsOf: Self.folder.appendingPathComponent(item.file))))
        let verify = try cli.run(["verify"] + cli.unlock(item.file))
        #expect(verify.status == item.expectStatus, "\(item.description): \(verify.stderr)")
        let message = item.expectStatus == 0 ? "intact" : item.expectMessage
        #expect(verify.stderr.contains(message), "'\(verify.stderr)' lacks '\(message)'")
        let get = try cli.run(["get", manifest.canaryName] + cli.unlock(item.file))
        #expect(get.status == item.expectStatus, "get exits \(get.status)")
        if item.expectStatus == 0 {
            #expect(get.text == manifest.canaryValue)
        } else {
            #expect(get.stdout.isEmpty, "a failed get printed data")
            #expect(!get.stderr.contains(manifest.canaryValue) && !verify.stderr.contains(manifest.canaryValue))
        }
    }
}
