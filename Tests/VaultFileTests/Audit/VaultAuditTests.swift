import Foundation
import TestSupport
import Testing
import VaultModel
@testable import VaultFile
@testable import VaultFormat

/// The checks of `audit` over a vault in memory: weak, reused (and near reuse), old, breached.
@Suite struct VaultAuditTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_800_000_000_000

    private func vault(_ values: [String: String], history: Bool = false, at time: Int64 = now) throws -> Vault {
        var vault = Vault(history: history ? .standard : nil)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) { try vault.setValue(Array(value.utf8), for: name, now: time) }
        return vault
    }

    private func options(_ change: (inout AuditOptions) -> Void = { _ in }) -> AuditOptions {
        var options = AuditOptions(now: Self.now)
        change(&options)
        return options
    }

    // MARK: - run: weak

    @Test func test_run_reportsWeakSecretsWithTheirEstimate() throws {
        let report = try VaultAudit.run(vault(["a": "password", "b": "Xk8#pQ2$mZ7!vR4w-quilt", "c": "1984-05-12"]), options: options())
        #expect(report.findings.map(\.name) == ["a", "c"])
        #expect(report.findings[0].weak?.patterns == [.commonPassword])
        #expect(report.findings[1].weak?.patterns == [.date])
        #expect(report.findings.allSatisfy { $0.kinds == [.weak] })
        #expect(report.checked == 3 && report.skipped == 0)
    }

    @Test func test_run_thresholdIsAnOptionAndNilSkipsTheCheck() throws {
        let values = ["a": "password", "b": "Xk8#pQ2$mZ7!vR4w-quilt"]
        #expect(try VaultAudit.run(vault(values), options: options { $0.minimumBits = 200 }).findings.count == 2)
        #expect(try VaultAudit.run(vault(values), options: options { $0.minimumBits = nil }).findings.isEmpty)
    }

    // MARK: reused

    @Test func test_run_groupsEqualSecretsAndNearReuseInNameOrder() throws {
        let values = ["web/a": "Tulip-Ocean-93", "web/b": "Tulip-Ocean-93", "web/c": "Tulip-Ocean-9312", "web/d": "Tulip-Ocean-",
                      "mail": "unrelated-Value-77", "bank": "other-Secret!!", "pin1": "4711", "pin2": "4712"]
        let report = try VaultAudit.run(vault(values), options: options { $0.minimumBits = nil })
        let byName = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.name, $0) })
        #expect(byName["web/a"]?.reuse == ReuseGroup(number: 1, size: 2) && byName["web/b"]?.reuse == ReuseGroup(number: 1, size: 2))
        // The same stem ("Tulip-Ocean-") with digits appended: one near group of four.
        for name in ["web/a", "web/b", "web/c", "web/d"] { #expect(byName[name]?.nearReuse == ReuseGroup(number: 2, size: 4), "\(name)") }
        #expect(byName["web/c"]?.reuse == nil)
        // Unrelated secrets, and digits-only ones (no stem), are not grouped.
        #expect(byName["mail"] == nil && byName["bank"] == nil && byName["pin1"] == nil && byName["pin2"] == nil)
        #expect(report.findings.allSatisfy { $0.kinds == [.reused] })
    }

    @Test func test_run_auditsAFieldInsteadOfTheValue() throws {
        var vault = try vault(["a": "v1", "b": "v2", "c": "v3"])
        try vault.setField("password", value: Array("shared-Secret-x".utf8), for: "a", now: Self.now)
        try vault.setField("password", value: Array("shared-Secret-x".utf8), for: "b", now: Self.now)
        let report = try VaultAudit.run(vault, options: options { $0.minimumBits = nil; $0.field = "password" })
        #expect(report.findings.map(\.name) == ["a", "b"])
        #expect(report.checked == 2 && report.skipped == 1)
    }

    // MARK: old

    @Test func test_run_oldFromModifiedWithoutHistory() throws {
        let old = try vault(["a": "Xk8#pQ2$mZ7!vR4w-quilt"], at: Self.now - 400 * Self.day)
        let report = try VaultAudit.run(old, options: options { $0.minimumBits = nil; $0.maximumAge = 365 * Self.day })
        #expect(report.findings.first?.age == SecretAge(since: Self.now - 400 * Self.day, milliseconds: 400 * Self.day, fromHistory: false))
        #expect(try VaultAudit.run(old, options: options { $0.minimumBits = nil; $0.maximumAge = 500 * Self.day }).findings.isEmpty)
    }

    @Test func test_run_oldFromHistoryIgnoresChangesOfOtherFields() throws {
        var vault = try vault(["a": "first-Secret-value"], history: true, at: Self.now - 900 * Self.day)
        try vault.setValue(Array("second-Secret-value".utf8), for: "a", now: Self.now - 500 * Self.day)
        // A note edited since: the entry's modified time moves, the secret's age does not.
        try vault.setField("notes", value: Array("moved desks".utf8), for: "a", now: Self.now - 10 * Self.day)
        let report = try VaultAudit.run(vault, options: options { $0.minimumBits = nil; $0.reuse = false; $0.maximumAge = 365 * Self.day })
        #expect(report.findings.first?.age == SecretAge(since: Self.now - 500 * Self.day, milliseconds: 500 * Self.day, fromHistory: true))
    }

    // MARK: breached, and the prefix

    @Test func test_run_looksEachSecretUpInTheBreachList() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let lines = PwnedPasswordsFixture.randomLines(2_000) + [(PwnedPasswordsTests.hex("Tulip-Ocean-93"), 42)]
        try PwnedPasswordsFixture.sortedFile(lines).write(to: directory.url.appendingPathComponent("list.txt"))
        let list = try PwnedPasswords(path: directory.path("list.txt"))
        let values = ["web/a": "Tulip-Ocean-93", "web/b": "Xk8#pQ2$mZ7!vR4w-quilt", "website": "Tulip-Ocean-93"]
        let report = try VaultAudit.run(vault(values), options: options { $0.minimumBits = nil; $0.reuse = false; $0.breachList = list; $0.prefix = "web" })
        // "web" is web/… and not "website".
        #expect(report.findings.map(\.name) == ["web/a"] && report.findings[0].breachCount == 42 && report.findings[0].kinds == [.breached])
        #expect(report.checked == 2)
    }

    // MARK: Edge cases

    @Test func test_run_emptyValuesAreSkippedAndAnEmptyVaultFindsNothing() throws {
        let report = try VaultAudit.run(vault(["a": ""]), options: options())
        #expect(report.findings.isEmpty && report.checked == 0 && report.skipped == 1)
        #expect(try VaultAudit.run(Vault(), options: options()).findings.isEmpty)
    }
}
