import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultFormat
import VaultModel

/// `vaultfile audit` run as a user runs it: the table, --json, exit 0 and 8, the breach list in
/// both forms, and values never shown.
@Suite struct AuditCLITests {
    static let values = ["web/github": "password1", "web/gitlab": "password1", "mail": "Summer2024!",
                         "bank": "quilt-ranger-OYSTER-pamphlet-gravy-9", "vpn": "Xk8#pQ2$mZ7!vR4w-zz"]

    /// A vault of `values` with the password in `pw`.
    private func setUp(_ values: [String: String] = values) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        try cli.setEntries(values)
        return cli
    }

    private func json(_ result: CLI.Result) throws -> [[String: Any]] {
        try #require(JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]])
    }

    private func expectNoValue(_ result: CLI.Result, _ values: [String: String] = values) {
        for value in values.values {
            #expect(!result.text.contains(value) && !result.stderr.contains(value), "a value was printed")
        }
    }

    // MARK: - audit

    @Test func test_audit_exitsZeroWhenNothingIsFound() throws {
        let cli = try setUp(["bank": "quilt-ranger-OYSTER-pamphlet-gravy-9", "vpn": "Xk8#pQ2$mZ7!vR4w-zz"])
        defer { cli.directory.remove() }
        let result = try cli.run(["audit"] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("audit: 2 entries checked: nothing found"), "\(result.stderr)")
    }

    @Test func test_audit_exitsEightWithATableOfWhatItFoundAndNoValue() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let result = try cli.run(["audit"] + cli.unlock())
        #expect(result.status == 8, "\(result.stderr)")
        let lines = result.text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("NAME") == true && lines.first?.contains("WEAK") == true && lines.first?.contains("REUSED") == true)
        #expect(lines.dropFirst().map { String($0.prefix { $0 != " " }) } == ["mail", "web/github", "web/gitlab"])
        #expect(lines[2].contains("common password") && lines[2].contains("reused with 1 other (group 1)"), "\(lines)")
        #expect(result.stderr.contains("audit: 5 entries checked: 3 weak, 2 reused"), "\(result.stderr)")
        expectNoValue(result)
    }

    @Test func test_audit_tableNamesHowManyOthersAndNumbersExactAndNearGroupsInOneSeries() throws {
        let values = ["a": "Zq!9rT#uV-same-Kw", "b": "Zq!9rT#uV-same-Kw", "c": "Pk$2mW@hunter-Qe7", "d": "Pk$2mW@hunter-Qe7",
                      "e": "Pk$2mW@hunter-Qe7", "f": "Lx%4nB&orbit-Jd1", "g": "Lx%4nB&orbit-Jd22"]
        let cli = try setUp(values); defer { cli.directory.remove() }
        let result = try cli.run(["audit"] + cli.unlock())
        #expect(result.status == 8, "\(result.stderr)")
        let rows = Dictionary(result.text.split(separator: "\n").dropFirst().map { (String($0.prefix { $0 != " " }), String($0)) }) { $1 }
        for name in ["a", "b"] { #expect(rows[name]?.contains("reused with 1 other (group 1)") == true, "\(result.text)") }
        for name in ["c", "d", "e"] { #expect(rows[name]?.contains("reused with 2 others (group 2)") == true, "\(result.text)") }
        for name in ["f", "g"] { #expect(rows[name]?.contains("near 1 other (group 3)") == true, "\(result.text)") }
        #expect(!result.text.contains(" of "), "no 'group N of M' left: \(result.text)")
        expectNoValue(result, values)
    }

    @Test func test_audit_jsonHasOneObjectPerEntryFoundWithItsDetails() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let result = try cli.run(["audit", "--json"] + cli.unlock())
        #expect(result.status == 8)
        let objects = try json(result)
        #expect(objects.map { $0["name"] as? String } == ["mail", "web/github", "web/gitlab"])
        let github = objects[1]
        #expect(github["kinds"] as? [String] == ["weak", "reused"])
        let weak = try #require(github["weak"] as? [String: Any])
        #expect((weak["bits"] as? Double ?? 99) < 20 && weak["patterns"] as? [String] == ["common password"] && weak["guesses_log10"] is Double)
        #expect(github["reused"] as? [String: Int] == ["group": 1, "size": 2])
        expectNoValue(result)
    }

    @Test func test_audit_onlyChoosesTheKindsAndPrefixTheEntries() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let reused = try cli.run(["audit", "--json", "--only", "reused"] + cli.unlock())
        #expect(try json(reused).map { $0["kinds"] as? [String] } == [["reused"], ["reused"]])
        let mail = try cli.run(["audit", "mail", "--json"] + cli.unlock())
        #expect(try json(mail).map { $0["name"] as? String } == ["mail"])
        let strong = try cli.run(["audit", "bank", "--min-bits", "20"] + cli.unlock())
        #expect(strong.status == 0, "\(strong.stderr)")
    }

    @Test func test_audit_maxAgeReportsSecretsUnchangedForLonger() throws {
        let cli = try setUp(["bank": "quilt-ranger-OYSTER-pamphlet-gravy-9"]); defer { cli.directory.remove() }
        let longAgo = currentTimeMilliseconds() - 400 * 86_400_000
        try VaultStore(path: cli.path("t.vault")).update(password: SecureBytes(copying: Array("pw".utf8)), limits: .defaults) { unlocked in
            try unlocked.vault.setValue(Array("an-Old-secret-value-77".utf8), for: "old", now: longAgo)
        }
        let result = try cli.run(["audit", "--json", "--max-age", "1y"] + cli.unlock())
        #expect(result.status == 8, "\(result.stderr)")
        let objects = try json(result)
        #expect(objects.map { $0["name"] as? String } == ["old"])
        let old = try #require(objects.first?["old"] as? [String: Any])
        #expect(old["days"] as? Int == 400 && old["from"] as? String == "modified" && (old["since"] as? String)?.hasSuffix("Z") == true)
        #expect(try cli.run(["audit", "--max-age", "500"] + cli.unlock()).status == 0)
    }

    @Test func test_audit_hibpFileAndRangeFolderReportTheSameBreaches() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        let planted = [("password1", 2_418_984), ("Summer2024!", 1_234)]
        let lines = PwnedPasswordsFixture.randomLines(3_000) + planted.map { (Self.sha1($0.0), $0.1) }
        try cli.write("hibp.txt", Array(PwnedPasswordsFixture.sortedFile(lines)))
        let prefixes = Set(Self.values.values.map { String(Self.sha1($0).prefix(5)) } + ["00000"])
        try PwnedPasswordsFixture.writeRangeFolder(lines, to: URL(fileURLWithPath: cli.path("ranges")), prefixes: prefixes)
        var answers: [[String: Int]] = []
        for list in ["hibp.txt", "ranges"] {
            let result = try cli.run(["audit", "--json", "--only", "breached", "--hibp", cli.path(list)] + cli.unlock())
            #expect(result.status == 8, "\(list): \(result.stderr)")
            var counts: [String: Int] = [:]
            for object in try json(result) { counts[object["name"] as! String] = (object["breached"] as? [String: Int])?["count"] }
            answers.append(counts)
            expectNoValue(result)
        }
        #expect(answers[0] == ["web/github": 2_418_984, "web/gitlab": 2_418_984, "mail": 1_234])
        #expect(answers[1] == answers[0])
    }

    // MARK: Failures

    @Test func test_audit_aBadBreachListFailsBeforeThePasswordIsAsked() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        // No password source: the list is checked first, so its error is the one reported.
        let missing = try cli.run(["audit", "--vault", cli.path("t.vault"), "--hibp", cli.path("none.txt")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("the breach list \(cli.path("none.txt"))") && missing.stderr.contains("hint: give --hibp"), "\(missing.stderr)")
        try cli.write("text.txt", Array("not a list\n".utf8))
        let text = try cli.run(["audit", "--hibp", cli.path("text.txt")] + cli.unlock())
        #expect(text.status == 2 && text.stderr.contains("is not a Pwned Passwords list"), "\(text.stderr)")
    }

    @Test func test_audit_refusesMalformedOptions() throws {
        let cli = try setUp(); defer { cli.directory.remove() }
        for arguments in [["--only", "weak,stale"], ["--max-age", "soon"], ["--hibp-hash", "sha1"], ["--hibp-hash", "md5", "--hibp", "x"],
                          ["--min-bits", "-3"], ["--only", "breached"], ["--only", "weak,old"]] {
            let result = try cli.run(["audit"] + arguments + cli.unlock())
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        let nothing = try cli.run(["audit", "nothing/here"] + cli.unlock())
        #expect(nothing.status == 1, "\(nothing.stderr)")
    }

    // MARK: - The weak-password warning

    @Test func test_init_warnsAboutAWeakPasswordFromAFileAndNamesTheVariable() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("letmein1".utf8))
        let loud = try cli.run(["init"] + cli.unlock("a.vault") + CLI.fastKDF, extra: ["VAULTFILE_QUIET_WEAK_PASSWORD": ""])
        #expect(loud.status == 0, "\(loud.stderr)")
        #expect(loud.stderr.contains("the new password looks weak") && loud.stderr.contains("VAULTFILE_QUIET_WEAK_PASSWORD=1"), "\(loud.stderr)")
        #expect(!loud.stderr.contains("letmein1"))
        let quiet = try cli.run(["init"] + cli.unlock("b.vault") + CLI.fastKDF, extra: ["VAULTFILE_QUIET_WEAK_PASSWORD": "1"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("looks weak"), "\(quiet.stderr)")
    }

    @Test func test_passwdAndSlotAdd_warnAboutAWeakNewPassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault(password: "quilt-ranger-OYSTER-pamphlet-gravy")
        try cli.write("weak", Array("Password123".utf8))
        let loud = ["VAULTFILE_QUIET_WEAK_PASSWORD": ""]
        let added = try cli.run(["slot", "add", "password", "--new-password-file", cli.path("weak")] + cli.unlock() + CLI.fastKDF, extra: loud)
        #expect(added.status == 0 && added.stderr.contains("the new password looks weak"), "\(added.stderr)")
        let changed = try cli.run(["passwd", "--new-password-file", cli.path("weak")] + cli.unlock() + CLI.fastKDF, extra: loud)
        #expect(changed.status == 0 && changed.stderr.contains("looks weak") && changed.stderr.contains("common password"), "\(changed.stderr)")
        #expect(!added.stderr.contains("Password123") && !changed.stderr.contains("Password123"))
        try cli.write("strong", Array("quilt-ranger-OYSTER-pamphlet-gravy-2".utf8))
        let strong = try cli.run(["passwd", "--new-password-file", cli.path("strong"), "--password-file", cli.path("weak"),
                                  "--vault", cli.path("t.vault")] + CLI.fastKDF, extra: loud)
        #expect(strong.status == 0 && !strong.stderr.contains("looks weak"), "\(strong.stderr)")
    }

    /// The upper-case SHA-1 of `password`, as the lists write it.
    static func sha1(_ password: String) -> String {
        var digest = [UInt8](repeating: 0, count: 20)
        _ = Array(password.utf8).withUnsafeBytes { bytes in digest.withUnsafeMutableBytes { BreachHash.sha1.digest(of: bytes, into: $0) } }
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
    }
}
