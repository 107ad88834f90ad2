import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultModel

/// The CLI run as a subprocess, the way a user's shell runs it: pipes, exit statuses, files.
@Suite struct CLITests {
    // MARK: - init

    @Test func test_init_createsAPrivateVaultThatVerifies() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let created = try cli.run(["init"] + cli.unlock() + CLI.fastKDF)
        #expect(created.status == 0, "\(created.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("t.vault"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let verify = try cli.run(["verify"] + cli.unlock())
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.isEmpty, "verify reports on stderr; stdout is for data")
    }

    @Test func test_init_refusesToOverwrite() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let before = try cli.read("t.vault")
        let again = try cli.run(["init"] + cli.unlock() + CLI.fastKDF)
        #expect(again.status == 2)
        #expect(again.stderr.contains("exists already"))
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_init_refusesWeakKDFWithoutTheFlag() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let weak = try cli.run(["init"] + cli.unlock() + ["--kdf-memory", "8M", "--kdf-iterations", "1"])
        #expect(weak.status == 64)
        #expect(weak.stderr.contains("--allow-weak-kdf"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("t.vault")))
    }

    @Test func test_init_usesTheDefaultPathUnderXDGDataHome() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let data = cli.path("xdg")
        let created = try cli.run(["init", "--password-file", cli.path("pw")] + CLI.fastKDF, extra: ["XDG_DATA_HOME": data])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: data + "/vaultfile/default.vault"))
        let fromEnv = try cli.run(["list", "--password-file", cli.path("pw")], extra: ["VAULTFILE_PATH": data + "/vaultfile/default.vault"])
        #expect(fromEnv.status == 0, "\(fromEnv.stderr)")
    }

    // MARK: - set / get

    @Test func test_setGet_roundTripsEveryByteThroughPipes() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let value: [UInt8] = Array(0...255) + [0x0A, 0x0A]  // NULs, high bytes, trailing newlines kept
        let set = try cli.run(["set", "bin/all-bytes"] + cli.unlock(), stdin: value)
        #expect(set.status == 0, "\(set.stderr)")
        let get = try cli.run(["get", "bin/all-bytes"] + cli.unlock())
        #expect(get.status == 0)
        #expect(get.stdout == value, "nothing added or removed when stdout is a pipe")
        let piped = try cli.shell("printf 'no-newline' | \"$VF\" set plain --vault t.vault --password-file pw && \"$VF\" get plain --vault t.vault --password-file pw | od -An -c")
        #expect(piped.text.hasSuffix("e\n") && !piped.text.contains("\\n"), "no newline added: \(piped.text)")
    }

    @Test func test_set_fromValueFileAndFields() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("value.txt", Array("from a file\n".utf8))
        #expect(try cli.run(["set", "svc", "--value-file", cli.path("value.txt")] + cli.unlock()).status == 0)
        #expect(try cli.run(["set", "svc", "--field", "username"] + cli.unlock(), stdin: Array("alice".utf8)).status == 0)
        #expect(try cli.run(["get", "svc"] + cli.unlock()).text == "from a file\n")
        #expect(try cli.run(["get", "svc", "--field", "username"] + cli.unlock()).text == "alice")
        let missingField = try cli.run(["get", "svc", "--field", "url"] + cli.unlock())
        #expect(missingField.status == 1)
    }

    @Test func test_set_leavesNoPlaintextOnDisk() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let secret = "correct-horse-battery-staple-4242"
        #expect(try cli.run(["set", "very/secret/name"] + cli.unlock(), stdin: Array(secret.utf8)).status == 0)
        for file in try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path) where file != "pw" && file != "state" {
            let bytes = String(decoding: try cli.read(file), as: UTF8.self)
            #expect(!bytes.contains(secret) && !bytes.contains("very/secret"), "\(file) holds plaintext")
        }
    }

    @Test func test_set_keepsTheVaultMode() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        chmod(cli.path("t.vault"), 0o640)
        #expect(try cli.run(["set", "a"] + cli.unlock(), stdin: [1]).status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("t.vault"))[.posixPermissions] as? Int
        #expect(mode == 0o640)
    }

    @Test func test_set_sameValueDoesNotRewriteTheFile() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "a"] + cli.unlock(), stdin: [1, 2, 3]).status == 0)
        let before = try cli.read("t.vault")
        #expect(try cli.run(["set", "a"] + cli.unlock(), stdin: [1, 2, 3]).status == 0)
        #expect(try cli.read("t.vault") == before)
    }

    // MARK: - list

    @Test func test_list_sortsFiltersAndSpeaksJSON() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for name in ["prod/db", "dev/db", "prod/api", "zeta"] {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: Array(name.utf8)).status == 0)
        }
        #expect(try cli.run(["list"] + cli.unlock()).text == "dev/db\nprod/api\nprod/db\nzeta\n")
        #expect(try cli.run(["list", "prod/"] + cli.unlock()).text == "prod/api\nprod/db\n")
        let json = try cli.run(["list", "--json"] + cli.unlock())
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]]
        #expect(parsed?.compactMap { $0["name"] as? String } == ["dev/db", "prod/api", "prod/db", "zeta"])
        #expect((parsed?.first?["modified"] as? String)?.hasSuffix("Z") == true)
        #expect(!json.text.contains("prod/db\"" + ",\"value"), "no values in listings")
    }

    @Test func test_list_handlesThousandsOfEntries() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        var vault = Vault()
        for index in 0..<5_000 { try vault.setValue(Array("value \(index)".utf8), for: "bulk/\(index)") }
        try cli.write("pw", Array("pw".utf8))
        try VaultStore(path: cli.path("t.vault")).create(
            vault, password: SecureBytes(copying: Array("pw".utf8)),
            kdf: .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1)))
        let list = try cli.run(["list"] + cli.unlock())
        #expect(list.status == 0)
        #expect(list.text.split(separator: "\n").count == 5_000)
        #expect(try cli.run(["get", "bulk/4321"] + cli.unlock()).text == "value 4321")
        #expect(try cli.run(["set", "bulk/new"] + cli.unlock(), stdin: [1]).status == 0)
        #expect(try cli.run(["list", "bulk/new"] + cli.unlock()).text == "bulk/new\n")
    }

    // MARK: - rm / mv

    @Test func test_rmAndMv_editEntriesAndRefuseToClobber() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for name in ["a", "b"] { #expect(try cli.run(["set", name] + cli.unlock(), stdin: Array(name.utf8)).status == 0) }
        let clobber = try cli.run(["mv", "a", "b"] + cli.unlock())
        #expect(clobber.status == 2)
        #expect(clobber.stderr.contains("--force"))
        #expect(try cli.run(["mv", "a", "c"] + cli.unlock()).status == 0)
        #expect(try cli.run(["mv", "c", "b", "--force"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "b"] + cli.unlock()).text == "a")
        #expect(try cli.run(["rm", "b"] + cli.unlock()).status == 0)
        #expect(try cli.run(["rm", "b"] + cli.unlock()).status == 1)
        #expect(try cli.run(["list"] + cli.unlock()).text == "")
    }

    // MARK: - info

    @Test func test_info_needsNoPasswordAndSpeaksJSON() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault(kdf: CLI.eightMiBKDF)
        let info = try cli.run(["info", "--vault", cli.path("t.vault"), "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout)) as? [String: Any])
        #expect(json["format"] as? String == "1.0")
        #expect((json["vault_id"] as? String)?.count == 32)
        #expect(json["kdf_below_recommendation"] as? Bool == true)
        let slots = json["keyslots"] as? [[String: Any]]
        #expect(slots?.first?["memory_kib"] as? Int == 8192)
        let text = try cli.run(["info", "--vault", cli.path("t.vault")])
        #expect(text.text.contains("Argon2id 8 MiB, t=1, p=1"))
    }

    // MARK: - passwd

    @Test func test_passwd_rotatesAndKeepsTheVaultID() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        let oldCopy = try cli.read("t.vault")
        let idBefore = try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).text
        try cli.write("new", Array("new password\n".utf8))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("new")] + cli.unlock() + ["--kdf", "pbkdf2", "--kdf-iterations", "1000", "--allow-weak-kdf"])
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try cli.run(["get", "k"] + cli.unlock()).status == 3)
        #expect(try cli.run(["get", "k", "--vault", cli.path("t.vault"), "--password-file", cli.path("new")]).text == "v")
        let idAfter = try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).text
        #expect(idBefore.contains(String(idAfter.split(separator: ",")[2])), "same vault id")
        #expect(idAfter.contains("pbkdf2-sha256"))
        // The old copy still opens with the old password only.
        try cli.write("old.vault", oldCopy)
        #expect(try cli.run(["get", "k"] + cli.unlock("old.vault")).text == "v")
        #expect(try cli.run(["get", "k", "--vault", cli.path("old.vault"), "--password-file", cli.path("new")]).status == 3)
        // Without KDF options, passwd keeps the vault's current settings.
        let again = try cli.run(["passwd", "--new-password-file", cli.path("pw"), "--vault", cli.path("t.vault"), "--password-file", cli.path("new")])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).text.contains("\"iterations\":1000"))
    }

    // MARK: - Password sources

    @Test func test_passwordSources_allOpenTheSameVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault(password: "s3cret")
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        try cli.write("pw-newline", Array("s3cret\n".utf8))
        let vault = ["get", "k", "--vault", cli.path("t.vault")]
        #expect(try cli.run(vault + ["--password-file", cli.path("pw-newline")]).text == "v", "one trailing newline is stripped")
        #expect(try cli.shell("\"$VF\" get k --vault t.vault --password-fd 3 3<pw-newline").text == "v")
        #expect(try cli.run(vault + ["--password-command", "printf 's3cret\\n'"]).text == "v")
        #expect(try cli.run(vault, extra: ["VAULTFILE_PASSWORD": "s3cret"]).text == "v")
        #expect(try cli.run(vault, extra: ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]).text == "v")
        #expect(try cli.run(vault, extra: ["VAULTFILE_PASSWORD_COMMAND": "cat pw"]).text == "v")
        // Only one newline is stripped, so a password with two is a different password.
        try cli.write("pw-two", Array("s3cret\n\n".utf8))
        #expect(try cli.run(vault + ["--password-file", cli.path("pw-two")]).status == 3)
    }

    @Test func test_passwordSources_failuresAreClear() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let vault = ["get", "k", "--vault", cli.path("t.vault")]
        // Two sources at once: a usage error, OptionParsingTests.test_passwordSources_twoAtOnceAreAUsageError.
        let failing = try cli.run(vault + ["--password-command", "exit 7"])
        #expect(failing.status == 2)
        #expect(failing.stderr.contains("exit status 7"))
        let missing = try cli.run(vault + ["--password-file", cli.path("nope")])
        #expect(missing.status == 2)
        let closedFD = try cli.run(vault + ["--password-fd", "9"])
        #expect(closedFD.status == 2)
    }

    @Test func test_passwordSources_noTerminalAndNoSourceFailsAtOnce() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        // setsid: no controlling terminal, as under cron or CI.
        let start = Date()
        let result = try cli.run(["--wait", CLI.binary, "list", "--vault", cli.path("t.vault")], executable: "/usr/bin/setsid")
        #expect(result.status == 2)
        #expect(result.stderr.contains("no terminal"))
        #expect(result.stderr.contains("hint: use --password-file"))
        #expect(Date().timeIntervalSince(start) < 5)
    }

    // MARK: - Exit statuses

    @Test func test_exitStatus_wrongPasswordIs3() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let result = try cli.run(["list", "--vault", cli.path("t.vault")], extra: ["VAULTFILE_PASSWORD": "wrong"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("wrong password"))
        #expect(!result.stderr.contains("wrong\n") && !result.stderr.contains("'wrong'"), "the password is never echoed")
    }

    @Test func test_exitStatus_damagedOrForeignFilesAre4() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        var bytes = try cli.read("t.vault")
        bytes[bytes.count - 5] ^= 0x40
        try cli.write("damaged.vault", bytes)
        let damaged = try cli.run(["verify"] + cli.unlock("damaged.vault"))
        #expect(damaged.status == 4)
        #expect(damaged.stderr.contains("chunk 0"))
        try cli.write("truncated.vault", Array(try cli.read("t.vault").dropLast(100)))
        #expect(try cli.run(["verify"] + cli.unlock("truncated.vault")).status == 4)
        try cli.write("text.vault", Array("not a vault\n".utf8))
        let foreign = try cli.run(["verify"] + cli.unlock("text.vault"))
        #expect(foreign.status == 4)
        #expect(foreign.stderr.contains("not a vaultfile vault"))
        #expect(try cli.run(["info", "--vault", cli.path("text.vault")]).status == 4)
    }

    @Test func test_exitStatus_missingVaultIs2WithAHint() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let result = try cli.run(["list"] + cli.unlock("absent.vault"))
        #expect(result.status == 2)
        #expect(result.stderr.contains("vaultfile init"))
    }

    @Test func test_exitStatus_busyIs5AndNamesTheLockFile() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let lockPath = cli.path("t.vault.lock")
        let fd = open(lockPath, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let result = try cli.run(["set", "k", "--lock-timeout", "0.3"] + cli.unlock(), stdin: [1])
        #expect(result.status == 5)
        #expect(result.stderr.contains(lockPath))
        let reader = try cli.run(["list"] + cli.unlock())
        #expect(reader.status == 0, "readers do not wait for the lock")
    }

    @Test func test_exitStatus_overTheKDFCapIs6() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault(kdf: CLI.eightMiBKDF)
        let result = try cli.run(["list", "--kdf-max-memory", "4M"] + cli.unlock())
        #expect(result.status == 6)
        #expect(result.stderr.contains("8 MiB") && result.stderr.contains("4 MiB"))
        #expect(result.stderr.contains("--kdf-max-memory 8M"))
        let fromEnv = try cli.run(["list"] + cli.unlock(), extra: ["VAULTFILE_KDF_MAX_MEMORY": "4M"])
        #expect(fromEnv.status == 6)
        #expect(try cli.run(["list", "--kdf-max-memory", "8M"] + cli.unlock()).status == 0, "exactly at the cap opens")
    }

    @Test func test_exitStatus_usageErrorsAre64() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        #expect(try cli.run(["get"]).status == 64)
        #expect(try cli.run(["frobnicate"]).status == 64)
        #expect(try cli.run(["list", "--kdf-max-memory", "lots"]).status == 64)
        #expect(try cli.run(["init", "--kdf-time", "soon"]).status == 64)
    }

    // MARK: - calibrate, help, completions

    @Test func test_calibrate_printsJSON() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["calibrate", "--kdf-memory", "8M", "--kdf-parallelism", "1", "--kdf-time", "100ms", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        #expect(json["kdf"] as? String == "argon2id")
        #expect((json["iterations"] as? Int ?? 0) >= 1)
        #expect((json["measured_seconds"] as? Double ?? 0) > 0)
    }

    /// calibrate prints the flags of `init` and, for an existing vault, the same flags for `passwd`,
    /// which take them as printed; `--json` carries both and whether the measure landed within 20 %.
    @Test func test_calibrate_printsThePasswdFlagsForAnExistingVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["calibrate", "--kdf-memory", "8M", "--kdf-parallelism", "1", "--kdf-time", "200ms"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.text.split(separator: "\n").map(String.init)
        let initLine = try #require(lines.first { $0.hasPrefix("use: vaultfile init ") }, "\(result.text)")
        let passwdLine = try #require(lines.first { $0.hasPrefix("for an existing vault: vaultfile passwd ") }, "\(result.text)")
        let flags = String(initLine.dropFirst("use: vaultfile init ".count))
        #expect(passwdLine == "for an existing vault: vaultfile passwd \(flags)")
        try cli.initVault()
        try cli.write("new", Array("a new password for the test".utf8))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("new")] + flags.split(separator: " ").map(String.init) + cli.unlock())
        #expect(passwd.status == 0, "the flags run as printed: \(passwd.stderr)")
        let json = try jsonObject(try cli.run(["calibrate", "--kdf-memory", "8M", "--kdf-parallelism", "1", "--kdf-time", "200ms", "--json"]).stdout)
        let passwdJSON = try #require(json["passwd"] as? String)
        #expect(passwdJSON.hasPrefix("vaultfile passwd --kdf argon2id --kdf-memory ") && (json["init"] as? String)?.hasPrefix("vaultfile init --kdf") == true)
        let measured = try #require(json["measured_seconds"] as? Double)
        #expect(json["within_tolerance"] as? Bool == (abs(measured - 0.2) <= 0.2 * 0.2), "\(json)")
    }

    @Test func test_help_listsExitStatusesAndEveryVerbIsInTheManPage() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let help = try cli.run(["--help"])
        #expect(help.status == 0)
        #expect(help.text.contains("EXIT STATUS") && help.text.contains("64  usage error"))
        let man = try String(contentsOf: ProjectPaths.root.appendingPathComponent("man/vaultfile.1"), encoding: .utf8)
        // Verb lines are indented by exactly two spaces; wrapped descriptions by more.
        let verbs = help.text.components(separatedBy: "SUBCOMMANDS:").last!.split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") && !$0.contains("See '") }
            .compactMap { $0.split(separator: " ").first.map { String($0.filter { $0 != "," }) } }  // "get, show": a verb and its alias
        #expect(verbs.count >= 10)
        for verb in verbs {
            #expect(man.contains(".SS \(verb)") || man.contains("\\fB\(verb)\\fR"), "man page lacks '\(verb)'")
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func test_completions_areGenerated(shell: String) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["--generate-completion-script", shell])
        #expect(result.status == 0)
        #expect(result.text.contains("passwd") && result.text.contains("calibrate"))
    }
}
