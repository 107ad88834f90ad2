import Foundation
import TestSupport
import Testing

extension ExternalTools {
    /// Entry names complete folder by folder, as pass's completion does (`prod/<TAB>` offers
    /// `prod/db/`, not every leaf under it, and no space follows a folder, so the next TAB goes on
    /// into it), and `--vault` does not offer the vaults' `*.lock` files: typed into a real bash,
    /// zsh and fish under tmux. A shell that is not installed is skipped, and says so.
    @Suite(.serialized) struct CompletionFolderCLITests {
        /// A vault with folders, unlocked in the test's agent, and a written vault beside its lock file.
        private func vault() throws -> CLI {
            let cli = try CLI.withVault(["prod/db/password": "p", "prod/db/user": "u", "prod/api": "a", "web/token": "t"])
            #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "web/token"] + cli.unlock(), stdin: Array("t2".utf8)).status == 0)
            #expect(FileManager.default.fileExists(atPath: cli.path("t.vault.lock")), "a write leaves the lock file")
            return cli
        }

        private func check(_ shell: ShellTerminal.Shell) throws {
            guard shell.isInstalled else { print("skipped: needs tmux and \(shell) (apt-get install tmux \(shell))"); return }
            let cli = try vault(); defer { cli.stopAgent(); cli.directory.remove() }
            let terminal = try ShellTerminal(cli, shell: shell); defer { terminal.stop() }

            // prod/<TAB><TAB>: the folder db/ and the leaf api, no leaf under db/.
            let folder = try terminal.complete("vaultfile get --vault t.vault prod/", twice: true, expecting: "api")
            #expect(folder.contains("db/") && folder.contains("api") && !folder.contains("password") && !folder.contains("user"), "\(shell): \(folder)")
            // A unique folder completes with no space after it, so typing on goes into it.
            let into = try terminal.complete("vaultfile get --vault t.vault prod/d", thenType: "pa", expecting: "prod/db/password")
            #expect(into.contains("t.vault prod/db/password"), "\(shell): \(into)")
            // Top level: folders only.
            let top = try terminal.complete("vaultfile get --vault t.vault w", expecting: "web/")
            #expect(top.contains("t.vault web/") && !top.contains("token"), "\(shell): \(top)")

            // read: vf:// references complete as names do, in zsh and fish (bash splits the word at
            // its ':', COMP_WORDBREAKS, so its script counts three words: not completed there).
            if shell != .bash {
                let reference = try terminal.complete("vaultfile read --vault t.vault vf://w", thenType: "t", expecting: "vf://web/t")
                #expect(reference.contains("t.vault vf://web/t"), "\(shell): \(reference)")
            }
            // --vault: t.vault and not t.vault.lock (completes to the one file).
            let path = try terminal.complete("vaultfile list --vault t.va", twice: true, expecting: "--vault t.vault")
            #expect(path.contains("--vault t.vault") && !path.contains("t.vault.lock"), "\(shell): \(path)")
        }

        @Test func test_completion_entryNamesFolderByFolderAndNoLockFilesInBash() throws { try check(.bash) }
        @Test func test_completion_entryNamesFolderByFolderAndNoLockFilesInZsh() throws { try check(.zsh) }
        @Test func test_completion_entryNamesFolderByFolderAndNoLockFilesInFish() throws { try check(.fish) }
    }
}
