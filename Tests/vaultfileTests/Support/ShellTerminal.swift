import Foundation
import TestSupport

/// An interactive bash, zsh or fish under a tmux server of one test alone (its own socket), with
/// vaultfile's completion script for that shell loaded: keys are sent and the screen captured,
/// as a user types them. Stopped by its socket, then its pid.
struct ShellTerminal {
    /// The shells a test can type into, and how each starts with no user configuration.
    enum Shell: String, CaseIterable {
        case bash, zsh, fish

        /// The shell's program.
        var program: String { "/usr/bin/" + rawValue }

        /// The command tmux runs.
        var command: String {
            switch self {
            case .bash: "exec bash --norc --noprofile"
            case .zsh: "exec zsh -f"
            case .fish: "exec fish --no-config --private"
            }
        }

        /// What is typed first: a plain `$ ` prompt, completion on, the script sourced.
        var setup: String {
            switch self {
            case .bash: "PS1='$ '; source completion.bash; clear"
            case .zsh: "PS1='$ '; autoload -U compinit; compinit -u; source completion.zsh; clear"
            case .fish: "function fish_prompt; echo -n '$ '; end; set -g fish_autosuggestion_enabled 0; source completion.fish; clear"
            }
        }

        /// Whether this machine has the shell and tmux.
        var isInstalled: Bool {
            FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") && FileManager.default.isExecutableFile(atPath: program)
        }
    }

    let cli: CLI
    let socket: String

    init(_ cli: CLI, shell: Shell) throws {
        self.cli = cli
        socket = cli.path("tmux-\(shell.rawValue).sock")
        let script = try cli.run(["--generate-completion-script", shell.rawValue])
        precondition(script.status == 0, script.stderr)
        try cli.write("completion.\(shell.rawValue)", script.stdout)
        // The server keeps every descriptor its first client had, and the test would wait on any
        // pipe of the harness among them for ever: close all but 0-2 before starting it.
        let closeAndStart = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; "
            + "exec tmux -S \"$1\" new-session -d -x 160 -y 40 '\(shell.command)' </dev/null >/dev/null 2>&1"
        let started = try cli.run(["-c", closeAndStart, "bash", socket], extra: environment, executable: "/bin/bash")
        precondition(started.status == 0, started.stderr)
        usleep(300_000)
        type("cd \(cli.directory.url.path)")
        type(shell.setup)
        usleep(500_000)
    }

    private var environment: [String: String] {
        ["PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin", "TERM": "xterm", "HOME": cli.directory.url.path]
    }

    @discardableResult
    func tmux(_ arguments: String) throws -> CLI.Result {
        try cli.shell("tmux -S '\(socket)' \(arguments)", extra: environment)
    }

    /// Types `text` and Enter.
    func type(_ text: String) {
        _ = try? tmux("send-keys -l \(quoted(text))")
        _ = try? tmux("send-keys Enter")
    }

    /// Types `text`, then Tab (twice with `twice`), and returns the screen once it shows
    /// `expected` or after at most `seconds`; the line is erased after.
    /// With `thenType`, that text and one more Tab follow the first completion (after a pause), so
    /// a completion that left a space behind shows as a new word.
    func complete(_ text: String, twice: Bool = false, thenType more: String? = nil, expecting expected: String,
                  within seconds: Double = 10) throws -> String {
        try tmux("send-keys -l \(quoted(text))")
        try tmux("send-keys Tab")
        if let more {
            usleep(1_500_000)
            try tmux("send-keys -l \(quoted(more))")
            try tmux("send-keys Tab")
        }
        if twice {
            usleep(300_000)
            try tmux("send-keys Tab")
        }
        var screen = ""
        CLI.waitFor(seconds) {
            screen = (try? tmux("capture-pane -p").text) ?? ""
            return screen.contains(expected)
        }
        try tmux("send-keys Escape C-e C-u")
        usleep(100_000)
        try tmux("send-keys -l clear")
        try tmux("send-keys Enter")
        usleep(300_000)
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

// MARK: - An import in the background

extension ShellTerminal {
    /// What vaultfile says once of a tool stopped reading the terminal while the import runs in
    /// the background.
    static let toolWaiting = "vaultfile: gpg is waiting for the terminal: bring the import to the foreground (fg)"

    /// An interactive bash in which `vaultfile import --format pass store` into `cli`'s vault
    /// `t.vault` runs in the background (`&`): `cli`'s `bin` first on PATH (its fake tools),
    /// ANSWER the file `answer`, the state and configuration folders `cli`'s, no agent, and the
    /// variables `more` (`VAULTFILE_IMPORT_JOBS=2`). The caller stops it (`stop()`).
    static func backgroundPassImport(_ cli: CLI, environment more: String = "") throws -> ShellTerminal {
        let terminal = try ShellTerminal(cli, shell: .bash)
        terminal.type("export PATH=\(cli.path("bin")):$PATH ANSWER=\(cli.path("answer")) VAULTFILE_STATE_DIR=\(cli.stateDirectory) "
                      + "VAULTFILE_NO_AGENT=1 VAULTFILE_QUIET_WEAK_PASSWORD=1 \(more.isEmpty ? "" : more + " ")XDG_CONFIG_HOME=\(cli.configDirectory)")
        terminal.type("clear; '\(CLI.binary)' import --format pass store --vault t.vault --password-file pw &")
        return terminal
    }

    /// The screen and up to 100 lines above it ("" when tmux does not answer).
    func scrollback() -> String {
        (try? tmux("capture-pane -p -S -100").text) ?? ""
    }
}
