import Foundation
import TestSupport
import Testing

/// `vaultfile cp`, `mv` and `rm`: what they report, nothing under a prefix, and a folder move that
/// fails part-way. (Folders, `--force` and `-r` are in InstallAndAliasesCLITests.)
@Suite struct CpMvRmCLITests {

    @Test func test_cp_oneEntrySaysWhatWasCopied() throws {
        let cli = try CLI.withVault(["a": "x", "c": "y"]); defer { cli.directory.remove() }
        let copied = try cli.run(["cp", "a", "b"] + cli.unlock())
        #expect(copied.status == 0 && copied.stdout.isEmpty && copied.stderr.contains("copied a to b"), "\(copied.stderr)")
        let into = try cli.run(["cp", "a", "dir/"] + cli.unlock())
        #expect(into.stderr.contains("copied a to dir/a"), "\(into.stderr)")
        let replaced = try cli.run(["cp", "a", "c", "--force"] + cli.unlock())
        #expect(replaced.stderr.contains("copied a to c (replacing the entry there)"), "\(replaced.stderr)")
    }

    @Test func test_mvAndCp_aFolderMoveThatFailsLeavesTheVaultByteIdentical() throws {
        let cli = try CLI.withEntriesSet(["prod/a": "1", "prod/b": "2", "live/b": "3"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let long = String(repeating: "x", count: 1_023) + "/"  // a valid folder, but prod/a would become 1,025 bytes
        let cases: [([String], String)] = [
            (["mv", "prod/", "\u{202E}live/"], "format characters"),  // passed before: checked after the move, when the names existed
            (["cp", "prod/", "\u{200B}copy/"], "format characters"),
            (["mv", "prod/", "live/"], "live/b"),
            (["mv", "prod/", long], "at most 1024 bytes"),
        ]
        for (arguments, says) in cases {
            let result = try cli.run(arguments + cli.unlock())
            #expect(result.status != 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(try cli.read("t.vault") == before, "\(arguments): the vault is byte-identical")
        }
        #expect(try names(cli) == ["live/b", "prod/a", "prod/b"])
        let allowed = try cli.run(["mv", "prod/", "\u{202E}live/", "--allow-format-characters"] + cli.unlock())
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    @Test func test_rmRecursive_nothingUnderThePrefixIsNotFound() throws {
        let cli = try CLI.withVault(["prod/db": "d"]); defer { cli.directory.remove() }
        let folder = try cli.run(["rm", "-r", "staging/"] + cli.unlock())
        #expect(folder.status == 1 && folder.stderr.contains("nothing under 'staging/'"), "\(folder.stderr)")
        let name = try cli.run(["rm", "-r", "staging"] + cli.unlock())
        #expect(name.status == 1 && name.stderr.contains("no entry named 'staging' and nothing under 'staging/'"), "\(name.stderr)")
        #expect(try cli.run(["rm", "staging/"] + cli.unlock()).stderr.contains("nothing under 'staging/'"))
        #expect(try cli.run(["list"] + cli.unlock()).text == "prod/db\n")
    }
}
