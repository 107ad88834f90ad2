import ArgumentParser
import Foundation
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

    /// A script saved with CRLF line ends runs as its LF twin: Swift reads `\r\n` as one
    /// character, which `split(separator: "\n")` never splits.
    @Test func test_batchParse_crlfLinesAreLines() throws {
        let crlf = try BatchScript.parse(Array("set a --value x\r\nset b --value y\r\n".utf8))
        let lf = try BatchScript.parse(Array("set a --value x\nset b --value y\n".utf8))
        #expect(crlf.map(\.number) == [1, 2] && lf.map(\.number) == [1, 2])
        var viaCRLF = Vault(), viaLF = Vault(), output = BatchOutput(framing: .plain)
        for line in crlf { try #require(line.command as? BatchQuickSet).apply(to: &viaCRLF, output: &output) }
        for line in lf { try #require(line.command as? BatchQuickSet).apply(to: &viaLF, output: &output) }
        #expect(viaCRLF.names == ["a", "b"] && viaCRLF.sortedEntries.map(\.entry.value) == viaLF.sortedEntries.map(\.entry.value))
    }

    // MARK: - Recipients files

    /// A recipients file with CRLF line ends: every recipient read, each comment labelling only
    /// the next one (a CRLF comment line once swallowed the recipient after it, silently).
    @Test func test_recipientsFileParse_crlfLinesAreLines() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vf-crlf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = "age18v67ep90nm2e9w7cq8v6jlu9lxz23ghyxra4heft7h5pk4v6eqeqhf6hrl"
        let second = "age1cf9nhwzc9m85y77m2c6efurmm6f5zr7m2varfnnvz53dxaqy04yss8ly38"
        let path = folder.appendingPathComponent("team.txt").path
        try Data("# Bob\r\n\(first)\r\n\r\n\(second)\r\n".utf8).write(to: URL(fileURLWithPath: path))
        let parsed = try Recipients.parseFile(path)
        #expect(parsed.count == 2)
        #expect(parsed.map(\.defaultLabel) == ["Bob", ""])
    }
}
