import Foundation
import TestSupport
import Testing

/// The default identities (issue 41): `$XDG_CONFIG_HOME/vaultfile/identity.txt` and the folder
/// `identities/` beside it, tried after every explicit source and before the password prompt,
/// without counting as a given source; `keygen -o` making its folders. Every run has HOME and
/// XDG_CONFIG_HOME in the test's own folder (CLIHarness), never the developer's.
@Suite struct DefaultIdentityCLITests {
    /// A new identity from `vaultfile keygen` (no -o): its text and its recipient.
    static func newIdentity(_ cli: CLI) throws -> (text: [UInt8], recipient: String) {
        let made = try cli.run(["keygen"])
        #expect(made.status == 0, "\(made.stderr)")
        let recipient = try #require(made.stderr.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(recipient.hasPrefix("age1"), "\(made.stderr)")
        return (made.stdout, recipient)
    }

    /// Writes `bytes` at `relative` under the test's XDG_CONFIG_HOME/vaultfile, making the folders.
    static func writeDefault(_ cli: CLI, _ relative: String, _ bytes: [UInt8], mode: Int = 0o600) throws {
        let path = cli.configDirectory + "/vaultfile/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: mode]))
    }

    /// A vault of recipients only (no password slot) at `name`, holding `a` = `v`, set through `identity`.
    static func recipientVault(_ cli: CLI, _ name: String, recipient: String) throws {
        let made = try cli.run(["init", "--vault", cli.path(name), "--recipient", recipient])
        #expect(made.status == 0, "\(made.stderr)")
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    // MARK: - The README's own line

    @Test func test_keygen_theReadmesLineOnAFreshHomeThenEveryVerbWithoutIdentity() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        // XDG_CONFIG_HOME unset (empty counts as unset): the default is ~/.config, HOME being the test's folder.
        cli.environment["XDG_CONFIG_HOME"] = ""
        let keygen = try cli.shell("\"$VF\" keygen -o ~/.config/vaultfile/identity.txt")
        #expect(keygen.status == 0, "a fresh account has no ~/.config: \(keygen.stderr)")
        let recipient = keygen.text.trimmingCharacters(in: .newlines)
        #expect(recipient.hasPrefix("age1") && !keygen.text.contains("AGE-SECRET-KEY"), "\(keygen.text)")
        #expect(keygen.stderr.contains("created the folder \(cli.path(".config")) (mode 0700)"), "\(keygen.stderr)")
        #expect(try Self.mode(cli.path(".config")) == 0o700 && Self.mode(cli.path(".config/vaultfile")) == 0o700)
        #expect(try Self.mode(cli.path(".config/vaultfile/identity.txt")) == 0o600)

        try Self.recipientVault(cli, "team.vault", recipient: recipient)
        let vault = ["--vault", cli.path("team.vault")]
        let set = try cli.run(["set", "db/password"] + vault, stdin: Array("s3cret".utf8))
        #expect(set.status == 0 && set.stderr.isEmpty, "no --identity, no warning: \(set.stderr)")
        let get = try cli.run(["get", "db/password"] + vault)
        #expect(get.status == 0 && get.text == "s3cret", "\(get.stderr)")
        #expect(try cli.run(["list"] + vault).text == "db/password\n")
    }

    @Test func test_keygen_makesMissingFoldersPrivateLeavesExistingOnesAndRefusesAFileOnTheWay() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("shared"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let made = try cli.run(["keygen", "-o", cli.path("shared/a/b/id.txt")])
        #expect(made.status == 0 && made.text.hasPrefix("age1"), "\(made.stderr)")
        #expect(try Self.mode(cli.path("shared")) == 0o755, "an existing folder is left as it is")
        #expect(try Self.mode(cli.path("shared/a")) == 0o700 && Self.mode(cli.path("shared/a/b")) == 0o700)
        #expect(try Self.mode(cli.path("shared/a/b/id.txt")) == 0o600)
        let keyfile = try cli.run(["keygen", "--keyfile", cli.path("keys/ci.key")])
        #expect(try keyfile.status == 0 && Self.mode(cli.path("keys")) == 0o700, "\(keyfile.stderr)")
        try cli.write("blocker", [1])
        let blocked = try cli.run(["keygen", "-o", cli.path("blocker/id.txt")])
        #expect(blocked.status == 2 && blocked.stdout.isEmpty, "\(blocked.stderr)")
        #expect(blocked.stderr.contains("creating \(cli.path("blocker/id.txt")) in \(cli.path("blocker")) failed: Not a directory"), "\(blocked.stderr)")
        let again = try cli.run(["keygen", "-o", cli.path("shared/a/b/id.txt")])
        #expect(again.status == 2 && again.stderr.contains("exists already"), "never replaced: \(again.stderr)")
    }

    // MARK: - Several identities, the folder

    @Test func test_defaultIdentity_severalInOneFileEachOpensItsVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let (first, second) = (try Self.newIdentity(cli), try Self.newIdentity(cli))
        try Self.writeDefault(cli, "identity.txt", Array("# mine\n\n".utf8) + first.text + Array("\n# the team's\n".utf8) + second.text)
        try Self.recipientVault(cli, "one.vault", recipient: first.recipient)
        try Self.recipientVault(cli, "two.vault", recipient: second.recipient)
        for name in ["one.vault", "two.vault"] {
            let set = try cli.run(["set", "a", "--vault", cli.path(name)], stdin: Array(name.utf8))
            #expect(set.status == 0, "\(name): \(set.stderr)")
            #expect(try cli.run(["get", "a", "--vault", cli.path(name)]).text == name)
        }
    }

    @Test func test_defaultIdentity_theFolderIsReadInNameOrderSkippingHiddenAndPublicFiles() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let work = try Self.newIdentity(cli)
        try Self.writeDefault(cli, "identities/work.txt", work.text)
        // Neither is read: a hidden file and a public key, malformed as identities, give no warning.
        try Self.writeDefault(cli, "identities/.editor-swap", Array("garbage".utf8))
        try Self.writeDefault(cli, "identities/work.txt.pub", Array("ssh-ed25519 AAAA… me".utf8))
        try Self.recipientVault(cli, "w.vault", recipient: work.recipient)
        let set = try cli.run(["set", "a", "--vault", cli.path("w.vault")], stdin: Array("v".utf8))
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set.stderr)")
        #expect(try cli.run(["get", "a", "--vault", cli.path("w.vault")]).text == "v")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen") {
            // An OpenSSH key in the folder opens an ssh-ed25519 slot.
            let key = cli.configDirectory + "/vaultfile/identities/id_ed25519"
            #expect(try cli.run(["-c", "ssh-keygen -q -t ed25519 -N '' -C me -f '\(key)'"], executable: "/bin/sh").status == 0)
            let publicLine = try String(contentsOfFile: key + ".pub", encoding: .utf8).trimmingCharacters(in: .newlines)
            try Self.recipientVault(cli, "s.vault", recipient: publicLine)
            let opened = try cli.run(["set", "a", "--vault", cli.path("s.vault")], stdin: Array("ssh".utf8))
            #expect(opened.status == 0 && opened.stderr.isEmpty, "\(opened.stderr)")
        }
    }

    // MARK: - Problems with the default files

    @Test func test_defaultIdentity_malformedIsSkippedWithAWarningAndAnExposedOneWarnsLikeSsh() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.setEntries(["a": "v"])
        try Self.writeDefault(cli, "identity.txt", Array("AGE-SECRET-KEY-1NOTAKEY\n".utf8))
        let path = cli.configDirectory + "/vaultfile/identity.txt"
        // A password source opens the vault; the broken default identity is named, its line never quoted.
        let opened = try cli.run(["get", "a"] + cli.unlock())
        #expect(opened.status == 0 && opened.text == "v", "\(opened.stderr)")
        let withEnvironment = try cli.run(["get", "a", "--vault", cli.path("t.vault")], extra: ["VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(withEnvironment.status == 0 && withEnvironment.text == "v", "\(withEnvironment.stderr)")
        // With no source, the vault with a password slot goes on to the prompt: here, no terminal.
        let noSource = try cli.shell("\"$VF\" get a --vault t.vault <&-")
        #expect(noSource.status == 2, "\(noSource.stderr)")
        #expect(noSource.stderr.contains("warning: the default identity \(path), line 1: it is not an age identity"), "\(noSource.stderr)")
        #expect(noSource.stderr.contains("this default identity is skipped"), "\(noSource.stderr)")
        #expect(noSource.stderr.contains("no password source, and no terminal to ask on"), "\(noSource.stderr)")
        #expect(!noSource.stderr.contains("NOTAKEY"))

        // A good identity that others may read is used, with a warning that says how to fix it.
        let own = try Self.newIdentity(cli)
        try Self.writeDefault(cli, "identity.txt", own.text, mode: 0o644)
        try Self.recipientVault(cli, "r.vault", recipient: own.recipient)
        let exposed = try cli.run(["set", "a", "--vault", cli.path("r.vault")], stdin: Array("v".utf8))
        #expect(exposed.status == 0, "\(exposed.stderr)")
        #expect(exposed.stderr.contains("can be read or changed by other users (mode 0644)") && exposed.stderr.contains("chmod 600 \(path)"),
                "\(exposed.stderr)")
    }

    @Test func test_defaultIdentity_aFolderInItsPlaceIsSkippedAndNamed() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let own = try Self.newIdentity(cli)
        try FileManager.default.createDirectory(atPath: cli.configDirectory + "/vaultfile/identity.txt", withIntermediateDirectories: true)
        try Self.recipientVault(cli, "r.vault", recipient: own.recipient)
        let result = try cli.run(["list", "--vault", cli.path("r.vault")])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("\(cli.configDirectory)/vaultfile/identity.txt is not a regular file"), "\(result.stderr)")
        #expect(result.stderr.contains("this default identity is skipped"), "\(result.stderr)")
    }

    @Test func test_defaultIdentity_aDeviceOrADanglingLinkIsSkippedWithNoChmodAdvice() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let own = try Self.newIdentity(cli)
        try Self.recipientVault(cli, "r.vault", recipient: own.recipient)
        let folder = cli.configDirectory + "/vaultfile"
        try FileManager.default.createDirectory(atPath: folder + "/identities", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/identity.txt", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: folder + "/identities/gone", withDestinationPath: folder + "/nowhere")
        let result = try cli.run(["list", "--vault", cli.path("r.vault")])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("\(folder)/identity.txt is not a regular file; this default identity is skipped"), "\(result.stderr)")
        #expect(!result.stderr.contains("chmod"), "no advice to chmod a device: \(result.stderr)")
        #expect(result.stderr.contains("\(folder)/identities/gone cannot be read"), "a dangling link is named: \(result.stderr)")
    }
}
