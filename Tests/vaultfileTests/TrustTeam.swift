import Foundation
import TestSupport
import Testing

/// The signed team vault the trust suites share (`TrustCLITests`, `TrustReadmitCLITests`):
/// `t.vault` with a password (`pw`), alice, bob and mallory (age identities `NAME.txt`, mallory at
/// keyslot 3) and a keyfile (`team.key`); alice wrote once, and bob's machine (`bob-state`) opened it once.
enum TrustTeam {
    /// The team and what its first steps printed.
    struct Made {
        let cli: CLI
        /// alice's first `set`, on the creator's machine.
        let firstSet: CLI.Result
        /// bob's first `get`, on his machine.
        let bobsFirst: CLI.Result
    }

    /// Makes the team, with identities for `members` (alice, bob and mallory hold slots; others only keys).
    static func make(members: [String] = ["alice", "bob", "mallory"], inGit: Bool = false) throws -> Made {
        var cli = inGit ? try CLI.gitRepository() : try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        try cli.write("pw", Array("team-pw".utf8))
        for member in members {
            try cli.write(member + ".pub", try cli.run(["keygen", "-o", cli.path(member + ".txt")]).stdout)
        }
        try run(cli, ["keygen", "--keyfile", cli.path("team.key")])
        let created = try run(cli, ["init", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw"), "--recipient", try recipient(cli, "alice"),
                                    "--recipient", try recipient(cli, "bob"), "--recipient", try recipient(cli, "mallory"),
                                    "--with-keyfile", cli.path("team.key")] + CLI.fastKDF)
        #expect(created.stderr.contains("signed"), "\(created.stderr)")
        let first = try run(cli, ["set", "db/password"] + as_(cli, "alice"), stdin: "s3cret")
        let bobsFirst = try run(cli, ["get", "db/password"] + as_(cli, "bob"), on: "bob")
        return Made(cli: cli, firstSet: first, bobsFirst: bobsFirst)
    }

    /// `member`'s `age1…` recipient.
    static func recipient(_ cli: CLI, _ member: String) throws -> String {
        String(decoding: try cli.read(member + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The unlock options of `member` (an age identity) on `vault`.
    static func as_(_ cli: CLI, _ member: String, vault: String = "t.vault") -> [String] {
        ["--vault", cli.path(vault), "--identity", cli.path(member + ".txt")]
    }

    /// Runs `arguments` on the machine of `on` (its own state folder; nil: the test's) and expects success.
    @discardableResult
    static func run(_ cli: CLI, _ arguments: [String], stdin: String = "", on machine: String? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        let result = try cli.run(arguments, stdin: Array(stdin.utf8), extra: machine.map { ["VAULTFILE_STATE_DIR": cli.path($0 + "-state")] } ?? [:])
        #expect(result.status == 0, "\(arguments.prefix(3)): \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }
}
