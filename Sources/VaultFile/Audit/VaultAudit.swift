#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What `audit` checks

/// The kinds of finding `vaultfile audit` reports, as `--json` and `--only` name them.
public enum AuditKind: String, Sendable, CaseIterable {
    case weak, reused, old, breached
}

/// What an audit checks, and against what.
public struct AuditOptions {
    /// The field checked instead of the value (entries without it are skipped); nil for the value.
    public var field: String?
    /// Only entries at or under this name (`web` is `web` and `web/…`, not `website`); empty for all.
    public var prefix = ""
    /// A secret estimated below this many bits is weak; nil to skip the check.
    public var minimumBits: Double?
    /// Whether equal secrets (and the same secret with digits appended) are grouped.
    public var reuse = true
    /// A secret unchanged for longer than this many milliseconds is old; nil to skip the check.
    public var maximumAge: Int64?
    /// The breach list to look each secret up in; nil to skip the check.
    public var breachList: PwnedPasswords?
    /// The time ages are counted to, in milliseconds since the epoch.
    public var now: Int64

    /// Options that check weakness at `PasswordStrength.recommendedBits` and reuse, as of `now`.
    public init(now: Int64 = currentTimeMilliseconds()) {
        self.now = now
        minimumBits = PasswordStrength.recommendedBits
    }
}

/// One entry with something found, and the details of each kind found.
public struct AuditFinding: Equatable, Sendable {
    /// The entry's name.
    public let name: String
    /// The estimate, when the secret is weak.
    public var weak: StrengthEstimate?
    /// The group of entries holding the same secret: its number and how many entries it has.
    public var reuse: ReuseGroup?
    /// The group of entries whose secrets differ only in digits at the end (`hunter`, `hunter2`).
    public var nearReuse: ReuseGroup?
    /// How long the secret has been unchanged, when that is longer than the age given.
    public var age: SecretAge?
    /// How many times the breach list says the secret was seen, when it is listed.
    public var breachCount: Int?

    /// The kinds found, in the order of `AuditKind`.
    public var kinds: [AuditKind] {
        var kinds: [AuditKind] = []
        if weak != nil { kinds.append(.weak) }
        if reuse != nil || nearReuse != nil { kinds.append(.reused) }
        if age != nil { kinds.append(.old) }
        if breachCount != nil { kinds.append(.breached) }
        return kinds
    }

    init(name: String) { self.name = name }
}

/// A group of entries that share a secret (or its stem), numbered from 1 in name order.
public struct ReuseGroup: Equatable, Sendable {
    public let number: Int
    public let size: Int
}

/// Since when a secret has been unchanged, and how that was learned.
public struct SecretAge: Equatable, Sendable {
    /// When it took its current form, in milliseconds since the epoch.
    public let since: Int64
    /// Its age at the audit, in milliseconds.
    public let milliseconds: Int64
    /// True when read from the entry's history (the replacement of the last different version);
    /// false when from the entry's modified time (which a change of any field also moves).
    public let fromHistory: Bool
}

/// What an audit found: the findings in name order, and what was looked at.
public struct AuditReport: Equatable, Sendable {
    public var findings: [AuditFinding] = []
    /// Entries whose secret was checked.
    public var checked = 0
    /// Entries skipped: an empty secret, or no such field.
    public var skipped = 0
    /// Entries whose secret has no form of the breach list's hash (NTLM of bytes that are not UTF-8).
    public var notLookedUp = 0
}

// MARK: - The audit

/// Runs the checks of `vaultfile audit` over a vault's entries, reading each secret where it lies
/// in the decrypted buffer: nothing prints, nothing is written, and what is derived from a secret
/// (its keyed hashes, its breach-list hash, copies from history) is wiped once its check is done.
public enum VaultAudit {
    /// Audits the entries of `vault` that `options` selects.
    public static func run(_ vault: Vault, options: AuditOptions) throws -> AuditReport {
        var report = AuditReport()
        var findings: [AuditFinding] = []
        var reuse = ReuseIndex(capacity: options.reuse ? vault.count : 0)
        defer { reuse.wipeAll() }
        let prefix = Array(options.prefix.utf8)
        var failure: (any Error)?
        vault.forEachEntryBytes(withPrefix: options.prefix) { entry in
            guard failure == nil, isAtOrUnder(entry.name, prefix) else { return }
            let secret: UnsafeRawBufferPointer
            if let field = options.field {
                guard let found = entry.fields.first(where: { $0.name.elementsEqual(field.utf8) }) else { report.skipped += 1; return }
                secret = found.value
            } else {
                secret = entry.value
            }
            guard !secret.isEmpty else { report.skipped += 1; return }
            report.checked += 1
            var finding = AuditFinding(name: String(decoding: entry.name, as: UTF8.self))
            do {
                if let minimum = options.minimumBits {
                    let estimate = PasswordStrength.estimate(secret)
                    if estimate.bits < minimum { finding.weak = estimate }
                }
                if options.reuse { reuse.add(secret, entry: findings.count) }
                if let list = options.breachList {
                    switch try list.occurrences(of: secret) {
                    case nil: report.notLookedUp += 1
                    case let count? where count > 0: finding.breachCount = count
                    default: break
                    }
                }
                if let maximum = options.maximumAge {
                    let age = try secretAge(vault, name: finding.name, current: secret, modified: entry.modified, field: options.field, now: options.now)
                    if age.milliseconds > maximum { finding.age = age }
                }
            } catch {
                failure = error
            }
            findings.append(finding)
        }
        if let failure { throw failure }
        if options.reuse { reuse.assignGroups(to: &findings) }
        report.findings = findings.filter { !$0.kinds.isEmpty }
        return report
    }

    /// Whether `name` is `prefix` or under it (`web` takes `web` and `web/x`, not `website`).
    static func isAtOrUnder(_ name: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard let last = prefix.last, last != UInt8(ascii: "/") else { return name.starts(with: prefix) }
        return name.starts(with: prefix) && (name.count == prefix.count || name[prefix.count] == UInt8(ascii: "/"))
    }

    // MARK: Age

    /// Since when the secret of `name` (`current`) has been as it is: from its history when the vault
    /// keeps one (the replacement of the newest version that differs, else the oldest version kept),
    /// else from `modified`. The copies history hands over are wiped.
    static func secretAge(_ vault: Vault, name: String, current: UnsafeRawBufferPointer, modified: Int64, field: String?,
                          now: Int64) throws -> SecretAge {
        guard vault.keepsHistory else { return SecretAge(since: modified, milliseconds: now - modified, fromHistory: false) }
        var versions = try vault.history(of: name)
        defer {
            for index in versions.indices {
                wipe(&versions[index].entry.value)
                for key in Array(versions[index].entry.fields.keys) {
                    if var bytes = versions[index].entry.fields.removeValue(forKey: key) { wipe(&bytes) }
                }
            }
        }
        guard let oldest = versions.last else { return SecretAge(since: modified, milliseconds: now - modified, fromHistory: false) }
        var since = oldest.entry.modified
        for version in versions {
            let old = field.map { version.entry.fields[$0] } ?? version.entry.value
            let same = old.map { bytes in bytes.withUnsafeBytes { $0.elementsEqual(current) } } ?? false
            if !same {
                since = version.replaced
                break
            }
        }
        return SecretAge(since: since, milliseconds: now - since, fromHistory: true)
    }
}
