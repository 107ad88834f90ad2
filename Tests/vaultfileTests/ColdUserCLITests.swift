import Foundation
import TestSupport
import Testing

/// Issue 26, what a cold user still tripped over: the README's and the manual's batch examples as
/// written, exec --only under --prefix, get on a folder, batch's verbs, import's help, rm -r and
/// ls of nothing, totp --at before 1970, the clipboard without a display, cp's report, git setup twice.
@Suite struct ColdUserCLITests {
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        try cli.setEntries(entries)
        return cli
    }

    /// The environment a README reader has: `vaultfile` on PATH, the vault and its password set once.
    private func readerEnvironment(_ cli: CLI) -> [String: String] {
        ["PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
         "VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")]
    }

    // MARK: - The batch examples, verbatim

    @Test func test_readme_batchExamplesRunAsWritten() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let readme = try String(contentsOf: ProjectPaths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n").map(String.init).filter { $0.hasPrefix("printf ") && $0.contains("| vaultfile batch") }
        #expect(lines.count == 2, "\(lines)")
        var outputs: [String] = []
        for line in lines {
            let result = try cli.shell(line, extra: readerEnvironment(cli))
            #expect(result.status == 0, "\(line): \(result.stderr)")
            outputs.append(result.text)
        }
        #expect(outputs.first == "x")
        #expect(outputs.last?.split(separator: "\n").count == 2 && outputs.last?.contains(#""names":["b"]"#) == true, "\(outputs)")
    }

    @Test func test_manPage_batchExampleRunsAsWritten() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let man = try String(contentsOf: ProjectPaths.root.appendingPathComponent("man/vaultfile.1"), encoding: .utf8)
        let lines = man.split(separator: "\n").filter { $0.hasPrefix("printf ") && $0.contains("| vaultfile batch") }
        #expect(lines.count == 1)
        for line in lines {
            // The groff escapes of the page, as man shows them.
            let shown = line.replacingOccurrences(of: "\\(aq", with: "'").replacingOccurrences(of: "\\-", with: "-")
                .replacingOccurrences(of: "\\e", with: "\\")
            let result = try cli.shell(shown, extra: readerEnvironment(cli))
            #expect(result.status == 0, "\(shown): \(result.stderr)")
        }
        #expect(try cli.run(["list"] + cli.unlock()).text == "b\n")
    }

    // MARK: - exec --only under --prefix

    @Test func test_exec_onlyUnderAPrefixTakesTheFullNameOrTheNameBelowIt() throws {
        let cli = try vaultWith(["prod/db": "d", "prod/api": "a", "other/x": "o"]); defer { cli.directory.remove() }
        let show = ["--", "sh", "-c", "printf '%s|%s' \"$DB\" \"${API-unset}\""]
        for only in ["db", "prod/db"] {
            let result = try cli.run(["exec", "--prefix", "prod", "--only", only] + cli.unlock() + show)
            #expect(result.status == 0 && result.text == "d|unset", "--only \(only): \(result.stderr)")
        }
        let outside = try cli.run(["exec", "--prefix", "prod", "--only", "other/x"] + cli.unlock() + ["--", "true"])
        #expect(outside.status == 64 && outside.stderr.contains("not under --prefix prod/"), "\(outside.stderr)")
        #expect(try cli.run(["exec", "--prefix", "prod", "--only", "nothing"] + cli.unlock() + ["--", "true"]).status == 1)
    }

    @Test func test_exec_onlyThatMeansTwoEntriesUnderAPrefixIsRefused() throws {
        let cli = try vaultWith(["prod/db": "outer", "prod/prod/db": "inner"]); defer { cli.directory.remove() }
        let ambiguous = try cli.run(["exec", "--prefix", "prod", "--only", "prod/db"] + cli.unlock() + ["--", "true"])
        #expect(ambiguous.status == 64 && ambiguous.stderr.contains("ambiguous"), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("'prod/db'") && ambiguous.stderr.contains("'prod/prod/db'"))
        let inner = try cli.run(["exec", "--prefix", "prod", "--only", "prod/prod/db"] + cli.unlock() + ["--", "sh", "-c", "printf %s \"$PROD_DB\""])
        #expect(inner.status == 0 && inner.text == "inner", "\(inner.stderr)")
    }

    // MARK: - get and show on a folder

    @Test func test_get_aFolderNamePointsToLs() throws {
        let cli = try vaultWith(["prod/db": "d", "prod/web/key": "k"]); defer { cli.directory.remove() }
        for verb in ["get", "show"] {
            for name in ["prod", "prod/"] {
                let result = try cli.run([verb, name] + cli.unlock())
                #expect(result.status == 1 && result.stdout.isEmpty)
                #expect(result.stderr.contains("is a folder of 2 entries, not an entry") && result.stderr.contains("vaultfile ls prod/"),
                        "\(verb) \(name): \(result.stderr)")
            }
        }
        let missing = try cli.run(["get", "nothing"] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("no entry named 'nothing'"), "\(missing.stderr)")
    }

    // MARK: - batch

    @Test func test_batch_anUnsupportedVerbListsTheVerbsBatchRuns() throws {
        let cli = try vaultWith(["a": "x"]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("get a\nedit a\n".utf8))
        #expect(result.status == 64 && result.stdout.isEmpty)
        #expect(result.stderr.contains("line 2: 'edit' is not a batch command; batch runs set, get, rm, mv and list"), "\(result.stderr)")
    }

    // MARK: - import --help

    @Test func test_importHelp_namesEachFormatAndWhatHappensOnAClash() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let help = try cli.run(["import", "--help"]).text
        for format in ["json ", "dotenv ", "csv ", "keepassxc-csv ", "bitwarden-json "] {
            #expect(help.contains("\n  " + format), "the format \(format) has its own line")
        }
        let words = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")  // as wrapped to any width
        #expect(words.contains("Clashes: when a name in the file is already an entry of the vault, nothing is imported"), "\(help)")
        #expect(words.contains("with --overwrite each such entry is replaced whole"))
    }

    // MARK: - rm -r and ls of nothing

    @Test func test_rmRecursive_nothingUnderThePrefixIsNotFound() throws {
        let cli = try vaultWith(["prod/db": "d"]); defer { cli.directory.remove() }
        let folder = try cli.run(["rm", "-r", "staging/"] + cli.unlock())
        #expect(folder.status == 1 && folder.stderr.contains("nothing under 'staging/'"), "\(folder.stderr)")
        let name = try cli.run(["rm", "-r", "staging"] + cli.unlock())
        #expect(name.status == 1 && name.stderr.contains("no entry named 'staging' and nothing under 'staging/'"), "\(name.stderr)")
        #expect(try cli.run(["rm", "staging/"] + cli.unlock()).stderr.contains("nothing under 'staging/'"))
        #expect(try cli.run(["list"] + cli.unlock()).text == "prod/db\n")
    }

    @Test func test_ls_aNameThatIsNeitherEntryNorFolderSaysSo() throws {
        let cli = try vaultWith(["prod/db": "d"]); defer { cli.directory.remove() }
        for name in ["nosuch", "nosuch/"] {
            let result = try cli.run(["ls", name] + cli.unlock())
            #expect(result.status == 1 && result.stdout.isEmpty)
            #expect(result.stderr.contains("no entry or folder named 'nosuch'"), "\(result.stderr)")
        }
    }

    // MARK: - totp --at

    @Test func test_totp_aNegativeTimeIsAClearUsageError() throws {
        let cli = try vaultWith(["otp": "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"]); defer { cli.directory.remove() }
        for arguments in [["--at", "-1"], ["--at=-1"]] {
            let result = try cli.run(["totp", "otp"] + arguments + cli.unlock())
            #expect(result.status == 64)
            #expect(result.stderr.contains("--at takes a time of 0 or more (seconds since 1970), not -1"), "\(result.stderr)")
            #expect(!result.stderr.contains("Missing value") && !result.stderr.contains("Usage:"))
        }
        #expect(try cli.run(["totp", "otp", "--at", "59"] + cli.unlock()).status == 0)
    }

    // MARK: - The clipboard without a display

    @Test func test_getClip_withoutADisplayNamesWhatIsMissingAndWhatToInstall() throws {
        let cli = try vaultWith(["db": "secret-value"]); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("empty"), withIntermediateDirectories: true)
        let result = try cli.run(["get", "db", "--clip"] + cli.unlock(), extra: ["PATH": cli.path("empty")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no display for the clipboard: neither $WAYLAND_DISPLAY nor $DISPLAY is set"), "\(result.stderr)")
        #expect(result.stderr.contains("apt install wl-clipboard") && result.stderr.contains("apt install xclip"))
        #expect(!result.stderr.contains("secret-value"))
    }

    // MARK: - cp of one entry

    @Test func test_cp_oneEntrySaysWhatWasCopied() throws {
        let cli = try vaultWith(["a": "x", "c": "y"]); defer { cli.directory.remove() }
        let copied = try cli.run(["cp", "a", "b"] + cli.unlock())
        #expect(copied.status == 0 && copied.stdout.isEmpty && copied.stderr.contains("copied a to b"), "\(copied.stderr)")
        let into = try cli.run(["cp", "a", "dir/"] + cli.unlock())
        #expect(into.stderr.contains("copied a to dir/a"), "\(into.stderr)")
        let replaced = try cli.run(["cp", "a", "c", "--force"] + cli.unlock())
        #expect(replaced.stderr.contains("copied a to c (replacing the entry there)"), "\(replaced.stderr)")
    }
}

extension ExternalTools {
    /// `git setup` run again on a repository it configured already.
    @Suite struct GitSetupAgainCLITests {
        @Test func test_gitSetup_twiceSaysAlreadyConfigured() throws {
            var cli = try CLI(); defer { cli.directory.remove() }
            cli.environment = ["GIT_CONFIG_NOSYSTEM": "1"]
            #expect(try cli.shell("git init -q").status == 0)
            let first = try cli.run(["git", "setup"])
            #expect(first.status == 0 && first.stderr.contains("configured ") && !first.stderr.contains("already"), "\(first.stderr)")
            let attributes = try cli.read(".gitattributes")
            let second = try cli.run(["git", "setup"])
            #expect(second.status == 0 && second.stderr.contains("already configured") && second.stderr.contains("nothing changed"), "\(second.stderr)")
            #expect(!second.stderr.contains("VAULTFILE_PASSWORD_COMMAND"))
            #expect(try cli.read(".gitattributes") == attributes)
            let other = try cli.run(["git", "setup", "--pattern", "*.vf"])
            #expect(other.status == 0 && !other.stderr.contains("already"), "a new pattern changes something: \(other.stderr)")
        }
    }
}
