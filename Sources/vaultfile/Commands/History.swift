import ArgumentParser
import KDF
import SecureMemory
import VaultModel

extension VaultfileCommand {
    /// Lists the earlier versions of an entry, and turns history on, off, or prunes it.
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "List an entry's earlier versions; turn history on or off, or prune it.",
            discussion: """
                'history NAME' lists the versions kept of NAME, newest first: revision 1 is the value before the \
                current one (as 'get --revision' and 'restore --revision' number them), with when it was replaced, \
                its size and which parts changed after it; values only with --show. Without NAME: the vault's \
                history settings.

                A vault keeps history when it was made by 'init' (format 1.2) or after --enable. An older vault keeps \
                its format, and no history, until --enable or --keep-history N asks for it: releases without history \
                (0.1.0) then say they cannot read it. --keep-history 0 drops every earlier version and the trash and \
                makes the vault readable by them again. --prune drops the earlier versions (of NAME, or of every \
                entry and the trash) and keeps history on.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry whose versions to list (or to prune).") var name: String?
        @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false
        @Flag(name: .customLong("show"), help: "Also print each version's value and fields.") var show = false
        @Flag(name: .customLong("enable"), help: "Turn history on (format 1.2; older releases cannot read the vault).") var enable = false
        @Flag(name: .customLong("prune"), help: "Drop the earlier versions of NAME, or of every entry and the trash.") var prune = false
        @OptionGroup var settings: HistoryOptions

        func validate() throws {
            let changes = (enable ? 1 : 0) + (prune ? 1 : 0) + (settings.isGiven && !enable ? 1 : 0)
            if changes > 1 { throw ValidationError("--prune cannot be combined with --enable, --keep-history or --history-bytes") }
            if enable && settings.turnsOff { throw ValidationError("--enable turns history on; --keep-history 0 turns it off") }
            if changes > 0 && (json || show) { throw ValidationError("--json and --show go with listing an entry's versions") }
            if (enable || settings.isGiven) && name != nil { throw ValidationError("history settings are the vault's, not one entry's: leave out NAME") }
        }

        func run() throws {
            if prune { return try pruneHistory() }
            if enable || settings.isGiven { return try changeSettings() }
            let vault = try unlock.open().vault
            guard let name else { return try printSettings(vault) }
            let versions = try vault.history(of: name)
            if versions.isEmpty && !vault.contains(name) { throw VaultError.entryNotFound(name) }
            if json {
                var out = Self.json(name: name, versions: versions, current: vault.entry(name), show: show)
                defer { out.wipe() }
                return try StandardOutput.write(out.bytes)
            }
            var lines: [String] = []
            for (index, version) in versions.enumerated() {
                let newer = index == 0 ? vault.entry(name) : versions[index - 1].entry
                let changed = Self.changedParts(from: version.entry, to: newer)
                lines.append("\(index + 1)  replaced \(timestamp(milliseconds: version.replaced))  \(version.size) bytes  "
                    + (newer == nil ? "removed" : "changed: \(changed.isEmpty ? "times only" : changed.joined(separator: ", "))"))
                if show {
                    lines.append("   value: \(Self.printable(version.entry.value))")
                    for field in version.entry.fields.keys.sorted() { lines.append("   \(field): \(Self.printable(version.entry.fields[field]!))") }
                }
            }
            if lines.isEmpty { Messages.info("'\(name)' has no earlier version") }
            for line in lines { try StandardOutput.line(line) }
        }

        // MARK: Changing the settings

        private func changeSettings() throws {
            let said = try unlock.update { unlocked -> String in
                let before = unlocked.vault.historyPolicy
                guard let policy = settings.policy(from: before) else {
                    guard before != nil else { return "\(unlock.location.path) keeps no history; nothing changed" }
                    unlocked.vault.disableHistory()
                    return "history is off: every earlier version and the trash were dropped; releases without history read \(unlock.location.path) again"
                }
                try unlocked.vault.enableHistory(policy)
                if before == nil {
                    return "history is on (\(Self.describe(policy))); releases without history, such as 0.1.0, can no longer read \(unlock.location.path)"
                }
                return before == policy ? "history settings unchanged (\(Self.describe(policy)))" : "history now keeps \(Self.describe(policy))"
            }
            Messages.info(said)
        }

        private func pruneHistory() throws {
            let dropped = try unlock.update { unlocked in try unlocked.vault.pruneHistory(of: name) }
            Messages.info("dropped \(dropped) earlier \(dropped == 1 ? "version" : "versions")\(name.map { " of '\($0)'" } ?? "")")
        }

        private func printSettings(_ vault: Vault) throws {
            guard let policy = vault.historyPolicy else {
                if json { return try StandardOutput.line(JSON.object([("enabled", .bool(false))]).text) }
                return try StandardOutput.line("history: off (turn it on with 'vaultfile history --enable')")
            }
            let trashed = try vault.trash().count
            if json {
                return try StandardOutput.line(JSON.object([
                    ("enabled", .bool(true)), ("versions", .int(Int64(policy.versions))), ("bytesPerEntry", .int(Int64(policy.byteBudget))),
                    ("trashLimit", .int(Int64(policy.trashLimit))), ("trashed", .int(Int64(trashed))),
                ]).text)
            }
            try StandardOutput.line("history: on, \(Self.describe(policy)); \(trashed) removed \(trashed == 1 ? "entry" : "entries") in the trash")
        }

        static func describe(_ policy: HistoryPolicy) -> String {
            "\(policy.versions) \(policy.versions == 1 ? "version" : "versions") and \(ByteSize.format(UInt64(policy.byteBudget))) per entry, "
                + "a trash of up to \(policy.trashLimit) removed \(policy.trashLimit == 1 ? "entry" : "entries")"
        }

        // MARK: Output

        /// The parts that differ between `old` and `new` ("value", then field names), sorted.
        static func changedParts(from old: Entry, to new: Entry?) -> [String] {
            guard let new else { return [] }
            var parts = old.value == new.value ? [] : ["value"]
            for field in Swift.Set(old.fields.keys).union(new.fields.keys).sorted() where old.fields[field] != new.fields[field] {
                parts.append(old.fields[field] == nil ? "\(field) (added)" : new.fields[field] == nil ? "\(field) (removed)" : field)
            }
            return parts
        }

        /// A value as --show prints it on one line: text as it is with newlines escaped, else hex.
        static func printable(_ bytes: [UInt8]) -> String {
            if let text = String(validating: bytes, as: UTF8.self), Get.isText(bytes.withUnsafeBytes { $0 }) {
                return JSON.quote(text)
            }
            return "hex:" + Self.hex(bytes)
        }

        static func hex(_ bytes: [UInt8]) -> String {
            let digits = Array("0123456789abcdef")
            return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        }

        /// The JSON of `history NAME --json` (docs/JSON.md), written where it can be wiped: with
        /// `--show` each revision carries `value` and `encoding`, and `fieldValues`, as `get --json` does.
        static func json(name: String, versions: [EntryVersion], current: Entry?, show: Bool) -> SecretJSON {
            var out = SecretJSON()
            var head = JSON.object([("name", .string(name)), ("exists", .bool(current != nil))]).text
            head.removeLast()
            out.raw(head + ",\"revisions\":[")
            for (index, version) in versions.enumerated() {
                let newer = index == 0 ? current : versions[index - 1].entry
                var text = JSON.object([
                    ("revision", .int(Int64(index + 1))),
                    ("replaced", .string(timestamp(milliseconds: version.replaced))),
                    ("modified", .string(timestamp(milliseconds: version.entry.modified))),
                    ("size", .int(Int64(version.size))),
                    ("fields", .array(version.entry.fields.keys.sorted().map { .string($0) })),
                    ("removed", .bool(newer == nil)),
                    ("changed", .array(changedParts(from: version.entry, to: newer).map { .string($0) })),
                ]).text
                text.removeLast()
                out.raw((index == 0 ? "" : ",") + text)
                if show {
                    out.raw(",")
                    out.value(version.entry.value)
                    out.raw(",\"fieldValues\":{")
                    for (number, field) in version.entry.fields.keys.sorted().enumerated() {
                        if number > 0 { out.raw(",") }
                        out.key(field)
                        out.raw("{")
                        out.value(version.entry.fields[field]!)
                        out.raw("}")
                    }
                    out.raw("}")
                }
                out.raw("}")
            }
            out.raw("]}\n")
            return out
        }
    }
}
