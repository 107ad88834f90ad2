import Foundation
import TestSupport
import Testing

// MARK: - Vaults to start from

extension CLI {
    /// A new test folder with a vault `name` (password in `pw`) holding `entries`, set in-process
    /// (`setEntries`): the quickest start, with the generation a run of `set` per entry leaves.
    static func withVault(_ entries: [String: String], name: String = "t.vault", in existing: CLI? = nil) throws -> CLI {
        let cli = try existing ?? CLI()
        try cli.initVault(name)
        try cli.setEntries(entries, in: name)
        return cli
    }

    /// A new test folder with a vault `t.vault` (password in `pw`) whose entries are stored by running
    /// `vaultfile set NAME` with `options` once per entry, in the order given, as a user stores them:
    /// names pass the binary's rules and are put in NFC, and the state folder records each write.
    static func withEntriesSet(_ entries: [(String, [UInt8])], options: [String] = []) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + options + cli.unlock(), stdin: value)
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    /// `withEntriesSet` with text values, set in the order of their names.
    static func withEntriesSet(_ entries: [String: String], options: [String] = []) throws -> CLI {
        try withEntriesSet(entries.sorted { $0.key < $1.key }.map { ($0.key, Array($0.value.utf8)) }, options: options)
    }
}

/// The names in the vault `t.vault` of `cli`, from `list`.
func names(_ cli: CLI) throws -> [String] {
    try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
}

/// The UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

// MARK: - JSON output

/// `output` read as one JSON object.
func jsonObject(_ output: [UInt8]) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any])
}

/// `output` read as one JSON object per line (`batch --json`).
func jsonLines(_ output: [UInt8]) throws -> [[String: Any]] {
    try String(decoding: output, as: UTF8.self).split(separator: "\n").map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
}

// MARK: - git repositories

extension CLI {
    /// A new test folder that is a git repository on branch `main`, every run (and git's runs of
    /// vaultfile as its diff and merge driver) with vaultfile's folder first on PATH, a fixed author
    /// and committer, and no system git config. A test adds its unlock source to `environment`.
    static func gitRepository() throws -> CLI {
        var cli = try CLI()
        cli.environment = [
            "PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
        ]
        try git(cli, "init -q -b main")
        // The state folder (VAULTFILE_STATE_DIR) lies in the test's folder: never part of the repository, as a user's never is.
        // So does its configuration folder (XDG_CONFIG_HOME, where a test may keep a default identity).
        try git(cli, "config core.excludesFile /dev/null && printf 'state/\\nconfig/\\n' >> .git/info/exclude")
        return cli
    }
}

/// Runs `git command` in the test folder of `cli` and expects it to succeed.
@discardableResult
func git(_ cli: CLI, _ command: String) throws -> CLI.Result {
    let result = try cli.shell("git " + command)
    #expect(result.status == 0, "git \(command): \(result.stderr)")
    return result
}
