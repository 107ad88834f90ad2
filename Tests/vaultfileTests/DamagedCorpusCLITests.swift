import Foundation
import KDF
import TestSupport
import SecureMemory
import Testing
import VaultModel
@testable import vaultfile

/// Every case of `Fixtures/damaged/` as the CLI ends on it: the exact exit status, the message, and no plaintext.
///
/// Every case runs in-process through the code `verify` and `get` run (their parsed options,
/// the store, `ErrorReport`); the first and the last case of each exit status also run
/// through the binary, for what only a process shows (its status, its stdout, its stderr).
@Suite struct DamagedCorpusCLITests {
    typealias Case = DamagedCorpus.Case

    static let manifest = DamagedCorpus.manifest

    /// The cases run through the binary: the first and the last of each exit status in the manifest.
    static let throughTheBinary: [Case] = {
        let cases = manifest?.cases ?? []
        return Set(cases.map(\.expectStatus)).sorted().flatMap { status in
            let same = cases.filter { $0.expectStatus == status }
            return same.count > 1 ? [same[0], same[same.count - 1]] : same
        }
    }()

    @Test func test_corpus_hasAtLeastSixtyCases() {
        #expect((Self.manifest?.cases.count ?? 0) >= 60, "Fixtures/damaged/manifest.json is missing or short")
        #expect(Set(Self.throughTheBinary.map(\.expectStatus)) == Set(Self.manifest?.cases.map(\.expectStatus) ?? []),
                "every exit status of the manifest runs through the binary")
    }

    // MARK: - In-process: every case

    /// The unlock options of `verify` and of `get`, parsed as the binary parses them. Parsed once:
    /// parsing costs ~16 ms in a debug build and is the same for every case, which then points
    /// `--vault` at its file.
    static let parsedCommands: [(name: String, unlock: UnlockOptions)]? = {
        let unlock = ["--vault", "case.vault", "--password-file", "pw"]
        guard let verify = try? VaultfileCommand.parseAsRoot(["verify"] + unlock) as? VaultfileCommand.Verify,
              let get = try? VaultfileCommand.parseAsRoot(["get", manifest?.canaryName ?? "x"] + unlock) as? VaultfileCommand.Get,
              get.name == manifest?.canaryName, get.field == nil
        else { return nil }
        return [("verify", verify.unlock), ("get", get.unlock)]
    }()

    /// What `verify` and `get` do before they print: `UnlockOptions.open()` (the store, read-only
    /// and without a lock, with the parsed KDF caps) less its weak-KDF warning; a failure becomes
    /// the `ErrorReport` that `main()` prints and exits with. The password is given as read:
    /// its sources are CLITests' (test_passwordSources_…).
    @Test(arguments: manifest?.cases ?? [])
    func test_verifyAndGet_reportWhatTheManifestSaysInProcess(item: Case) throws {
        let manifest = try #require(Self.manifest)
        let commands = try #require(Self.parsedCommands, "verify or get no longer parses")
        for (name, parsed) in commands {
            let expected = name == "get" ? item.statusOfGet : item.expectStatus
            var options = parsed
            options.location.vault = DamagedCorpus.folder.appendingPathComponent(item.file).path
            do {
                let password = SecureBytes(copying: Array(manifest.password.utf8))
                let unlocked = try options.location.store.open(password: password, limits: try options.limits())
                // As Verify.run: the history section, which `get` never reads, checked whole.
                if name == "verify" { try unlocked.vault.checkHistory() }
                #expect(expected == 0, "\(name) \(item.file) opened but should fail: \(item.description)")
                #expect(try unlocked.vault.withValue(of: manifest.canaryName) { Array($0) } == Array(manifest.canaryValue.utf8))
            } catch {
                let report = try #require(ErrorReport(error), "\(item.file): \(error) is not mapped")
                #expect(report.status.rawValue == expected, "\(name) \(item.file): \(item.description): \(report.description)")
                #expect(report.description.contains(item.expectMessage), "'\(report.description)' lacks '\(item.expectMessage)'")
                #expect(!report.description.contains(manifest.canaryValue) && !(report.hint ?? "").contains(manifest.canaryValue))
            }
        }
    }

    // MARK: - Through the binary: each exit status

    @Test(arguments: throughTheBinary)
    func test_verifyAndGet_exitAsTheManifestSays(item: Case) throws {
        let manifest = try #require(Self.manifest)
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array(manifest.password.utf8))
        // A private copy: the corpus itself is never touched, not even by a lock file.
        try cli.write(item.file, try DamagedCorpus.bytes(of: item))
        let verify = try cli.run(["verify"] + cli.unlock(item.file))
        #expect(verify.status == item.expectStatus, "\(item.description): \(verify.stderr)")
        let message = item.expectStatus == 0 ? "intact" : item.expectMessage
        #expect(verify.stderr.contains(message), "'\(verify.stderr)' lacks '\(message)'")
        let get = try cli.run(["get", manifest.canaryName] + cli.unlock(item.file))
        #expect(get.status == item.statusOfGet, "get exits \(get.status)")
        if item.statusOfGet == 0 {
            #expect(get.text == manifest.canaryValue)
        } else {
            #expect(get.stdout.isEmpty, "a failed get printed data")
            #expect(!get.stderr.contains(manifest.canaryValue) && !verify.stderr.contains(manifest.canaryValue))
        }
    }
}

extension DamagedCorpus.Case: CustomTestStringConvertible {
    /// The file's name, as the test report shows each case.
    public var testDescription: String { file }
}
