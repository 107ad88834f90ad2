import Foundation
import TestSupport
import Testing

/// vaultfile as an age plugin client: `share` to `age1NAME1…`, `receive` with `AGE-PLUGIN-NAME-1…`,
/// plugin keyslots (type 9) through the test plugin age-plugin-vftest, and Debian's age 1.1.1
/// running the same plugin on the other side.
@Suite struct PluginClientCLITests {
    // MARK: - share and receive

    @Test(.enabled(if: PluginHarness.hasAge, "python3 or age is not installed: skipped"))
    func test_share_toAPluginRecipientOpensWithAgeDashDThroughThePlugin() throws {
        let cli = try CLI.withVault(["db/password": "plugin s3cret\n"])
        let plugin = try PluginHarness(cli)
        // The unlock variables are set for vaultfile, and must not reach the plugin.
        let secrets = ["VAULTFILE_PASSWORD": "pw", "VAULTFILE_PASSWORD_FILE": cli.path("pw"), "VAULTFILE_IDENTITY_FILE": cli.path("none")]
        let shared = try plugin.runBounded(["share", "db/password", "--recipient", plugin.recipient, "--out", cli.path("s.age")] + cli.unlock(),
                                           extra: plugin.environment(extra: secrets))
        #expect(shared.status == 0, "\(shared.stderr)")
        let file = try cli.read("s.age")
        #expect(file.starts(with: Array("age-encryption.org/v1\n-> vftest ".utf8)))
        let log = plugin.takeLog()
        // recipient-v1 as the spec has it, extension-labels sent, grease sent, no unlock variable passed on.
        #expect(log.contains("argv --age-plugin=recipient-v1"))
        #expect(log.contains("got add-recipient " + plugin.recipient))
        #expect(log.contains("got extension-labels"))
        #expect(log.contains("got grease-"))
        let names = log.split(separator: "\n").first { $0.hasPrefix("env ") }?.split(separator: " ").map(String.init) ?? []
        #expect(names.contains("VFTEST_MODE"), "\(log)")
        #expect(!names.contains { $0.hasPrefix("VAULTFILE_PASSWORD") || $0.hasPrefix("VAULTFILE_IDENTITY") || $0 == "VAULTFILE_KEYFILE" }, "\(names)")
        let opened = try plugin.tool("/usr/bin/age", ["-d", "-i", cli.path("id.txt"), cli.path("s.age")])
        #expect(opened.ending == .exit(0), "\(String(decoding: opened.stderr, as: UTF8.self))")
        #expect(opened.stdout == Array("plugin s3cret\n".utf8))
    }

    @Test(.enabled(if: PluginHarness.hasAge, "python3 or age is not installed: skipped"))
    func test_receive_opensAnAgeFileMadeByAgeWithThePluginIdentity() throws {
        let cli = try CLI.withVault([:])
        let plugin = try PluginHarness(cli)
        let made = try plugin.tool("/usr/bin/age", ["-r", plugin.recipient, "-o", cli.path("in.age")], stdin: Array("from age\n".utf8))
        #expect(made.ending == .exit(0), "\(String(decoding: made.stderr, as: UTF8.self))")
        let received = try plugin.runBounded(["receive", "shared/token", cli.path("in.age"), "--identity", cli.path("id.txt")] + cli.unlock(),
                                             extra: plugin.environment())
        #expect(received.status == 0, "\(received.stderr)")
        #expect(plugin.takeLog().contains("argv --age-plugin=identity-v1"))
        let got = try cli.run(["get", "shared/token"] + cli.unlock())
        #expect(got.stdout == Array("from age\n".utf8))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_receive_findsThePluginIdentityInTheDefaultIdentityFile() throws {
        let cli = try CLI.withVault(["v": "round trip"])
        let plugin = try PluginHarness(cli)
        try FileManager.default.createDirectory(atPath: cli.configDirectory + "/vaultfile", withIntermediateDirectories: true)
        try cli.write("config/vaultfile/identity.txt", Array("# test key\n\(plugin.identity)\n".utf8))
        let shared = try plugin.runBounded(["share", "v", "--recipient", plugin.recipient, "--out", cli.path("s.age")] + cli.unlock(),
                                           extra: plugin.environment())
        #expect(shared.status == 0, "\(shared.stderr)")
        let received = try plugin.runBounded(["receive", "copy", cli.path("s.age")] + cli.unlock(), extra: plugin.environment())
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try cli.run(["get", "copy"] + cli.unlock()).stdout == Array("round trip".utf8))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_receive_withoutATerminalAPINRequestIsAnsweredFail() throws {
        let cli = try CLI.withVault([:])
        let plugin = try PluginHarness(cli)
        let shared = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment())
        #expect(shared.status != 0) // no entry x: nothing written
        try cli.run(["set", "x"] + cli.unlock(), stdin: Array("v".utf8))
        let file = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment())
        try cli.write("x.age", file.stdout)
        let received = try plugin.runBounded(["receive", "y", cli.path("x.age"), "--identity", cli.path("id.txt")] + cli.unlock(),
                                             extra: plugin.environment(extra: ["VFTEST_PIN": "1234"]))
        // No terminal: the client answered 'fail', so the plugin reported a wrong PIN, shown with its name.
        #expect(received.status != 0)
        #expect(received.stderr.contains("age-plugin-vftest reported an error (identity): wrong PIN"), "\(received.stderr)")
    }

    @Test(.enabled(if: PluginHarness.hasPython && CLI.hasScript, "python3 or script is not installed: skipped"))
    func test_receive_asksThePINOnTheTerminalWithThePluginsName() throws {
        let cli = try CLI.withVault(["x": "pin value"])
        let plugin = try PluginHarness(cli)
        let file = try plugin.runBounded(["share", "x", "--recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment())
        try cli.write("x.age", file.stdout)
        var terminal = cli
        terminal.environment = plugin.environment(timeout: 10, extra: ["VFTEST_PIN": "1234"])
        let (status, screen) = try terminal.interactive(["receive", "y", cli.path("x.age"), "--identity", cli.path("id.txt")] + cli.unlock(),
                                                        answers: [("[age-plugin-vftest] Enter the PIN", "1234")])
        // The prompt named the plugin (it was found and answered), and the PIN typed there opened the file.
        #expect(screen.contains("[answered]"), "\(screen)")
        #expect(status == 0, "\(screen)")
        #expect(try cli.run(["get", "y"] + cli.unlock()).stdout == Array("pin value".utf8))
    }

    // MARK: - Plugin keyslots

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_slotAdd_aPluginSlotOpensTheVaultThroughThePluginAndRotationsRunItAgain() throws {
        let cli = try CLI.withVault(["db/password": "slot value"])
        let plugin = try PluginHarness(cli)
        let added = try plugin.runBounded(["slot", "add", "recipient", plugin.recipient, "--label", "test key"] + cli.unlock(),
                                          extra: plugin.environment())
        #expect(added.status == 0, "\(added.stderr)")
        #expect(plugin.takeLog().contains("argv --age-plugin=recipient-v1"))
        let byPlugin = ["--vault", cli.path("t.vault"), "--identity", cli.path("id.txt")]
        let got = try plugin.runBounded(["get", "db/password"] + byPlugin, extra: plugin.environment())
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout == Array("slot value".utf8))
        #expect(plugin.takeLog().contains("argv --age-plugin=identity-v1"))
        let listed = try cli.run(["slot", "list"] + cli.unlock())
        #expect(listed.text.contains("plugin") && listed.text.contains(plugin.recipient), "\(listed.text)")
        // A rotation with the password wraps the plugin slot again through the plugin, and names it first.
        let rekeyed = try plugin.runBounded(["rekey"] + cli.unlock(), extra: plugin.environment())
        #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
        #expect(rekeyed.stderr.contains(cli.path("bin") + "/age-plugin-vftest"), "\(rekeyed.stderr)")
        #expect(plugin.takeLog().contains("argv --age-plugin=recipient-v1"))
        let again = try plugin.runBounded(["get", "db/password"] + byPlugin, extra: plugin.environment())
        #expect(again.stdout == Array("slot value".utf8), "\(again.stderr)")
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_rekey_withThePluginMissingStopsNamingItAndLeavesTheVault() throws {
        let cli = try CLI.withVault(["k": "v"])
        let plugin = try PluginHarness(cli)
        #expect(try plugin.runBounded(["slot", "add", "recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment()).status == 0)
        let before = try cli.read("t.vault")
        let rekeyed = try plugin.runBounded(["rekey"] + cli.unlock(), extra: ["PATH": "/usr/bin:/bin", "VAULTFILE_PLUGIN_TIMEOUT": "5"])
        #expect(rekeyed.status == 1, "\(rekeyed.stderr)")
        #expect(rekeyed.stderr.contains("age-plugin-vftest is not installed"), "\(rekeyed.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_textconv_neverStartsAPluginNamedByTheVault() throws {
        let cli = try CLI.withVault(["k": "v"])
        let plugin = try PluginHarness(cli)
        #expect(try plugin.runBounded(["slot", "add", "recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment()).status == 0)
        _ = plugin.takeLog()
        try FileManager.default.createDirectory(atPath: cli.configDirectory + "/vaultfile", withIntermediateDirectories: true)
        try cli.write("config/vaultfile/identity.txt", Array("\(plugin.identity)\n".utf8))
        let shown = try plugin.runBounded(["git", "textconv", cli.path("t.vault")], extra: plugin.environment())
        #expect(plugin.takeLog().isEmpty, "textconv started the plugin")
        #expect(shown.text.contains("entries not shown"), "\(shown.text)")
    }
    // MARK: - The golden fixture

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_fixture_thePluginSlotVaultOpensThroughThePluginAndWithItsPassword() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("v1.4")
        let description = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("plugin-slot.json"))) as! [String: Any]
        let cli = try CLI()
        let plugin = try PluginHarness(cli, seed: description["seed"] as! String)
        #expect(plugin.recipient == description["recipient"] as? String)
        // A copy: the fixture itself is never written.
        try cli.write("f.vault", Array(try Data(contentsOf: folder.appendingPathComponent(description["file"] as! String))))
        try cli.write("fpw", Array((description["password"] as! String).utf8))
        let info = try cli.run(["info", "--vault", cli.path("f.vault")])
        #expect(info.text.contains("format:      vaultfile 1.4") && info.text.contains("keyslot 1:   plugin"), "\(info.text)")
        for (name, value) in description["entries"] as! [String: String] {
            let byPlugin = try plugin.runBounded(["get", name, "--vault", cli.path("f.vault"), "--identity", cli.path("id.txt")], extra: plugin.environment())
            #expect(byPlugin.stdout == Array(value.utf8), "\(byPlugin.stderr)")
            let byPassword = try cli.run(["get", name, "--vault", cli.path("f.vault"), "--password-file", cli.path("fpw")])
            #expect(byPassword.stdout == Array(value.utf8), "\(byPassword.stderr)")
        }
    }
}
