import ArgumentParser
import Testing
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
}
