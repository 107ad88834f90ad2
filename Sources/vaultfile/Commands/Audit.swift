import ArgumentParser
import SecureMemory
import VaultFile
import VaultFormat
import VaultModel

extension VaultfileCommand {
    /// Reports weak, reused, old and breached secrets, offline; exits 8 when any is found.
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audit",
            abstract: "Report weak, reused, old and breached passwords, offline (exit 8 when any is found).",
            discussion: """
                Checks each entry's value (or --field) without printing it: weak (vaultfile's strength \
                estimate, below --min-bits, default 50), reused (entries with the same secret, and the same \
                secret with digits appended, in numbered groups), old (with --max-age: unchanged for longer, \
                from the entry's history where the vault keeps one, else its modified time) and breached \
                (with --hibp: Have I Been Pwned's Pwned Passwords downloaded beforehand, either the file \
                ordered by hash or the folder of range files; SHA-1 or NTLM, read from the list). Nothing \
                leaves the machine. A table on stdout, a summary on stderr; --json for scripts (docs/JSON.md). \
                Exits 0 when nothing is found, 8 when something is. See man vaultfile: audit under VERBS, and STRENGTH ESTIMATE.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Audit only the entries at or under this name (all when absent).") var prefix: String?
        @Option(name: .customLong("hibp"), help: ArgumentHelp(
            "Look each secret up in this Pwned Passwords download: the file ordered by hash, or the folder of range files.",
            valueName: "path"))
        var hibp: String?
        @Option(name: .customLong("hibp-hash"), help: ArgumentHelp(
            "Refuse a list of the other hash kind (sha1 or ntlm); without it the kind is read from the list.", valueName: "kind"))
        var hibpHash: String?
        @Option(name: .customLong("min-bits"), help: ArgumentHelp(
            "A secret estimated below this many bits is weak; 0 skips the check.", valueName: "bits"))
        var minimumBits: Double = PasswordStrength.recommendedBits
        @Option(name: .customLong("max-age"), help: ArgumentHelp(
            "A secret unchanged for longer than this is old: N days, or Nd, Nw, Nm (30 days), Ny (365 days).", valueName: "age"))
        var maximumAge: String?
        @Option(name: .customLong("field"), help: ArgumentHelp("Audit this field instead of the value.", valueName: "name"))
        var field: String?
        @Option(name: .customLong("only"), help: ArgumentHelp(
            "Report only these kinds, comma-separated: weak, reused, old, breached.", valueName: "kinds"))
        var only: String?
        @Flag(name: .customLong("json"), help: "Print one JSON object per entry found (docs/JSON.md); never a value.")
        var json = false

        func validate() throws {
            if let hibpHash, Self.hashKind(hibpHash) == nil { throw ValidationError("--hibp-hash takes sha1 or ntlm, not '\(hibpHash)'") }
            if hibpHash != nil && hibp == nil { throw ValidationError("--hibp-hash needs --hibp PATH") }
            if !minimumBits.isFinite || minimumBits < 0 { throw ValidationError("--min-bits takes a number of bits of 0 or more") }
            if let maximumAge, Self.milliseconds(maximumAge) == nil {
                throw ValidationError("--max-age takes a number of days, or N followed by d, w, m or y (e.g. 365d, 18m, 2y), not '\(maximumAge)'")
            }
            if let field { try EntryName.validateField(field) }
            // Without --only, breached and old are checked when their option is given; named in --only, they need it.
            let kinds = try selectedKinds()
            if only != nil && kinds.contains(.breached) && hibp == nil { throw ValidationError("--only breached needs --hibp PATH") }
            if only != nil && kinds.contains(.old) && maximumAge == nil { throw ValidationError("--only old needs --max-age AGE") }
        }

        func run() throws {
            let kinds = try selectedKinds()
            var options = AuditOptions()
            options.field = field
            options.prefix = prefix ?? ""
            options.minimumBits = kinds.contains(.weak) && minimumBits > 0 ? minimumBits : nil
            options.reuse = kinds.contains(.reused)
            options.maximumAge = kinds.contains(.old) ? maximumAge.flatMap(Self.milliseconds) : nil
            // The list is opened (and its first line checked) before the vault: a wrong path fails
            // before a password is asked for.
            if let hibp, kinds.contains(.breached) { options.breachList = try PwnedPasswords(path: hibp, asking: hibpHash.flatMap(Self.hashKind)) }
            // History is read only for the age of a secret (--max-age).
            let vault = try unlock.open(entriesOnly: options.maximumAge == nil).vault
            if let prefix, !prefix.isEmpty, vault.names(atOrUnder: prefix).isEmpty { throw CLIError.noEntryOrFolder(prefix) }
            let report = try VaultAudit.run(vault, options: options)
            let output = AuditOutput(report: report, options: options)
            if json {
                try StandardOutput.write(output.json())
            } else if !report.findings.isEmpty {
                try StandardOutput.line(output.table(escaping: StandardOutput.isTerminal))
            }
            Messages.info(output.summary(listPath: options.breachList?.path, hash: options.breachList?.hash))
            if !report.findings.isEmpty { throw ExitCode(.auditFound) }
        }

        /// The kinds --only names (all when it is absent).
        private func selectedKinds() throws -> [AuditKind] {
            guard let only else { return AuditKind.allCases }
            var kinds: [AuditKind] = []
            for word in only.split(separator: ",", omittingEmptySubsequences: false) {
                let name = word.trimmingCharacters(in: " ")
                guard let kind = AuditKind(rawValue: name) else {
                    throw ValidationError("--only takes weak, reused, old and breached, comma-separated; not '\(name)'")
                }
                if !kinds.contains(kind) { kinds.append(kind) }
            }
            return kinds
        }

        /// `sha1` or `ntlm` (any case) as a hash kind.
        static func hashKind(_ text: String) -> BreachHash? {
            switch text.lowercased() {
            case "sha1", "sha-1": return .sha1
            case "ntlm": return .ntlm
            default: return nil
            }
        }

        /// An age as milliseconds: N (days), Nd, Nw, Nm (30 days) or Ny (365 days); nil when malformed.
        static func milliseconds(_ text: String) -> Int64? {
            let units: [Character: Int64] = ["d": 1, "w": 7, "m": 30, "y": 365]
            var digits = Substring(text)
            var days: Int64 = 1
            if let last = text.last, let unit = units[last] { digits = digits.dropLast(); days = unit }
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int64(digits), count <= 100_000 else { return nil }
            return count * days * 86_400_000
        }
    }
}

extension StringProtocol {
    /// The text without `characters` at either end.
    fileprivate func trimmingCharacters(in characters: String) -> String {
        String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
