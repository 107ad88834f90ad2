import Foundation
import TestSupport
import Testing

/// `vaultfile read vf://NAME#FIELD` and `exec --env-file`: the one reference grammar of templates,
/// with its escapes; missing entries and fields named by the reference, never a value.
@Suite struct ReadCLITests {
    private static func folder() throws -> CLI {
        let cli = try CLI.withEntriesSet(["db/prod": "pw-prod", "a#b": "hash", "my entry": "spaced", "trailing ": "blank"])
        for (name, field, value) in [("db/prod", "username", "admin"), ("a#b", "user", "hashed-user"),
                                     ("site", "totp", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")] {
            if field == "totp" { _ = try cli.run(["set", name] + cli.unlock(), stdin: Array("v".utf8)) }
            let set = try cli.run(["set", name, "--field", field] + cli.unlock(), stdin: Array(value.utf8))
            precondition(set.status == 0, set.stderr)
        }
        return cli
    }

    // MARK: - read

    @Test func test_read_printsTheValueOrFieldExactly() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        #expect(try cli.run(["read", "vf://db/prod"] + cli.unlock()).text == "pw-prod")
        #expect(try cli.run(["read", "vf://db/prod#username"] + cli.unlock()).text == "admin")
        #expect(try cli.run(["read", "vf://my entry"] + cli.unlock()).text == "spaced")
    }

    @Test func test_read_escapesHashAndTrailingBlanks() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        #expect(try cli.run(["read", "vf://a##b"] + cli.unlock()).text == "hash")
        #expect(try cli.run(["read", "vf://a##b#user"] + cli.unlock()).text == "hashed-user")
        #expect(try cli.run(["read", "vf://trailing #"] + cli.unlock()).text == "blank")
        // And inject reads the same grammar.
        let injected = try cli.run(["inject"] + cli.unlock(), stdin: Array("{{ vf://a##b#user }}/{{ vf://trailing # }}/{{ vf://db/prod }}".utf8))
        #expect(injected.text == "hashed-user/blank/pw-prod", "\(injected.stderr)")
    }

    @Test func test_read_printsTheCurrentCode() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        let code = try cli.run(["read", "vf-totp://site"] + cli.unlock())
        #expect(code.status == 0 && code.text.count == 6 && code.text.allSatisfy(\.isNumber), "\(code.text) \(code.stderr)")
    }

    @Test func test_read_missingEntryOrFieldNamesTheReferenceNeverAValue() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        let entry = try cli.run(["read", "vf://db/nope#username"] + cli.unlock())
        #expect(entry.status == 1 && entry.stdout.isEmpty && entry.stderr.contains("vf://db/nope#username"), "\(entry.stderr)")
        let field = try cli.run(["read", "vf://db/prod#password"] + cli.unlock())
        #expect(field.status == 1 && field.stderr.contains("vf://db/prod#password") && field.stderr.contains("username"), "\(field.stderr)")
        #expect(!field.stderr.contains("pw-prod") && !field.stderr.contains("admin"))
    }

    @Test func test_read_refusesWhatIsNoReference() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        for argument in ["db/prod", "op://db/prod", "vf://", "vf-totp://site#f"] {
            let result = try cli.run(["read", argument] + cli.unlock())
            #expect(result.status == 64 && result.stdout.isEmpty, "\(argument): \(result.stderr)")
        }
    }

    // MARK: - exec --env-file

    private static let printEnvironment = ["--", "sh", "-c", "printf '%s|%s|%s|%s' \"$DATABASE_PASSWORD\" \"$DB_USER\" \"$MODE\" \"${PROD-unset}\""]

    @Test func test_execEnvFile_setsTheFilesVariablesOnly() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        try cli.write("app.env", Array("# the app\nDATABASE_PASSWORD=vf://db/prod\nexport DB_USER=\"vf://db/prod#username\"\nMODE=plain text\n".utf8))
        let run = try cli.run(["exec", "--env-file", cli.path("app.env")] + cli.unlock() + Self.printEnvironment)
        #expect(run.status == 0 && run.text == "pw-prod|admin|plain text|unset", "\(run.text) \(run.stderr)")
    }

    @Test func test_execEnvFile_addsTheEntriesPrefixChooses() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        try cli.write("app.env", Array("DATABASE_PASSWORD=vf://db/prod\n".utf8))
        let run = try cli.run(["exec", "--env-file", cli.path("app.env"), "--prefix", "db"] + cli.unlock() + Self.printEnvironment)
        #expect(run.status == 0 && run.text == "pw-prod|||pw-prod", "\(run.text) \(run.stderr)")
        // A variable that an entry sets too is an error, before the command runs.
        try cli.write("clash.env", Array("PROD=vf://a##b\n".utf8))
        let clash = try cli.run(["exec", "--env-file", cli.path("clash.env"), "--prefix", "db"] + cli.unlock() + ["--", "true"])
        #expect(clash.status != 0 && clash.stderr.contains("PROD"), "\(clash.stderr)")
        #expect(try cli.run(["exec", "--env-file", cli.path("app.env"), "--fields"] + cli.unlock() + ["--", "true"]).status == 64)
    }

    @Test func test_execEnvFile_missingReferenceIsNamedAndNothingRuns() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        try cli.write("app.env", Array("OK=vf://db/prod\nBAD=vf://db/prod#nope\n".utf8))
        let run = try cli.run(["exec", "--env-file", cli.path("app.env")] + cli.unlock() + ["--", "sh", "-c", "echo ran"])
        #expect(run.status == 1 && !run.text.contains("ran"), "\(run.text)")
        #expect(run.stderr.contains("vf://db/prod#nope") && run.stderr.contains("BAD in \(cli.path("app.env"))") && !run.stderr.contains("pw-prod"),
                "\(run.stderr)")
    }

    @Test func test_execEnvFile_refusesBadLinesAndGuardedVariables() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        for (text, words) in [("JUST A LINE\n", "KEY=value"), ("A.B=vf://db/prod\n", "'A.B'"), ("LD_PRELOAD=vf://db/prod\n", "--allow-env LD_PRELOAD")] {
            try cli.write("bad.env", Array(text.utf8))
            let run = try cli.run(["exec", "--env-file", cli.path("bad.env")] + cli.unlock() + ["--", "sh", "-c", "echo ran"])
            #expect(run.status != 0 && !run.text.contains("ran") && run.stderr.contains(words), "\(text): \(run.stderr)")
        }
    }

    /// A later line for the same variable wins across files, and the line it overrides is never
    /// resolved: a shared base file may name an entry this vault lacks (the cold user's review).
    @Test func test_execEnvFile_anOverriddenReferenceIsNotResolved() throws {
        let cli = try Self.folder(); defer { cli.directory.remove() }
        try cli.write("base.env", Array("DATABASE_PASSWORD=vf://prod/db#password\nDB_USER=vf://db/prod#username\n".utf8))
        try cli.write("local.env", Array("DATABASE_PASSWORD=devpass\n".utf8))
        let run = try cli.run(["exec", "--env-file", cli.path("base.env"), "--env-file", cli.path("local.env")] + cli.unlock() + Self.printEnvironment)
        #expect(run.status == 0 && run.text == "devpass|admin||unset", "\(run.text) \(run.stderr)")
        // Within one file too; the winning line is still resolved and checked.
        try cli.write("one.env", Array("MODE=vf://missing\nMODE=vf://db/prod\n".utf8))
        let one = try cli.run(["exec", "--env-file", cli.path("one.env")] + cli.unlock() + Self.printEnvironment)
        #expect(one.status == 0 && one.text == "||pw-prod|unset", "\(one.text) \(one.stderr)")
        try cli.write("last.env", Array("MODE=vf://db/prod\nMODE=vf://missing\n".utf8))
        #expect(try cli.run(["exec", "--env-file", cli.path("last.env")] + cli.unlock() + ["--", "true"]).status == 1)
    }
}
