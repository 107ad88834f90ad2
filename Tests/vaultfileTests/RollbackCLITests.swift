import Foundation
import TestSupport
import Testing

/// Older copies outside git, through the real binary (issue 29): read with a warning, written
/// never (exit 7) unless --allow-rollback, diverged copies pointed to 'vaultfile merge'; the
/// state folder made, shared by concurrent processes, and a broken one warned about once.
@Suite struct RollbackCLITests {
    /// `t.vault` at generation 3, seen here, and `old.vault`, its copy at generation 2; the weak-KDF warning off.
    private func vaultWithAnOlderCopy() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault()
        try set(cli, "k", "one")
        try cli.write("old.vault", try cli.read("t.vault"))
        try set(cli, "k", "two")
        return cli
    }

    private func set(_ cli: CLI, _ name: String, _ value: String, in vault: String = "t.vault", extra: [String: String] = [:]) throws {
        let result = try cli.run(["set", name] + cli.unlock(vault), stdin: Array(value.utf8), extra: extra)
        #expect(result.status == 0, "\(result.stderr)")
    }

    private func generation(_ cli: CLI, _ vault: String) throws -> Int? {
        let info = try cli.run(["info", "--json", "--vault", cli.path(vault)])
        return (try JSONSerialization.jsonObject(with: Data(info.stdout)) as? [String: Any])?["generation"] as? Int
    }

    private func stateFiles(_ cli: CLI, suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
    }

    // MARK: - An older copy

    @Test func test_get_olderCopyIsReadWithAWarning() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let read = try cli.run(["get", "k"] + cli.unlock("old.vault"))
        #expect(read.status == 0 && read.text == "one")
        #expect(read.stderr.contains("vaultfile: warning: \(cli.path("old.vault")) is an older copy: generation 2, but generation 3 of this vault was seen here on "),
                "\(read.stderr)")
        #expect(read.stderr.contains("(at \(cli.path("t.vault")))") && read.stderr.contains("--allow-rollback"))
        // Merge first: --allow-rollback would leave the newer copy's changes out (issue 39's cold user); its command last, to paste.
        let merge = read.stderr.range(of: "if it holds changes of its own, combine them")
        let rollback = read.stderr.range(of: "--allow-rollback")
        #expect(merge != nil && rollback != nil && merge!.lowerBound < rollback!.lowerBound, "merge offered first: \(read.stderr)")
        #expect(read.stderr.hasSuffix("): vaultfile merge --both \(cli.path("old.vault")) \(cli.path("t.vault"))\n"), "\(read.stderr)")
        #expect(read.stderr.split(separator: "\n").count == 1, "one warning: \(read.stderr)")
        let current = try cli.run(["get", "k"] + cli.unlock())
        #expect(current.status == 0 && current.stderr.isEmpty, "the newest copy opens silently: \(current.stderr)")
    }

    @Test func test_writes_toAnOlderCopyExit7AndLeaveItByteIdentical() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let before = try cli.read("old.vault")
        try cli.write("new-pw", Array("other".utf8))
        let writes: [(arguments: [String], stdin: String)] = [
            (["set", "k"], "fork"), (["rm", "k"], ""), (["mv", "k", "k2"], ""), (["batch"], "set x --value y\n"),
            (["passwd", "--new-password-file", cli.path("new-pw")], ""),
        ]
        for write in writes {
            let result = try cli.run(write.arguments + cli.unlock("old.vault"), stdin: Array(write.stdin.utf8))
            #expect(result.status == 7, "\(write.arguments): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: error: \(cli.path("old.vault")) is an older copy: generation 2, but generation 3"), "\(result.stderr)")
            #expect(result.stderr.contains("--allow-rollback") && result.stderr.contains(": vaultfile merge --both "), "\(result.stderr)")
            #expect(!result.stderr.contains("warning"), "the error alone: \(result.stderr)")
            #expect(try cli.read("old.vault") == before, "\(write.arguments) left the file byte-identical")
        }
        let unchanged = try cli.run(["set", "k"] + cli.unlock("old.vault"), stdin: Array("one".utf8))
        #expect(unchanged.status == 0, "a command that writes nothing is not refused: \(unchanged.stderr)")
    }

    @Test func test_allowRollback_makesTheRestoredCopyTheNewest() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let restored = try cli.run(["set", "k", "--allow-rollback"] + cli.unlock("old.vault"), stdin: Array("restored".utf8))
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try generation(cli, "old.vault") == 4, "the recorded generation 3, plus one")
        try set(cli, "k", "later", in: "old.vault")
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("x".utf8)).status == 7, "the other copy is now the older one")
        let info = try cli.run(["info", "--vault", cli.path("t.vault")]).text
        #expect(info.contains("seen here:   generation 5 on ") && info.contains("OLDER COPY"), "\(info)")
    }

    @Test func test_get_divergedCopiesWarnAndPointToMerge() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        try cli.write("other.vault", try cli.read("t.vault"))
        // Another machine (its own state folder) writes one copy; this machine writes the other.
        try set(cli, "k", "there", in: "other.vault", extra: ["VAULTFILE_STATE_DIR": cli.path("other-machine")])
        try set(cli, "k", "here")
        let read = try cli.run(["get", "k"] + cli.unlock("other.vault"))
        #expect(read.status == 0 && read.text == "there")
        #expect(read.stderr.contains("\(cli.path("other.vault")) has diverged from the copy seen here on ")
                && read.stderr.contains("both are generation 4 with different contents"), "\(read.stderr)")
        #expect(read.stderr.contains("combine them with: vaultfile merge --both \(cli.path("other.vault")) \(cli.path("t.vault"))\n"), "\(read.stderr)")
    }

    @Test func test_rollbackCheck_environmentTurnsItOffOrIsAUsageError() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let off = ["VAULTFILE_ROLLBACK_CHECK": "off"]
        let read = try cli.run(["get", "k"] + cli.unlock("old.vault"), extra: off)
        #expect(read.status == 0 && read.stderr.isEmpty, "\(read.stderr)")
        #expect(try cli.run(["info", "--vault", cli.path("old.vault")], extra: off).text.contains("seen here:   not checked: VAULTFILE_ROLLBACK_CHECK=off"))
        let invalid = try cli.run(["get", "k"] + cli.unlock(), extra: ["VAULTFILE_ROLLBACK_CHECK": "maybe"])
        #expect(invalid.status == 64 && invalid.stderr.contains("VAULTFILE_ROLLBACK_CHECK must be on, off or auto"), "\(invalid.stderr)")
        try set(cli, "k", "off", in: "old.vault", extra: off)
    }

    // MARK: - info

    @Test func test_info_showsTheGenerationSeenHereBesideTheFiles() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let text = try cli.run(["info", "--vault", cli.path("t.vault")]).text
        #expect(text.contains("generation:  3\nseen here:   generation 3, this copy, since "), "\(text)")
        let old = try cli.run(["info", "--vault", cli.path("old.vault")]).text
        #expect(old.contains("generation:  2\nseen here:   generation 3 on ") && old.contains("at \(cli.path("t.vault")): this is an OLDER COPY"), "\(old)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["info", "--json", "--vault", cli.path("old.vault")]).stdout)) as? [String: Any])
        #expect(json["rollback_check"] as? String == "on" && json["seen_generation"] as? Int == 3 && json["copy"] as? String == "older")
        #expect(json["seen_path"] as? String == cli.path("t.vault") && (json["seen_at"] as? String)?.hasSuffix("Z") == true)
        try cli.initVault("new.vault")
        #expect(try cli.run(["info", "--vault", cli.path("new.vault")]).text.contains("seen here:   nothing yet"))
    }

    // MARK: - The state folder

    @Test func test_stateFolder_missingIsCreatedPrivate() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let state = cli.path("deep/er/state")
        #expect(try cli.run(["get", "k"] + cli.unlock(), extra: ["VAULTFILE_STATE_DIR": state]).status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: state)
        #expect(attributes[.posixPermissions] as? Int == 0o700)
        let records = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasSuffix(".generation") }
        #expect(records.count == 1)
        #expect(try FileManager.default.attributesOfItem(atPath: state + "/" + records[0])[.posixPermissions] as? Int == 0o600)
        let record = String(decoding: try Data(contentsOf: URL(fileURLWithPath: state + "/" + records[0])), as: UTF8.self)
        #expect(record.hasPrefix("vaultfile-seen 1\ngeneration 3\nheader-blake2b ") && record.hasSuffix("path \(cli.path("t.vault"))\n"), "\(record)")
        // Nothing secret: no value, no entry name, no password.
        for file in try FileManager.default.contentsOfDirectory(atPath: state) {
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: state + "/" + file)), as: UTF8.self)
            #expect(!text.contains("two") && !text.contains("\"k\"") && !text.contains("pw\n"), "\(file): \(text)")
        }
    }

    @Test func test_stateFolder_thatCannotBeMadeIsWarnedAboutOnce() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("file", [])
        let broken = ["VAULTFILE_STATE_DIR": cli.path("file/state")]
        // set records a generation and remembers the weak-KDF warning: two failures, one warning.
        let result = try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8), extra: broken)
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("state folder") }
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(warnings.first?.contains("the state folder \(cli.path("file/state")) cannot be used: ") == true
                && warnings.first?.contains("Not a directory") == true, "\(result.stderr)")
        #expect(result.stderr.contains("below OWASP's minimum"), "a warning that cannot be remembered is shown")
        #expect(try cli.run(["get", "k"] + cli.unlock(), extra: broken).text == "v")
    }

    /// Sixteen processes at once: each `get` records its own vault, and sixteen `set`s of one vault
    /// leave its record at the generation of the file.
    @Test func test_stateFolder_sixteenConcurrentProcessesLoseNoRecord() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        for index in 0..<16 { try cli.initVault("v\(index).vault") }
        let readers = try (0..<16).map { try cli.start(["get", "missing"] + cli.unlock("v\($0).vault")) }
        for reader in readers { #expect(reader.finish().status == 1) }
        #expect(stateFiles(cli, suffix: ".generation").count == 16)
        let writers = try (0..<16).map { try cli.start(["set", "k\($0)"] + cli.unlock("v0.vault"), stdin: Array("x".utf8)) }
        for writer in writers {
            let result = writer.finish()
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try generation(cli, "v0.vault") == 17)
        #expect(try cli.run(["info", "--vault", cli.path("v0.vault")]).text.contains("seen here:   generation 17, this copy"))
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory)) ?? []).contains { $0.contains("tmp") })
    }

    // MARK: - The weak-KDF warning

    @Test func test_weakKDFWarning_showsOnceADayPerVaultUnlessQuiet() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault(kdf: CLI.eightMiBKDF)
        let warning = "this vault's key derivation (Argon2id 8 MiB, t=1, p=1) is below OWASP's minimum"
        #expect(try cli.run(["list"] + cli.unlock()).stderr.contains(warning))
        #expect(try cli.run(["list"] + cli.unlock()).stderr.isEmpty, "not again the same day")
        try cli.initVault("second.vault", kdf: CLI.eightMiBKDF)
        #expect(try cli.run(["list"] + cli.unlock("second.vault")).stderr.contains(warning), "per vault")
        // A day later.
        let notice = try #require(stateFiles(cli, suffix: ".weak-kdf").first)
        try Data("vaultfile-notice 1\nshown \(Int(Date().timeIntervalSince1970) - 86_401)\n".utf8).write(to: URL(fileURLWithPath: cli.stateDirectory + "/" + notice))
        let vaults = ["t.vault", "second.vault"].filter { (try? cli.run(["list"] + cli.unlock($0)).stderr.contains(warning)) == true }
        #expect(vaults.count == 1, "the vault whose day passed warns again")
        try cli.initVault("third.vault", kdf: CLI.eightMiBKDF)
        let quiet = try cli.run(["list"] + cli.unlock("third.vault"), extra: ["VAULTFILE_QUIET_WEAK_KDF": "1"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }
}
