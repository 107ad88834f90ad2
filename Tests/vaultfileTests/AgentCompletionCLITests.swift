import Foundation
import TestSupport
import Testing

extension ExternalTools {
    /// Entry-name completion typed into a real bash under tmux: keys sent, the screen captured. Names
    /// (and fields after `#` or `--field`) come from the agent while the vault is unlocked; once it is
    /// locked nothing is offered and nothing is asked. Outside tools: skipped without tmux or bash.
    @Suite struct AgentCompletionCLITests {
        /// A bash under a tmux server of this test alone (its own socket), stopped by its pid.
        private struct Terminal {
            let cli: CLI
            let socket: String

            init(_ cli: CLI) throws {
                self.cli = cli
                socket = cli.path("tmux.sock")
                let script = try cli.run(["--generate-completion-script", "bash"])
                precondition(script.status == 0, script.stderr)
                try cli.write("completion.bash", script.stdout)
                // The server keeps every descriptor its first client had, and the test would wait on
                // any pipe of the harness among them for ever. ChildProcess passes on only 0-2; closing
                // the rest here as well keeps it so whatever starts the shell.
                let bin = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
                let closeAndStart = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; "
                    + "exec tmux -S \"$1\" new-session -d -x 160 -y 40 'exec bash --norc --noprofile' </dev/null >/dev/null 2>&1"
                let started = try cli.run(["-c", closeAndStart, "bash", socket], extra: ["PATH": bin + ":/usr/bin:/bin", "TERM": "xterm"],
                                          executable: "/bin/bash")
                precondition(started.status == 0, started.stderr)
                type("PS1='$ '; cd \(cli.directory.url.path); source completion.bash; clear")
            }

            @discardableResult
            func tmux(_ arguments: String) throws -> CLI.Result {
                let bin = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
                return try cli.shell("tmux -S '\(socket)' \(arguments)", extra: ["PATH": bin + ":/usr/bin:/bin", "TERM": "xterm"])
            }

            /// Types `text` and Enter.
            func type(_ text: String) {
                _ = try? tmux("send-keys -l \(quoted(text))")
                _ = try? tmux("send-keys Enter")
            }

            /// Types `text`, then Tab (twice with `twice`), and returns the screen once it shows
            /// `expected` or after at most `seconds`.
            func complete(_ text: String, twice: Bool = false, expecting expected: String, within seconds: Double = 10) throws -> String {
                try tmux("send-keys -l \(quoted(text))")
                try tmux("send-keys Tab" + (twice ? " Tab" : ""))
                var screen = ""
                CLI.waitFor(seconds) {
                    screen = (try? tmux("capture-pane -p").text) ?? ""
                    return screen.contains(expected)
                }
                // Erase the line (readline's C-u; C-e first in case the cursor moved), then clear the screen.
                try tmux("send-keys C-e C-u")
                usleep(100_000)
                try tmux("send-keys -l clear")
                try tmux("send-keys Enter")
                usleep(200_000)
                return screen
            }

            /// Ends the tmux server: by its socket, then by its pid if it is still there.
            func stop() {
                let pid = (try? tmux("display-message -p '#{pid}'").text).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                _ = try? tmux("kill-server")
                if let pid, kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            }

            private func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        }

        private static let hasTools = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")
            && FileManager.default.isExecutableFile(atPath: "/bin/bash")

        @Test func test_completionScripts_askVaultfileForNamesAndFieldsInEveryShell() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            for shell in ["bash", "zsh", "fish"] {
                let script = try cli.run(["--generate-completion-script", shell]).text
                for asked in ["---completion get -- positional@0", "---completion get -- --field", "---completion rm -- positional@0",
                              "---completion exec -- --only"] {
                    #expect(script.contains(asked), "\(shell) lacks \(asked)")
                }
            }
            // Files for --vault, but not the vaults' lock files (issue 47).
            #expect(try cli.run(["--generate-completion-script", "zsh"]).text.contains("]:path:_files -F \"(*.lock)\"'"), "zsh completes files for --vault")
        }

        @Test func test_completion_offersEntryNamesFromTheAgentOnlyWhileUnlocked() throws {
            guard Self.hasTools else { print("skipped: needs tmux and bash (apt-get install tmux bash-completion)"); return }
            let cli = try CLI.withVault(["db/password": "s3cret", "db/port": "5432", "web/token": "t"]); defer { cli.stopAgent(); cli.directory.remove() }
            #expect(try cli.run(["set", "db/password", "--field", "username"] + cli.unlock(), stdin: Array("admin".utf8)).status == 0)
            let terminal = try Terminal(cli); defer { terminal.stop() }
            #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)

            // Folder by folder (issue 47): web/ first, then its one leaf.
            let single = try terminal.complete("vaultfile get --vault t.vault web/", expecting: "web/token")
            #expect(single.contains("$ vaultfile get --vault t.vault web/token"), "\(single)")
            // bash lists the candidates by their last part, as it does files.
            let several = try terminal.complete("vaultfile get --vault t.vault db/p", twice: true, expecting: "port")
            #expect(several.contains("password  port") && !several.contains("token"), "\(several)")
            let field = try terminal.complete("vaultfile get --vault t.vault db/password#us", expecting: "db/password#username")
            #expect(field.contains("db/password#username"), "\(field)")
            let option = try terminal.complete("vaultfile get db/password --vault t.vault --field u", expecting: "--field username")
            #expect(option.contains("--field username"), "\(option)")
            // Files still complete for --vault.
            let file = try terminal.complete("vaultfile list --vault t.va", expecting: "t.vault")
            #expect(file.contains("--vault t.vault"), "\(file)")

            let lock = try cli.run(["lock", "--vault", cli.path("t.vault")])
            #expect(lock.status == 0, "\(lock.stderr)")
            let locked = try terminal.complete("vaultfile get --vault t.vault we", twice: true, expecting: "web/token", within: 3)
            #expect(!locked.contains("web/token") && !locked.contains("Password") && !locked.contains("error"), "\(locked)")
            #expect(locked.contains("$ vaultfile get --vault t.vault we"), "\(locked)")
        }
    }
}
