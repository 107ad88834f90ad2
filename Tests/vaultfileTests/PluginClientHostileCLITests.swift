import Foundation
import TestSupport
import Testing

/// Plugins that misbehave, and plugin binaries where vaultfile must not look: every case is
/// refused with the plugin named, nothing is stored or written, and the plugin is reaped.
@Suite struct PluginClientHostileCLITests {
    /// A vault with an entry, the plugin, and an age file of that entry made through the plugin (`x.age`).
    static func sharedFile() throws -> (CLI, PluginHarness) {
        let cli = try CLI.withVault(["x": "value"])
        let plugin = try PluginHarness(cli)
        let file = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment())
        #expect(file.status == 0, "\(file.stderr)")
        try cli.write("x.age", file.stdout)
        return (cli, plugin)
    }

    /// `receive` of `x.age` with the plugin in `mode`: the result, and whether anything was stored.
    static func receive(_ cli: CLI, _ plugin: PluginHarness, mode: String, timeout: Int = 5) throws -> (CLI.Result, stored: Bool) {
        let result = try plugin.runBounded(["receive", "got", cli.path("x.age"), "--identity", cli.path("id.txt")] + cli.unlock(),
                                           extra: plugin.environment(mode: mode, timeout: timeout))
        let stored = try cli.run(["get", "got"] + cli.unlock()).status == 0
        return (result, stored)
    }

    // MARK: - identity-v1 answers

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"),
          arguments: [("wrong-key-length", "a file key of 17 bytes"), ("duplicate-file-key", "a second 'file-key' for file 0"),
                      ("extra-file-key", "'file-key' names no file index that was sent"), ("huge-message", "65536 bytes")])
    func test_receive_refusesABadAnswerOfThePlugin(mode: String, shows: String) throws {
        let (cli, plugin) = try Self.sharedFile()
        let (result, stored) = try Self.receive(cli, plugin, mode: mode)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("age-plugin-vftest") && result.stderr.contains(shows), "\(result.stderr)")
        #expect(!stored)
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_receive_aPluginThatHangsIsStoppedAtTheDeadline() throws {
        let (cli, plugin) = try Self.sharedFile()
        let started = Date()
        let (result, stored) = try Self.receive(cli, plugin, mode: "hang", timeout: 2)
        #expect(Date().timeIntervalSince(started) < 25)
        #expect(result.stderr.contains("age-plugin-vftest sent nothing for 2 s during phase 2"), "\(result.stderr)")
        #expect(result.stderr.contains("VAULTFILE_PLUGIN_TIMEOUT"))
        #expect(!stored)
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_receive_aPluginThatExitsMidPhaseIsNamed() throws {
        let (cli, plugin) = try Self.sharedFile()
        let (result, stored) = try Self.receive(cli, plugin, mode: "exit-mid-phase")
        #expect(result.status != 0)
        #expect(result.stderr.contains("age-plugin-vftest ended in the middle of phase 2"), "\(result.stderr)")
        #expect(!stored)
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_receive_answersUnsupportedToAnUnknownCommandAndGoesOn() throws {
        let (cli, plugin) = try Self.sharedFile()
        let (result, stored) = try Self.receive(cli, plugin, mode: "unknown-command")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(plugin.takeLog().contains("unknown answered unsupported"))
        #expect(stored)
    }

    // MARK: - recipient-v1 answers

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"),
          arguments: [("too-many-stanzas", "more than 1 stanzas for one file key"), ("big-stanza", "a stanza body of"),
                      ("stanza-for-other-file", "names no file index that was sent")])
    func test_share_refusesABadWrapOfThePlugin(mode: String, shows: String) throws {
        let cli = try CLI.withVault(["x": "value"])
        let plugin = try PluginHarness(cli)
        let result = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient, "--out", cli.path("o.age")] + cli.unlock(),
                                           extra: plugin.environment(mode: mode))
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains(shows), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("o.age")))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_share_showsThePluginsErrorWithItsName() throws {
        let cli = try CLI.withVault(["x": "value"])
        let plugin = try PluginHarness(cli)
        let result = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment(mode: "error"))
        #expect(result.status != 0)
        #expect(result.stderr.contains("age-plugin-vftest reported an error (recipient): the test key refuses this recipient"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_share_aPluginAskingExclusivityIsRefusedBesideOthersAndAcceptedAlone() throws {
        let cli = try CLI.withVault(["x": "value"])
        let plugin = try PluginHarness(cli)
        let other = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
        let mixed = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient, "--recipient", other] + cli.unlock(),
                                          extra: plugin.environment(mode: "labels"))
        #expect(mixed.status != 0)
        #expect(mixed.stderr.contains("not be mixed"), "\(mixed.stderr)")
        let alone = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment(mode: "labels"))
        #expect(alone.status == 0, "\(alone.stderr)")
        let slot = try plugin.runBounded(["slot", "add", "recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment(mode: "labels"))
        #expect(slot.status != 0)
        #expect(slot.stderr.contains("not be mixed"), "\(slot.stderr)")
    }

    // MARK: - Where the binary is looked for

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"),
          arguments: [".", "", "bin", "./bin"])
    func test_share_neverRunsAPluginFromARelativeOrEmptyPATHEntry(entry: String) throws {
        let cli = try CLI.withVault(["x": "value"])
        let plugin = try PluginHarness(cli)
        if entry == "." || entry == "" {
            try FileManager.default.copyItem(atPath: cli.path("bin/age-plugin-vftest"), toPath: cli.path("age-plugin-vftest"))
        }
        let path = entry == "" ? ":/usr/bin:/bin" : entry + ":/usr/bin:/bin"
        let result = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(),
                                           extra: plugin.environment().merging(["PATH": path]) { $1 })
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("age-plugin-vftest is not installed"), "\(result.stderr)")
        #expect(plugin.takeLog().isEmpty, "the plugin ran")
    }
}
