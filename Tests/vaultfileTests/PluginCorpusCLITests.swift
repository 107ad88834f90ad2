import Foundation
import TestSupport
import Testing

/// The age plugin slot cases of the damaged corpus (`Fixtures/damaged/plugin-*`, written by
/// `PluginCorpusWriter`) through the binary: each ends as the manifest says and none starts a
/// plugin, though the plugins they name are on PATH and the user's default identity is a plugin's;
/// a plugin starts only when the user's own identity asks for it. Every other check of these
/// cases (exit status and message of `verify` and `get` in-process, the library's errors) runs in
/// DamagedCorpusTests and DamagedCorpusCLITests with the rest of the corpus.
@Suite struct PluginCorpusCLITests {
    typealias Case = DamagedCorpus.Case

    static let cases: [Case] = (DamagedCorpus.manifest?.cases ?? []).filter { $0.file.hasPrefix("plugin-") }
    static let keyCases: [String] = {
        let url = DamagedCorpus.folder.appendingPathComponent("keys/manifest.json")
        guard let data = try? Data(contentsOf: url), let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        return list.compactMap { $0["file"] as? String }.filter { $0.contains("plugin") }
    }()

    /// A test folder with the test plugin (logging every start to `plugin.log`), a tripwire
    /// `age-plugin-vfabsent` (writing `tripwire.log` if it is ever started) and the test plugin's
    /// identity as the default identity (config/vaultfile/identity.txt).
    static func trappedFolder() throws -> (CLI, PluginHarness) {
        let cli = try CLI()
        let plugin = try PluginHarness(cli)
        try cli.write("bin/age-plugin-\(PluginCorpusWriter.absentName)", Array("#!/bin/sh\necho \"$0 $*\" >> \(cli.path("tripwire.log"))\nexit 1\n".utf8), mode: 0o755)
        try FileManager.default.createDirectory(atPath: cli.configDirectory + "/vaultfile", withIntermediateDirectories: true)
        try cli.write("config/vaultfile/identity.txt", Array("\(plugin.identity)\n".utf8))
        try cli.write("pw", Array((DamagedCorpus.manifest?.password ?? "").utf8))
        return (cli, plugin)
    }

    // MARK: - The corpus

    @Test func test_corpus_holdsThePluginSlotAndPluginKeyCases() {
        #expect(Self.cases.count >= 20, "Fixtures/damaged lacks the plugin slot cases")
        #expect(Self.cases.filter { $0.expectStatus == 0 }.map(\.file) == ["plugin-ok.vault", "plugin-absent-ok.vault"])
        #expect(Set(Self.cases.map(\.expectStatus)) == [0, 4])
        #expect(Self.keyCases.count >= 8, "Fixtures/damaged/keys lacks the plugin identity and recipient cases")
    }

    // MARK: - No plugin starts unless the user's identity asks

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_verify_everyPluginCaseEndsAsTheManifestSaysAndStartsNoPlugin() throws {
        let (cli, plugin) = try Self.trappedFolder(); defer { cli.directory.remove() }
        for item in Self.cases {
            try cli.write(item.file, try DamagedCorpus.bytes(of: item))
            let verified = try plugin.runBounded(["verify"] + cli.unlock(item.file), extra: plugin.environment(), seconds: 20)
            #expect(verified.status == item.expectStatus, "\(item.file): \(item.description): \(verified.stderr)")
            #expect(verified.stderr.contains(item.expectStatus == 0 ? "intact" : item.expectMessage), "\(item.file): \(verified.stderr)")
            #expect(plugin.takeLog().isEmpty, "\(item.file): verify with the password started age-plugin-vftest")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.path("tripwire.log")), "a vault's metadata started age-plugin-vfabsent")
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_thePluginRunsWhenTheUsersIdentityAsksForIt() throws {
        let (cli, plugin) = try Self.trappedFolder(); defer { cli.directory.remove() }
        let manifest = try #require(DamagedCorpus.manifest)
        let item = try #require(Self.cases.first { $0.file == "plugin-ok.vault" })
        try cli.write(item.file, try DamagedCorpus.bytes(of: item))
        // No password: the default identity (the test plugin's) is what the user gave.
        let got = try plugin.runBounded(["get", manifest.canaryName, "--vault", cli.path(item.file)], extra: plugin.environment(), seconds: 20)
        #expect(got.status == 0 && got.text == manifest.canaryValue, "\(got.stderr)")
        #expect(plugin.takeLog().contains("argv --age-plugin=identity-v1"))
        // A header damaged in its plugin slot is refused before any plugin is started for it.
        let hostile = try #require(Self.cases.first { $0.file == "plugin-stanzas-9.vault" })
        try cli.write(hostile.file, try DamagedCorpus.bytes(of: hostile))
        let refused = try plugin.runBounded(["get", manifest.canaryName, "--vault", cli.path(hostile.file), "--identity", cli.path("id.txt")],
                                            extra: plugin.environment(), seconds: 20)
        #expect(refused.status == 4 && refused.stdout.isEmpty && refused.stderr.contains(hostile.expectMessage), "\(refused.stderr)")
        #expect(plugin.takeLog().isEmpty, "a damaged header started the plugin")
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_rekey_aSlotWhosePluginIsAbsentStopsNamingItBeforeAnyWrap() throws {
        let (cli, plugin) = try Self.trappedFolder(); defer { cli.directory.remove() }
        let item = try #require(Self.cases.first { $0.file == "plugin-absent-ok.vault" })
        try cli.write(item.file, try DamagedCorpus.bytes(of: item))
        try FileManager.default.removeItem(atPath: cli.path("bin/age-plugin-\(PluginCorpusWriter.absentName)"))
        let rekeyed = try plugin.runBounded(["rekey"] + cli.unlock(item.file), extra: plugin.environment(), seconds: 20)
        #expect(rekeyed.status == 1, "\(rekeyed.stderr)")
        #expect(rekeyed.stderr.contains("age-plugin-\(PluginCorpusWriter.absentName) is not installed"), "\(rekeyed.stderr)")
        #expect(rekeyed.stderr.contains("install age-plugin-\(PluginCorpusWriter.absentName)"), "\(rekeyed.stderr)")
        #expect(try cli.read(item.file) == (try DamagedCorpus.bytes(of: item)), "a stopped rotation changed the vault")
        #expect(plugin.takeLog().isEmpty)
    }
}
