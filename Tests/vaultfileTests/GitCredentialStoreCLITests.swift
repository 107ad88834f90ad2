import Foundation
import TestSupport
import Testing

/// The credential helper's store, erase and messages through the real binary, after the
/// reviews of 2026-11-27 (docs/SECURITY.md): names that read back as the request, one entry per
/// protocol, no second copy of an entry without a user, erase without a password, the trash and
/// history, the locked vault's message, the usage hint, the confirm command's context.
@Suite struct GitCredentialStoreCLITests {
    private static func helper(_ cli: CLI, _ arguments: [String], _ input: String, extra: [String: String] = [:]) throws -> CLI.Result {
        try GitCredentialCLITests.helper(cli, arguments, input, extra: extra)
    }

    private static func names(_ cli: CLI) throws -> [String] {
        try cli.run(["list", "git/"] + cli.unlock()).text.split(separator: "\n").map(String.init)
    }

    // MARK: - Names

    /// The attacker's case through the helper alone: a user name `evil.com/x` is refused (a warning,
    /// nothing written, exit 0), so no entry reads back as host evil.com.
    @Test func test_store_refusesAUserNameThatWouldNameAnotherHost() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/github.com": ("PAT", ["username": "me"])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let before = try cli.read("t.vault")
        let store = try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=github.com\nusername=evil.com/x\npassword=PAT\n\n", extra: source)
        #expect(store.status == 0 && store.stderr.contains("warning: git credential store: the user name 'evil.com/x'")
                && store.stderr.contains("nothing was stored") && !store.stderr.contains("PAT"), "\(store.stderr)")
        #expect(try cli.read("t.vault") == before)
        let probe = try Self.helper(cli, ["get"], "protocol=https\nhost=evil.com\npath=x@github.com/repo.git\n\n", extra: source)
        #expect(probe.status == 0 && probe.stdout.isEmpty, "\(probe.text)")
    }

    /// Review A and B: an http store never converts the https entry of the host, and the https
    /// password is never served to http.
    @Test func test_store_keepsOneEntryPerProtocol() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/github.com": ("typed", ["username": "me"])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=http\nhost=github.com\nusername=me\npassword=clear\n", extra: source).status == 0)
        let https = try Self.helper(cli, ["get"], "protocol=https\nhost=github.com\n", extra: source)
        #expect(https.text == "username=me\npassword=typed\n", "\(https.text) \(https.stderr)")
        let http = try Self.helper(cli, ["get"], "protocol=http\nhost=github.com\n", extra: source)
        #expect(http.text == "username=me\npassword=clear\n", "\(http.text) \(http.stderr)")
        #expect(try Self.names(cli) == ["git/github.com", "git/me@github.com"])
    }

    /// The cold user's duplicate token and the re-attack's takeover: an entry without a user stays
    /// shared: a store of its token under a user writes nothing (no `git/typed@…` copy), a fill
    /// without a user still answers, and another user's erase of it removes nothing.
    @Test func test_store_leavesTheEntryWithoutAUserShared() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/nouser.example": ("tok", [:])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let before = try cli.read("t.vault")
        let store = try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=nouser.example\nusername=mallory\npassword=tok\n", extra: source)
        #expect(store.status == 0 && store.stderr.isEmpty, "\(store.stderr)")
        let erase = try Self.helper(cli, ["--allow-write", "erase"], "protocol=https\nhost=nouser.example\nusername=mallory\npassword=tok\n", extra: source)
        #expect(erase.status == 0 && erase.stderr.isEmpty, "\(erase.stderr)")
        #expect(try cli.read("t.vault") == before, "nothing written")
        let fill = try Self.helper(cli, ["get"], "protocol=https\nhost=nouser.example\nusername=alice\n", extra: source)
        #expect(fill.text == "password=tok\n", "\(fill.text) \(fill.stderr)")
    }

    // MARK: - erase, the trash and history

    @Test func test_erase_withoutAPasswordChangesNothing() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/h": ("tok", ["username": "u"])]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let erase = try Self.helper(cli, ["--allow-write", "erase"], "protocol=https\nhost=h\nusername=u\n", extra: ["VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(erase.status == 0 && erase.stderr.isEmpty, "\(erase.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    /// git's reject then approve: the entry comes back from the trash with its history, quietly; a
    /// store of a new http credential is one write and leaves no invented version.
    @Test func test_store_afterAnEraseIsQuietAndKeepsTheHistory() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/alice@h": ("v1", [:])]); defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        #expect(try cli.run(["set", "git/alice@h"] + cli.unlock(), stdin: Array("v2".utf8)).status == 0)
        #expect(try Self.helper(cli, ["--allow-write", "erase"], "protocol=https\nhost=h\nusername=alice\npassword=v2\n", extra: source).status == 0)
        #expect(try cli.run(["get", "git/alice@h"] + cli.unlock()).status == 1)
        let store = try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=h\nusername=alice\npassword=v3\n", extra: source)
        #expect(store.status == 0 && store.stderr.isEmpty, "quiet: \(store.stderr)")
        #expect(try cli.run(["get", "git/alice@h"] + cli.unlock()).text == "v3")
        let history = try cli.run(["history", "git/alice@h"] + cli.unlock())
        #expect(history.text.split(separator: "\n").count == 2, "v2 (erased) and v1: \(history.text)")
        // One store of a new http credential: no version that never existed on disk.
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=http\nhost=new.example\nusername=u\npassword=p\n", extra: source).status == 0)
        #expect(try cli.run(["history", "git/new.example"] + cli.unlock()).text.isEmpty)
    }

    // MARK: - Messages

    /// A locked vault: says so, names the vault and `vaultfile unlock --vault PATH`, never "no
    /// terminal" and never an option the helper does not take.
    @Test func test_helper_aLockedVaultSaysSoAndNamesUnlock() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/h": ("old", ["username": "u"])]); defer { cli.directory.remove() }
        let vault = cli.path("t.vault")
        for (operation, outcome) in [("store", "nothing was stored"), ("erase", "nothing was erased")] {
            let result = try Self.helper(cli, ["--vault", vault, "--allow-write", operation], "protocol=https\nhost=h\nusername=u\npassword=old\n")
            #expect(result.status == 2 && result.stderr.contains("the vault is locked (\(vault))") && result.stderr.contains(outcome), "\(result.stderr)")
            #expect(result.stderr.contains("unlock once, and the agent then answers git") && result.stderr.contains("prompt): vaultfile unlock --vault \(vault)\n"),
                    "\(result.stderr)")
            #expect(!result.stderr.contains("terminal to ask") && !result.stderr.contains("--password-file"), "\(result.stderr)")
        }
        let get = try Self.helper(cli, ["get"], "protocol=https\nhost=h\n", extra: ["GIT_TERMINAL_PROMPT": "0"])
        #expect(get.stdout.isEmpty && get.stderr.contains("the vault is locked") && get.stderr.contains("nothing was answered")
                && get.stderr.contains("prompt): vaultfile unlock\n"), "\(get.stderr)")
    }

    @Test func test_helper_usageHintNamesTheHelpersHelp() throws {
        let cli = try GitCredentialCLITests.helperFolder([:]); defer { cli.directory.remove() }
        for arguments in [[], ["--frob", "get"]] {
            let result = try Self.helper(cli, arguments, "")
            #expect(result.status == 64 && result.stderr.contains("'vaultfile git credential --help'"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func test_get_notesNameTheRequestsProtocolAndHintAtPrintf() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/alice@h:8080": ("a", ["protocol": "http"]), "git/bob@h:8080": ("b", ["protocol": "http"]),
                                                          "git/nl": ("two\n", [:])])
        defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let differ = try Self.helper(cli, ["get"], "protocol=http\nhost=h:8080\n", extra: source)
        #expect(differ.stdout.isEmpty && differ.stderr.contains("(http://USER@h:8080/…)"), "\(differ.stderr)")
        let broken = try Self.helper(cli, ["get"], "protocol=https\nhost=nl\n", extra: source)
        #expect(broken.stdout.isEmpty && broken.stderr.contains("printf") && broken.stderr.contains("(no newline): vaultfile set git/nl\n"), "\(broken.stderr)")
    }

    // MARK: - The confirm command

    /// The confirm command sees what it approves: the operation and git's URL.
    @Test func test_confirm_seesTheOperationAndTheURL() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/h": ("tok", ["username": "u"])]); defer { cli.stopAgent(); cli.directory.remove() }
        let record = "echo \"$VAULTFILE_CONFIRM_ACTION|$VAULTFILE_CONFIRM_GIT_URL|${VAULTFILE_CONFIRM_ENTRY-unset}\" >> \(cli.path("asked"))"
        #expect(try cli.run(["unlock", "--confirm-command", record] + cli.unlock()).status == 0)
        let get = try Self.helper(cli, ["get"], "protocol=https\nhost=h\npath=org/r.git\n")
        #expect(get.text == "username=u\npassword=tok\n", "\(get.stderr)")
        #expect(try Self.helper(cli, ["--allow-write", "store"], "protocol=https\nhost=h\nusername=u\npassword=tok\n").status == 0)
        #expect(String(decoding: try cli.read("asked"), as: UTF8.self)
                == "git-credential-get|https://h/org/r.git|unset\ngit-credential-store|https://u@h|unset\n")
    }
}
