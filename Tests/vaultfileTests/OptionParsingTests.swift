import ArgumentParser
import Testing
import VaultModel
@testable import vaultfile

/// Command lines that fail in parsing or validation, before any command runs: checked in-process
/// with `VaultfileCommand.parseAsRoot`, as `main()` parses them. That such failures end the
/// process with status 64 is checked through the binary in CLITests.test_exitStatus_usageErrorsAre64.
@Suite struct OptionParsingTests {
    /// The exit status and message `main()` ends with when `arguments` fail to parse, or nil when they parse.
    private func usageFailure(_ arguments: [String]) -> (status: Int32, message: String)? {
        do {
            _ = try VaultfileCommand.parseAsRoot(arguments)
            return nil
        } catch {
            // As main(): vaultfile's own errors through ErrorReport, ArgumentParser's through exit(withError:).
            if let report = ErrorReport(error) { return (report.status.rawValue, report.description) }
            return (VaultfileCommand.exitCode(for: error).rawValue, VaultfileCommand.message(for: error))
        }
    }

    private let unlock = ["--vault", "t.vault", "--password-file", "pw"]

    // MARK: - set

    @Test func test_set_rejectsInvalidNamesAsUsage() {
        #expect(usageFailure(["set", "a/b"] + unlock) == nil, "a valid name parses")
        #expect(usageFailure(["set", "a//b"] + unlock)?.status == 64)
        #expect(usageFailure(["set", "/abs"] + unlock)?.status == 64)
    }

    // MARK: - Password sources

    @Test func test_passwordSources_twoAtOnceAreAUsageError() {
        let failure = usageFailure(["get", "k"] + unlock + ["--password-command", "true"])
        #expect(failure?.status == 64)
        #expect(failure?.message.contains("at most one of --password-file, --password-fd and --password-command") == true, "\(failure?.message ?? "")")
    }

    // MARK: - batch

    /// Plain `set NAME --value TEXT` lines are read by set's grammar (`BatchScript.quick`, made of
    /// set's option tables) into a `BatchQuickSet` and change the vault as the `BatchSet`
    /// ArgumentParser reads does; lines that are not plain still go through ArgumentParser.
    @Test func test_batchParse_plainSetLinesActAsArgumentParsersReading() throws {
        let lines = ["set a/b --value 'x y'", "set \"q\" --value \"multi\\nline\"", "set é/ü --value plain"]
        for line in lines {
            let tokens = try BatchScript.tokenize(Substring(line))
            let quick = try #require(try BatchScript.parse(Array(line.utf8)).first?.command as? BatchQuickSet, "\(line)")
            let parsed = try #require(try BatchLine.parseAsRoot(tokens) as? BatchSet)
            var viaQuick = Vault(), viaParser = Vault(), output = BatchOutput(framing: .plain)
            try quick.apply(to: &viaQuick, output: &output)
            try parsed.apply(to: &viaParser, output: &output)
            #expect(viaQuick.names == viaParser.names && viaQuick.sortedEntries.map(\.entry.value) == viaParser.sortedEntries.map(\.entry.value))
        }
        for line in ["set -a --value x", "set a --value -x", "set a b --value x", "set a --value x --value y", "set a --value x --generate",
                     "set a --value", "set a --value x -h"] {
            #expect(BatchScript.quick(try BatchScript.tokenize(Substring(line))) == nil, "\(line)")
        }
    }
}
