import ArgumentParser
import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultFormat
import VaultInterchange
import VaultModel
@testable import vaultfile

/// `ErrorReport`, the one place where errors become a message, a hint and an exit status,
/// checked in-process over every case of every error type (`ErrorCatalog`).
@Suite struct ErrorReportTests {
    // MARK: - init: every case

    @Test func test_catalog_listsEveryCaseOnceWithASampleOfThatCase() {
        for kind in VaultErrorKind.allCases { #expect(VaultErrorKind(kind.row.error as! VaultError) == kind) }
        for kind in KDFErrorKind.allCases { #expect(KDFErrorKind(kind.row.error as! KDFError) == kind) }
        for kind in CLIErrorKind.allCases { #expect(CLIErrorKind(kind.row.error as! CLIError) == kind) }
        for kind in AEADFailureKind.allCases { #expect(AEADFailureKind(kind.row.error as! XChaCha20Poly1305.Failure) == kind) }
        for kind in OTPErrorKind.allCases { #expect(OTPErrorKind(kind.row.error as! OTPError) == kind) }
        for kind in X25519FailureKind.allCases { #expect(X25519FailureKind(kind.row.error as! X25519.Failure) == kind) }
        for kind in HKDFFailureKind.allCases { #expect(HKDFFailureKind(kind.row.error as! HKDFSHA256.Failure) == kind) }
        for kind in BreachListErrorKind.allCases { #expect(BreachListErrorKind(kind.row.error as! BreachListError) == kind) }
        for kind in AgeFileErrorKind.allCases { #expect(AgeFileErrorKind(kind.row.error as! AgeFileError) == kind) }
        for kind in SSHKeyErrorKind.allCases { #expect(SSHKeyErrorKind(kind.row.error as! SSHKeyError) == kind) }
        for kind in AgePluginClientErrorKind.allCases { #expect(AgePluginClientErrorKind(kind.row.error as! AgePluginClientError) == kind) }
    }

    @Test func test_init_givesEveryCaseItsDocumentedExitStatus() throws {
        for row in ErrorCatalog.rows {
            let report = try #require(ErrorReport(row.error), "\(row.error) is not mapped")
            #expect(report.status.rawValue == row.status, "\(row.error)")
        }
    }

    @Test func test_init_describesEveryCaseWithItsDataAndHintsWhereExpected() throws {
        for row in ErrorCatalog.rows {
            let report = try #require(ErrorReport(row.error))
            #expect(!report.description.isEmpty, "\(row.error)")
            #expect(report.description == "\(row.error)", "the library's description is shown as it is")
            for shown in row.shows { #expect(report.description.contains(shown), "\(row.error): '\(report.description)' lacks '\(shown)'") }
            if row.hasHint {
                #expect(report.hint?.isEmpty == false, "\(row.error) has no hint")
            } else {
                #expect(report.hint == nil, "\(row.error): unexpected hint '\(report.hint ?? "")'")
            }
        }
    }

    @Test func test_init_reportsABatchLineAsItsErrorWithTheLineNumber() throws {
        for row in ErrorCatalog.rows {
            let inner = try #require(ErrorReport(row.error))
            let report = try #require(ErrorReport(BatchError(line: 7, underlying: row.error)))
            #expect(report == ErrorReport(description: "line 7: \(inner.description); nothing was changed", hint: inner.hint, status: inner.status))
        }
    }

    /// A write that found no room (ENOSPC, EDQUOT) says to free some; other I/O errors have no hint.
    @Test func test_init_ioHintsOnlyWhenThereIsNoRoom() throws {
        for (code, hinted) in [(ENOSPC, true), (EDQUOT, true), (EACCES, false), (EIO, false)] {
            let report = try #require(ErrorReport(VaultError.io(operation: "writing", path: "/v/shown.vault", errno: code)))
            #expect((report.hint != nil) == hinted, "errno \(code)")
            #expect(report.status.rawValue == 2)
        }
    }

    @Test func test_init_leavesArgumentParsersOwnErrorsToIt() {
        #expect(ErrorReport(ValidationError("give the command after --")) == nil)
        #expect(ErrorReport(ExitCode(42)) == nil)
        #expect(ErrorReport(CleanExit.message("done")) == nil)
    }

    // MARK: - init: hints that name options (moved here from the library's tests)

    @Test func test_init_overCapHintsNameTheOptionToRaiseIt() throws {
        let memory = try #require(ErrorReport(KDFError.memoryOverCap(asked: 2 << 30, cap: 1 << 30)))
        #expect(memory.description == "the vault asks for 2 GiB of memory to unlock; the limit is 1 GiB")
        #expect(memory.hint == "if you trust this file, raise the limit with --kdf-max-memory 2G (or VAULTFILE_KDF_MAX_MEMORY)")
        #expect(memory.status == .overLimit)
        let work = try #require(ErrorReport(KDFError.workOverCap(asked: 64 << 20, cap: 32 << 20)))
        #expect(work.hint == "if you trust this file, raise the limit with --kdf-max-work 64G (or VAULTFILE_KDF_MAX_WORK)")
        let iterations = try #require(ErrorReport(KDFError.iterationsOverCap(asked: 70_000_000, cap: 50_000_000)))
        #expect(iterations.hint == "if you trust this file, raise the limit with --kdf-max-iterations 70000000 (or VAULTFILE_KDF_MAX_ITERATIONS)")
        #expect(ErrorReport(KDFError.belowMinimum("(PBKDF2 1000)"))?.hint?.contains("--allow-weak-kdf") == true)
    }

    @Test func test_init_missingVaultSaysHowToCreateOne() throws {
        let report = try #require(ErrorReport(VaultError.vaultMissing(path: "/nowhere/x.vault")))
        #expect(report.hint?.contains("vaultfile init") == true)
        #expect(report.status == .failure)
    }

    @Test func test_init_busyNamesTheLockTimeoutOption() throws {
        let report = try #require(ErrorReport(VaultError.busy(lockPath: "x", seconds: 1)))
        #expect(report.status == .busy)
        #expect(report.hint == "wait for the other process, or raise the wait with --lock-timeout")
    }

    @Test func test_init_mergeRefusalsKeepTheirMessagesAndHints() throws {
        let unrelated = try #require(ErrorReport(VaultError.mergeRefused(.unrelatedVaults)))
        #expect(unrelated.description == "OURS, THEIRS and BASE are not the same vault (vault ids differ); refusing to merge two unrelated vaults")
        #expect(unrelated.hint == "keep one side with 'git checkout --ours FILE' or '--theirs FILE', then move entries with export/import")
        let sides = ["BASE (the common ancestor) at b.vault", "THEIRS (the branch being merged) at t.vault"]
        let password = try #require(ErrorReport(VaultError.mergeRefused(.passwordFails(sides: sides))))
        #expect(password.description == "the password does not open BASE (the common ancestor) at b.vault nor THEIRS (the branch being merged) at t.vault; the password was changed on each of those sides")
        #expect(password.hint == "merge with the password of each side: check out that side, run 'vaultfile passwd' to the same password, and merge again")
    }

    @Test func test_init_environmentVariableClashSaysHowToAvoidItWithoutForce() throws {
        let report = try #require(ErrorReport(VaultError.environmentVariableClash("db/password", "db-password", variable: "DB_PASSWORD")))
        #expect(report.description == "'db/password' and 'db-password' both map to the environment variable DB_PASSWORD")
        let hint = try #require(report.hint)
        #expect(!hint.contains("--force"))
        #expect(hint.contains("--prefix") && hint.contains("--only") && hint.contains("rename"))
        #expect(report.status == .failure)
    }

    // MARK: - init: no secret from the input that failed

    /// Failures at real throw sites whose input holds a secret (a value) next to the mistake:
    /// the report names the line or the entry, never the value.
    @Test func test_init_showsNoValueOfTheInputThatFailed() throws {
        let canary = "SECRET-CANARY-4f1a"
        var failures: [(String, any Error)] = []
        func expectFailure(_ what: String, _ body: () throws -> Void) {
            do { try body(); Issue.record("\(what) did not fail") } catch { failures.append((what, error)) }
        }
        func parse(_ text: String, _ format: InterchangeFormat) throws { _ = try Interchange.parse(Array(text.utf8), format: format) }
        expectFailure("dotenv, open double quote") { try parse("KEY=\"\(canary)\n", .dotenv) }
        expectFailure("dotenv, text after the quote") { try parse("KEY='\(canary)' more\n", .dotenv) }
        expectFailure("csv, open quoted field") { try parse("name,value\na,\"\(canary)\n", .csv) }
        expectFailure("csv, quote in a field") { try parse("name,value\na,\(canary)\"x\n", .csv) }
        expectFailure("csv, extra column") { try parse("name,value\na,\(canary),more\n", .csv) }
        expectFailure("json, value twice") { try parse(#"{"vaultfile_export":1,"entries":[{"name":"a","value":"\#(canary)","value_base64":"eA=="}]}"#, .json) }
        expectFailure("json, bad base64") { try parse(#"{"vaultfile_export":1,"entries":[{"name":"a","value_base64":"\#(canary)!"}]}"#, .json) }
        expectFailure("json, value of the wrong type") { try parse(#"{"vaultfile_export":1,"entries":[{"name":"a","value":["\#(canary)"]}]}"#, .json) }
        var binary = Vault()
        try binary.setValue(Array(canary.utf8) + [0], for: "bin")
        expectFailure("csv export of a binary value") { _ = try Interchange.export(binary, format: .csv) }
        expectFailure("batch, open quote") { _ = try BatchScript.parse(Array("set a --value \"\(canary)\n".utf8)) }
        expectFailure("batch, two value sources") { _ = try BatchScript.parse(Array("set a --value \(canary) --generate\n".utf8)) }
        // A dotenv export of a binary value leaves the entry out with a warning (issue 47): no failure.
        #expect(failures.count == 11)
        for (what, error) in failures {
            for report in [ErrorReport(error), ErrorReport(BatchError(line: 2, underlying: error))] {
                let shown = try #require(report, "\(what): \(error) is not mapped")
                #expect(!shown.description.contains(canary) && !(shown.hint ?? "").contains(canary), "\(what): \(shown.description)")
            }
        }
    }

    // MARK: - ExitStatus

    @Test func test_exitStatus_ofEveryCategory() {
        let expected: [ErrorCategory: Int32] = [
            .notFound: 1, .invalidInput: 2, .conflict: 2, .refused: 2, .io: 2, .internalFailure: 2,
            .wrongPassword: 3, .damaged: 4, .unsupported: 4, .busy: 5, .overLimit: 6, .stale: 7, .invalidArgument: 64,
        ]
        #expect(Set(expected.keys) == Set(ErrorCategory.allCases))
        for category in ErrorCategory.allCases { #expect(ExitStatus(category).rawValue == expected[category], "\(category)") }
    }

    // MARK: - Through the binary

    @Test func test_exec_variableClashHintDoesNotSuggestForce() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for name in ["db/password", "db-password"] {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: Array("x".utf8)).status == 0)
        }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "true"])
        #expect(result.status == 2)
        let hint = try #require(ErrorReport.hint(for: VaultError.environmentVariableClash("", "", variable: "")))
        #expect(result.stderr.contains("""
            vaultfile: error: 'db-password' and 'db/password' both map to the environment variable DB_PASSWORD
            vaultfile: hint: \(hint)

            """))
        #expect(!result.stderr.contains("--force"))
    }

    // MARK: - The older copy's hint

    /// An older copy may have changes of its own that --allow-rollback would drop with the newer
    /// copy's: the hint offers the merge first, and the rollback only for a copy with none; the
    /// merge's command comes last, to paste.
    @Test func test_hint_olderCopyOffersMergeBeforeRollback() throws {
        func hint(_ newerPath: String) throws -> String {
            let newer = SeenRecord(generation: 12, headerHash: [UInt8](repeating: 7, count: 32), seen: 1_780_000_000, path: newerPath)
            return try #require(ErrorReport(VaultError.staleCopy(path: "/v/stick.vault", generation: 11, newer: newer))?.hint)
        }
        let known = try hint("/v/home.vault")
        #expect(known.hasPrefix("to keep both copies' changes, combine them, which writes the result to both ("), "\(known)")
        #expect(known.contains("if this copy has no changes to keep, run the command again with --allow-rollback instead (it then becomes the newest)"))
        // A copy meant as a separate vault (issue 47): the way to make it one.
        #expect(known.contains("make that one independent with 'vaultfile init --copy-of COPY --vault NEW.vault' (a new vault id)"), "\(known)")
        #expect(known.hasSuffix("(a new vault id)): vaultfile merge --both /v/stick.vault /v/home.vault"), "\(known)")
        let samePath = try hint("/v/stick.vault")
        #expect(samePath.contains("find the newer copy (generation 12) and combine them") && samePath.hasSuffix(": vaultfile merge --both OURS THEIRS"),
                "\(samePath)")
        #expect(samePath.range(of: "combine them")!.lowerBound < samePath.range(of: "--allow-rollback")!.lowerBound)
    }
}
