import VaultInterchange
import VaultModel

// MARK: - What an import does to one vault

/// What `import` does (or, with `--dry-run`, would do) to a vault: the entries to put, which of them
/// replace existing ones, which were skipped, and the warnings the vault itself adds.
struct ImportPlan {
    /// The entries to put (without those `--skip-existing` left out).
    var entries: ImportedEntries
    /// The names that replace an existing entry (`--overwrite`).
    var replaced: [String]
    /// The items left out because the vault has them (`--skip-existing`), each with the vault's
    /// entry it was matched to and what of it differs.
    var skipped: [SkippedItem]
    /// The names of items left out because the vault's entry of that name holds another account:
    /// none since such an item is numbered after the vault's entries (`AccountSkips`, cold60 M2 d);
    /// `not_imported` in `--json` stays, 0.
    var notImported: [String] = []
    /// The skipped items whose value or fields differ from the vault's entry (not taken, each said).
    var changed: [SkippedItem] { skipped.filter(\.differs) }
    /// Warnings found against the vault (history it does not keep, or keeps only within its limits).
    var warnings: [ImportWarning]
    /// For each name whose imported history passes the vault's limits, how many versions go.
    var historyLost: [String: Int] = [:]
    /// For entries in runs on disk put into a vault that holds entries: the names it holds already,
    /// counted in one pass (`replaced` is then empty: a dry run, which lists them, reads in memory).
    var clashes: IncomingClashes?

    /// The number of entries that replace existing ones.
    var replacedCount: Int { clashes?.count ?? replaced.count }
    /// The number of entries added, new to the vault.
    var added: Int { entries.count - replacedCount }
}

extension VaultfileCommand.Import {
    /// What importing `imported` does to `vault`, checked as the import is: clashes, names in
    /// another Unicode form, format characters, history. Throws what the import would throw.
    /// `format`: the format read (`pass` and `passage` name an entry by its file's path).
    func planned(_ imported: ImportedEntries, in vault: Vault, format: String = "") throws -> ImportPlan {
        // Records in runs on disk go into the vault as they are, checked against its names in one
        // pass; a dry run's list and --skip-existing's choice need them in memory, as does a vault
        // whose names cannot be checked so (`Vault.clashes(with:)`).
        if imported.isOnDisk, vault.count > 0, !dryRun, !skipExisting, let clashes = try imported.clashes(in: vault) {
            if clashes.count > 0 && !overwrite { throw refusal(count: clashes.count, first: clashes.first.map(\.name)) }
            // Another manager's entries that replace some are brought into memory below, so that
            // each replaced entry's account is compared with its replacement's (att62 F7).
            if clashes.count == 0 || !imported.fromForeign {
                return ImportPlan(entries: imported, replaced: [], skipped: [], warnings: [], clashes: clashes)
            }
        }
        var entries = imported.isOnDisk && (vault.count > 0 || dryRun) ? try imported.inMemory() : imported
        // The names as strings only where a check needs them: an import into an empty vault
        // of ASCII names needs none (the entries may be records, ImportRecords.swift).
        var names = vault.count == 0 && !entries.hasNonASCIIName ? [] : entries.names
        var existing = vault.count == 0 ? [] : names.filter { vault.contains($0) }
        var skipped: [SkippedItem] = []
        let notImported: [String] = []
        var warnings: [ImportWarning] = []
        if skipExisting && vault.count > 0 && entries.fromForeign {
            // Another manager's titles are numbered by account: skipped by account, not by name.
            // A pass or passage file is the vault's entry of its very path, the name an earlier
            // import gave it when it is not renamed (recheck62 N6): matched by that path first.
            let byPath: Set<[UInt8]> = format == "pass" || format == "passage"
                ? Set(entries.names.map { Array($0.utf8) }).subtracting(entries.renamings.map { Array($0.name.utf8) }) : []
            let skips = AccountSkips(entries.entries, in: vault, prefix: try prefixFolders(), byPath: byPath)
            let left = skips.left
            if !left.isEmpty {
                entries = try entries.keeping { !left.contains(Array($0.utf8)) }
            }
            if !skips.renumbered.isEmpty {
                var moves: [String: (to: String, account: String)] = [:]
                for move in skips.renumbered { moves[move.name] = (move.to, move.account.brief) }
                entries = try entries.renumbered(moves)
            }
            names = entries.names
            skipped = skips.skipped
            existing = []
        } else if !existing.isEmpty && skipExisting {
            let all = entries.entries
            for (name, entry) in all {
                guard let held = vault.entry(name) else { continue }
                skipped.append(SkippedItem(name: name, matched: name, byName: true, incoming: entry, existing: held, valueWord: "value"))
            }
            entries = try entries.keeping { !vault.contains($0) }
            names = entries.names
            existing = []
        }
        if !existing.isEmpty && !overwrite { throw refusal(count: existing.count, first: Array(existing.prefix(5))) }
        if !existing.isEmpty && entries.fromForeign { warnings += Self.otherAccountsReplaced(existing, by: entries, in: vault) }
        // Every name passed the rules of all names (Interchange.read); what is left is the
        // format characters of new names, which an ASCII name cannot hold.
        for name in names where name.utf8.contains(where: { $0 >= 0x80 }) {
            try vault.checkNewName(name, allowingFormatCharacters: formatCharacters.allowFormatCharacters)
        }
        // An empty vault has no twin of any name.
        if vault.count > 0, let twin = vault.canonicalTwins(of: names).first {
            throw VaultError.nameTwin(name: twin.name, existing: twin.existing)
        }
        if let history = entries.history, !history.isEmpty, !vault.keepsHistory {
            // Another password manager's history is one more thing not kept, said as such; a
            // vaultfile export made --with-history was asked for, and is refused.
            guard entries.fromForeign else {
                throw CLIError.refused("the file holds earlier versions (an export made with --with-history), and \(unlock.location.path) keeps no history; nothing was imported",
                                       hint: "turn history on with 'vaultfile history --enable' first (older releases then cannot read the vault), or export again without --with-history")
            }
            warnings.append(.historyNotKept(versions: history.reduce(0) { $0 + $1.versions.count }, entries: history.count))
            entries.history = nil
        }
        // A vault that keeps history keeps it within its limits: what passes them is said, as what it cannot keep at all is.
        var historyLost: [String: Int] = [:]
        var lostNames: [String] = []
        if let history = entries.history, let policy = vault.historyPolicy {
            for (name, versions) in history {
                let lost = try vault.historyImportLoss(versions, for: name)
                guard lost > 0 else { continue }
                if historyLost[name] == nil { lostNames.append(name) }
                historyLost[name, default: 0] += lost
            }
            if !lostNames.isEmpty {
                warnings.append(.historyTrimmed(versions: historyLost.values.reduce(0, +), names: lostNames, policy: policy))
            }
        }
        // Each skipped item the file holds otherwise is said, never its value (cold60 M2 a).
        for item in skipped {
            guard let change = item.change else { continue }
            // Matched by account, the item is named by its title and account, not by its number in
            // the file, which may be another item's name in this run (recheck62 N3).
            warnings.append(.changeNotTaken(name: item.byName ? item.name : item.title, matched: item.matched, change: change,
                                            byName: item.byName, account: item.account))
        }
        return ImportPlan(entries: entries, replaced: existing, skipped: skipped, notImported: notImported, warnings: warnings, historyLost: historyLost)
    }

    /// The line that says `renaming` (replacing `line`'s bytes). Names come from the file: with
    /// `escaping`, a newline or other control in a title is shown escaped, so one renaming is one
    /// line; without it, for a line its caller uses only when it needs no escape, whether one of
    /// the texts from the file in it may need one (`Messages.mayNeedEscape`: the rest of the line
    /// is printable ASCII). An item without a title says what its name was made of; a numbered one
    /// which account it is, and one that an exact title pushed aside the name that title keeps.
    @discardableResult
    private static func renamingLine(_ renaming: ImportRenaming, dryRun: Bool, escaping: Bool, into line: inout ByteLine) -> Bool {
        var mayNeedEscape = false
        /// The text from `start` to the end, escaped (`escaping`) or checked (not).
        func escape(from start: Int) {
            let text = UnsafeBufferPointer(rebasing: line.bytes[start...])
            guard escaping else {
                mayNeedEscape = mayNeedEscape || Messages.mayNeedEscape(text)
                return
            }
            var tail = Array(text)
            Messages.escape(&tail, from: 0)
            line.truncate(to: start)
            line.append(tail)
        }
        /// The text from `start` to the end with each combining mark (Unicode Mn, Mc, Me) as `\u{XXXX}`.
        func escapeCombiningMarks(from start: Int) {
            let text = String(decoding: line.bytes[start...], as: UTF8.self)
            var shown = ""
            for scalar in text.unicodeScalars {
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark:
                    let digits = String(scalar.value, radix: 16, uppercase: true)
                    shown += "\\u{" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "}"
                default: shown.unicodeScalars.append(scalar)
                }
            }
            line.truncate(to: start)
            line.append(Array(shown.utf8))
        }
        line.removeAll()
        var start = 0
        if let madeOf = renaming.madeOf {
            if dryRun { line.append("vaultfile: would name an item without a title '") } else { line.append("vaultfile: named an item without a title '") }
            start = line.count
            renaming.appendName(to: &line)
            escape(from: start)
            line.append("' after ")
            if escaping {
                line.append(contentsOf: Messages.escaped(madeOf))
            } else {
                start = line.count
                line.append(contentsOf: madeOf)
                escape(from: start)
            }
        } else {
            if dryRun { line.append("vaultfile: would be renamed '") } else { line.append("vaultfile: renamed '") }
            start = line.count
            renaming.appendOriginal(to: &line)
            // A name put in NFC looks the same as its original on a terminal: the original's
            // combining marks are shown escaped, `Cafe\u{0301}` (cold60 L8).
            var normalized = false
            renaming.forEachReason { if $0 == .normalized { normalized = true } }
            if normalized {
                if escaping { escapeCombiningMarks(from: start) } else { mayNeedEscape = true }
            }
            escape(from: start)
            line.append("' to '")
            start = line.count
            renaming.appendName(to: &line)
            escape(from: start)
            line.append(UInt8(ascii: "'"))
        }
        // The account, then each reason, joined by "; " (an item named after its site alone: none).
        line.append(" (")
        start = line.count
        var first = true
        if renaming.appendAccount(to: &line) {
            escape(from: start)
            first = false
        }
        renaming.forEachReason { reason in
            if !first { line.append("; ") }
            first = false
            if reason == .vaultHoldsAnotherAccount {
                // The vault's name said, as the exact title's is; for a name cut to fit its number,
                // whose cut stem is no entry's name, the title as the file held it (att63 F7).
                var shortened = false
                renaming.forEachReason { if $0 == .shortened { shortened = true } }
                line.append(shortened ? "the vault's entries of the title '" : "the vault's entries of '")
                let start = line.count
                if shortened { renaming.appendOriginal(to: &line) } else { line.append(contentsOf: AccountSkips.title(of: renaming.name)) }
                escape(from: start)
                line.append("' hold other accounts: numbered after them")
                return
            }
            if reason == .yieldedToExactFolders {
                // The folders the exact item is in (the unnumbered name's, the prefix's included):
                // two different source folders met there (att62 F2).
                line.append("another item in '")
                let start = line.count
                let unnumbered = AccountSkips.title(of: renaming.name)
                line.append(contentsOf: unnumbered.lastIndex(of: "/").map { String(unnumbered[..<$0]) } ?? unnumbered)
                escape(from: start)
                line.append("' has its folders exactly as its source named them: it keeps that name; this item's folders were cleaned to the same text (two different source folders met on one name)")
                return
            }
            guard reason == .yieldedToExactTitle else { return line.append(reason.explanation) }
            // The title the exact item has, which its name ends in (att58 F1: a look-alike ranks
            // after it): the unnumbered name's last part, not the whole name (att60 F8).
            line.append("another item's title is exactly '")
            let start = line.count
            let unnumbered = AccountSkips.title(of: renaming.name)
            line.append(contentsOf: unnumbered.lastIndex(of: "/").map { String(unnumbered[unnumbered.index(after: $0)...]) } ?? unnumbered)
            escape(from: start)
            line.append("': it keeps that name")
        }
        if first { line.truncate(to: line.count - 2) } else { line.append(UInt8(ascii: ")")) }
        return mayNeedEscape
    }

    /// The refusal of an import whose `count` names exist already (`first`: the first five, in input order).
    private func refusal(count: Int, first: [String]) -> CLIError {
        let shown = first.prefix(5).map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ")
        return CLIError.refused("\(ChangeReport.entries(count)) \(count == 1 ? "exists" : "exist") already (\(shown)\(count > 5 ? ", …" : "")); nothing was imported",
                                hint: count == 1 ? "pass --overwrite to replace it (or --skip-existing to keep it)" : "pass --overwrite to replace them (or --skip-existing to keep them)")
    }

    /// Says what the import did (or would do, `--dry-run`): renamings and warnings on stderr, a
    /// summary, the plan's lines on stdout for a dry run, and `--json`'s object.
    /// The reasons of `renaming` in `import --json` (`Reason.jsonNames`), each once: a name
    /// numbered in the file and again after the vault's entries said `numbered` twice (att63 F7).
    static func jsonReasons(of renaming: ImportRenaming) -> [String] {
        var said: [String] = []
        renaming.forEachReason { reason in
            for name in reason.jsonNames where !said.contains(name) { said.append(name) }
        }
        return said
    }

    func report(_ plan: ImportPlan, imported: ImportedEntries, format: String) throws {
        let entries = plan.entries
        let warnings = entries.warnings + plan.warnings
        var lines = Messages.InfoLines()
        var line = ByteLine()
        let dryRun = self.dryRun  // read once: a flag's value is looked up at each read
        entries.renamings.withUnsafeBufferPointer { renamings in  // each read in place, not copied
            for renaming in renamings {
                // Made as bytes, each text appended from the renaming's facts (90,000 lines for a
                // browser's export); a line with no byte that may need an escape (most) is made once,
                // only its texts from the file checked.
                guard Self.renamingLine(renaming, dryRun: dryRun, escaping: false, into: &line) else {
                    lines.add(plainUTF8: line.bytes)
                    continue
                }
                Self.renamingLine(renaming, dryRun: dryRun, escaping: true, into: &line)
                lines.add(utf8: Array(line.bytes))
            }
        }
        lines.flush()
        // An entry's many field renamings in one line (`ImportWarning.lines`); `--json` keeps each.
        for line in ImportWarning.lines(warnings) { Messages.warning(line) }
        // A pass or passage store read from its default folder is named as that folder.
        let read = file ?? CryptImport.defaultStore(for: self.format.name)
        // `info` keeps newlines (a message of several lines): a newline in the file's name is
        // escaped here, so that the name cannot forge a line of its own (att58 F6).
        let source = Messages.escaped(read ?? "stdin")
        // Items held back for another account are counted as the skipped ones are (recheck58 N3).
        let changed = plan.changed.count
        let skipped = (plan.skipped.isEmpty ? "" : ", \(plan.skipped.count) skipped" + (changed == 0 ? "" : " (\(changed) with changes)"))
            + (plan.notImported.isEmpty ? "" : ", \(plan.notImported.count) not imported")
        if dryRun {
            if !json { try printPlanLines(plan) }
            Messages.info("would import \(ChangeReport.entries(entries.count)) from \(source) (\(plan.added) new, \(plan.replacedCount) replaced\(skipped)); nothing was changed (--dry-run)")
        } else {
            Messages.info("imported \(ChangeReport.entries(entries.count)) from \(source) (\(plan.added) new, \(plan.replacedCount) replaced\(skipped))")
        }
        guard json else { return }
        var members: [(String, JSON)] = [
            ("source", read.map(JSON.string) ?? .null),
            ("format", .string(format)),
            ("imported", .int(Int64(entries.count))),
            ("added", .int(Int64(plan.added))),
            ("replaced", .int(Int64(plan.replacedCount))),
            ("skipped", .int(Int64(plan.skipped.count))),
            ("not_imported", .int(Int64(plan.notImported.count))),
            ("skipped_with_changes", .int(Int64(changed))),
            ("dry_run", .bool(dryRun)),
            ("renamed", .array(entries.renamings.map { renaming in
                .object([("from", .string(renaming.original)), ("to", .string(renaming.name)),
                         // An item without a title says so first (cold63 F11: its reasons were `[]`); each reason once (att63 F7).
                         ("reasons", .array((renaming.madeOf == nil ? [] : [JSON.string("untitled")]) + Self.jsonReasons(of: renaming).map(JSON.string)))]
                         + (renaming.account.map { [("account", JSON.string($0))] } ?? [])
                         + (renaming.madeOf.map { [("named_after", JSON.string($0))] } ?? []))
            })),
            ("warnings", .array(warnings.map { .object([("kind", .string($0.kind)), ("message", .string($0.description))]) })),
        ]
        if dryRun {
            let replaced = Set(plan.replaced.map { Array($0.utf8) })
            members.append(("entries", .array(entries.names.map { name in
                .object([("name", .string(name)), ("action", .string(replaced.contains(Array(name.utf8)) ? "replace" : "add"))])
            })))
        }
        // The vault's entries the skipped items were matched to, in a real import too (cold60 L6).
        members.append(("skipped_names", .array(plan.skipped.map { .string($0.matched) })))
        members.append(("not_imported_names", .array(plan.notImported.map(JSON.string))))
        members.append(("skipped_with_changes_names", .array(plan.changed.map { .string($0.matched) })))
        if dryRun {
            members.append(("history", .array((entries.history ?? []).map {
                .object([("name", .string($0.name)), ("versions", .int(Int64($0.versions.count))), ("dropped", .int(Int64(plan.historyLost[$0.name] ?? 0)))])
            })))
        }
        try StandardOutput.line(JSON.object(members).text)
    }

    /// `--dry-run`'s lines: `add NAME`, `replace NAME`, `skip NAME` (with why), `history NAME (N versions)`
    /// (and how many of them pass the vault's history limits).
    private func printPlanLines(_ plan: ImportPlan) throws {
        let replaced = Set(plan.replaced.map { Array($0.utf8) })
        for name in plan.entries.names {
            let action = replaced.contains(Array(name.utf8)) ? "replace" : "add"
            try StandardOutput.line("\(action) \(EntryName.escapingFormatCharacters(name))")
        }
        // The vault's entry each item was matched to (cold60 M2 b), and whether the file's differs.
        for item in plan.skipped {
            let why = item.byName ? "already in the vault" : "the vault's entry holds this account"
            let change = item.change.map { "; \($0): not taken" } ?? ""
            try StandardOutput.line("skip \(EntryName.escapingFormatCharacters(item.matched)) (\(why)\(change))")
        }
        for name in plan.notImported {
            try StandardOutput.line("skip \(EntryName.escapingFormatCharacters(name)) (the vault's entry of that name holds another account: not imported)")
        }
        for (name, versions) in plan.entries.history ?? [] {
            let dropped = plan.historyLost[name].map { ", \($0) past the vault's history limits not kept" } ?? ""
            try StandardOutput.line("history \(EntryName.escapingFormatCharacters(name)) (\(versions.count == 1 ? "1 earlier version" : "\(versions.count) earlier versions") merged\(dropped))")
        }
    }
}
