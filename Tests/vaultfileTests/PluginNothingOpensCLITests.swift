import Foundation
import TestSupport
import Testing

/// What a command says when a vault with an age plugin keyslot does not open (issue 41's one
/// wording): the sources tried and the plugin they ran, where identities are looked for, and what
/// to do, for no identity, a plugin identity of another key, a plugin that refuses or breaks off,
/// and a plugin that is not installed. Through the binary and the test plugin, every run bounded.
@Suite struct PluginNothingOpensCLITests {
    /// A vault whose only keyslot is the test plugin's (`p.vault`), its entry `k`.
    static func pluginOnlyVault() throws -> (CLI, PluginHarness) {
        let cli = try CLI()
        let plugin = try PluginHarness(cli)
        let made = try plugin.runBounded(["init", "--vault", cli.path("p.vault"), "--recipient", plugin.recipient], extra: plugin.environment())
        #expect(made.status == 0, "\(made.stderr)")
        let set = try plugin.runBounded(["set", "k", "--vault", cli.path("p.vault"), "--identity", cli.path("id.txt")], stdin: Array("v".utf8),
                                        extra: plugin.environment())
        #expect(set.status == 0, "\(set.stderr)")
        _ = plugin.takeLog()
        return (cli, plugin)
    }

    /// `get k` of `p.vault` with `arguments` and the plugin's environment (`mode`, `extra`).
    static func get(_ cli: CLI, _ plugin: PluginHarness, _ arguments: [String], mode: String = "normal",
                    extra: [String: String] = [:]) throws -> CLI.Result {
        try plugin.runBounded(["get", "k", "--vault", cli.path("p.vault")] + arguments, extra: plugin.environment(mode: mode, extra: extra), seconds: 20)
    }

    // MARK: - Success (the control)

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aPluginOnlyVaultOpensWithItsPluginIdentity() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        let got = try Self.get(cli, plugin, ["--identity", cli.path("id.txt")])
        #expect(got.status == 0 && got.text == "v", "\(got.stderr)")
    }

    // MARK: - Failure

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_withNoIdentitySaysWherePluginIdentitiesGoAndNeverMentionsAPassword() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        let got = try Self.get(cli, plugin, [])
        #expect(got.status == 3 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("nothing to open the vault with: no identity or key was given, and none was found in \(cli.configDirectory)/vaultfile/identity.txt"),
                "\(got.stderr)")
        #expect(got.stderr.contains("an age plugin identity (the AGE-PLUGIN-NAME-1… line that age-plugin-NAME prints"), "\(got.stderr)")
        #expect(got.stderr.contains("stanzas of type 'vftest'"), "\(got.stderr)")
        #expect(!got.stderr.lowercased().contains("password"), "\(got.stderr)")
        #expect(plugin.takeLog().isEmpty, "a plugin started with no identity given")
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aPluginIdentityOfAnotherKeyNamesThePluginThatRanAndTheFile() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        let other = try PluginHarness(cli, seed: String(repeating: "7", count: 64))
        try cli.write("other.txt", Array((other.identity + "\n").utf8))
        let got = try Self.get(cli, plugin, ["--identity", cli.path("other.txt")])
        #expect(got.status == 3 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("no keyslot of the vault opens with --identity \(cli.path("other.txt")) (through age-plugin-vftest)"), "\(got.stderr)")
        #expect(got.stderr.contains("age-plugin-vftest ran and unwrapped none of the vault's age plugin keyslots"), "\(got.stderr)")
        #expect(got.stderr.contains("plug in the device the plugin identity is for"), "\(got.stderr)")
        #expect(!got.stderr.contains(other.identity) && !got.stderr.lowercased().contains("password"), "\(got.stderr)")
        #expect(plugin.takeLog().contains("argv --age-plugin=identity-v1"))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aPluginThatRefusesIsNamedWithWhatToDo() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        // A PIN asked with no terminal is answered "fail"; the plugin then refuses.
        let got = try Self.get(cli, plugin, ["--identity", cli.path("id.txt")], extra: ["VFTEST_PIN": "1234"])
        #expect(got.status == 2 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("the age plugin age-plugin-vftest reported an error (identity): wrong PIN"), "\(got.stderr)")
        #expect(got.stderr.contains("hint: do what age-plugin-vftest asks (plug in its device, give the right PIN"), "\(got.stderr)")
        #expect(!got.stderr.contains(plugin.identity))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aPluginThatEndsMidPhaseIsNamedWithWhatToDo() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        let got = try Self.get(cli, plugin, ["--identity", cli.path("id.txt")], mode: "exit-mid-phase")
        #expect(got.status != 0 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("the age plugin age-plugin-vftest ended in the middle of"), "\(got.stderr)")
        #expect(got.stderr.contains("hint: check that age-plugin-vftest runs on its own"), "\(got.stderr)")
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aMissingPluginIsNamedWithWhereItWasLookedFor() throws {
        let (cli, plugin) = try Self.pluginOnlyVault(); defer { cli.directory.remove() }
        let got = try Self.get(cli, plugin, ["--identity", cli.path("id.txt")], extra: ["PATH": "/usr/bin:.:/bin"])
        #expect(got.status == 1 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("the age plugin age-plugin-vftest is not installed (searched /usr/bin:/bin; relative and empty PATH entries are never searched)"),
                "\(got.stderr)")
        #expect(got.stderr.contains("hint: install age-plugin-vftest in a folder of PATH given as an absolute path"), "\(got.stderr)")
    }

    // MARK: - Edge

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_get_aPluginIdentityForAVaultWithoutPluginSlotsStartsNothingAndSaysSo() throws {
        let cli = try CLI.withVault(["k": "v"]); defer { cli.directory.remove() }
        let plugin = try PluginHarness(cli)
        let got = try plugin.runBounded(["get", "k", "--vault", cli.path("t.vault"), "--identity", cli.path("id.txt")], extra: plugin.environment())
        #expect(got.status == 3 && got.stdout.isEmpty, "\(got.stderr)")
        #expect(got.stderr.contains("the vault has no age plugin keyslot, so age-plugin-vftest was not started"), "\(got.stderr)")
        #expect(got.stderr.contains("this vault opens with a password"), "\(got.stderr)")
        #expect(plugin.takeLog().isEmpty, "a plugin started for a vault without plugin slots")
    }
}
