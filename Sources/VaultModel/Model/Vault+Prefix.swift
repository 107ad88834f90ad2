// MARK: - Relocation

/// One entry a copy or a move puts under a new name.
public struct Relocation: Equatable, Sendable {
    /// The entry's name before.
    public let source: String
    /// The name it gets.
    public let destination: String
    /// Whether an entry that already had the destination name is replaced.
    public let replaces: Bool

    /// Creates a relocation.
    public init(source: String, destination: String, replaces: Bool) {
        self.source = source
        self.destination = destination
        self.replaces = replaces
    }
}

// MARK: - Vault: folders of entries and copies

/// The operations of `rm -r`, `mv` and `cp` on folders (every entry under a prefix), and the copy
/// of one entry.
///
/// A folder is a prefix that ends with '/': `prod/` holds `prod/db` and `prod/web/key`, never
/// `production/x`. Each operation checks every new name (EntryName's rules, the name length) and
/// the entry count before it changes anything, and then changes a copy that it hands back only
/// when every step succeeded: the vault is changed whole or not at all.
extension Vault {
    /// `name` as a folder: with one trailing '/' ("prod" and "prod/" both give "prod/").
    public static func folder(_ name: String) -> String {
        name.hasSuffix("/") ? name : name + "/"
    }

    /// The names under the folder `name` ("prod" and "prod/" both mean `prod/`), sorted byte-wise.
    public func names(under name: String) -> [String] {
        names(withPrefix: Self.folder(name))
    }

    /// Removes every entry under the folder `prefix` and returns their names.
    ///
    /// Throws `entryNotFound` (naming the folder) when there is none.
    @discardableResult
    public mutating func removeFolder(_ prefix: String) throws(VaultError) -> [String] {
        let folder = try Self.checkedFolder(prefix)
        let removed = names(under: folder)
        guard !removed.isEmpty else { throw .entryNotFound(folder) }
        var result = self
        for name in removed { try result.remove(name) }
        self = result
        return removed
    }

    /// Renames every entry under the folder `old` to the same name under the folder `new`
    /// (`mv prod/ staging/`: `prod/db` becomes `staging/db`) and returns what moved where.
    ///
    /// An entry that already has one of the new names is replaced only with `overwrite` (an entry
    /// that moves away itself is no obstacle); otherwise nothing changes and `entryExists` names it.
    @discardableResult
    public mutating func moveFolder(_ old: String, to new: String, overwrite: Bool) throws(VaultError) -> [Relocation] {
        let plan = try relocations(from: old, to: new, overwrite: overwrite, movesSources: true)
        var result = self
        // Every source first, then every destination: a folder may move into itself (a/ → a/b/).
        // The history of each entry moves with it.
        var entries: [(entry: Entry, history: [EntryVersion])] = []
        entries.reserveCapacity(plan.count)
        for step in plan { entries.append(try result.take(step.source)) }
        for (step, taken) in zip(plan, entries) {
            try result.put(taken.entry, as: step.destination)
            try result.attachHistory(taken.history, key: Array(step.destination.utf8))
        }
        self = result
        return plan
    }

    /// Copies every entry under the folder `old` to the same name under the folder `new` and
    /// returns what was copied where. Copies are new entries: created and modified `now`.
    ///
    /// Replaces existing entries only with `overwrite`; refuses a copy past the entry limit.
    @discardableResult
    public mutating func copyFolder(_ old: String, to new: String, overwrite: Bool,
                                    now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> [Relocation] {
        let plan = try relocations(from: old, to: new, overwrite: overwrite, movesSources: false)
        let added = plan.count { !$0.replaces }
        guard count + added <= VaultLimits.maxEntries else {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries; the copy would make \(count + added)")
        }
        var result = self
        var copies: [Entry] = []
        copies.reserveCapacity(plan.count)
        for step in plan { copies.append(try copied(step.source, now: now)) }
        for (step, copy) in zip(plan, copies) { try result.put(copy, as: step.destination) }
        self = result
        return plan
    }

    /// Copies the entry `source` (its value and fields) to `destination`, as a new entry created
    /// and modified `now`; replaces an existing `destination` only with `overwrite`.
    @discardableResult
    public mutating func copy(_ source: String, to destination: String, overwrite: Bool,
                              now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> Relocation {
        // As every way in: the new name in NFC, the source found by its exact bytes, then its NFC form.
        let destination = EntryName.normalized(destination)
        let source = existingName(for: source) ?? source
        _ = try EntryName.validate(destination)
        let copy = try copied(source, now: now)
        let replaces = contains(destination)
        guard !replaces || overwrite else { throw .entryExists(destination) }
        guard source != destination else { return Relocation(source: source, destination: destination, replaces: true) }
        try put(copy, as: destination)
        return Relocation(source: source, destination: destination, replaces: replaces)
    }

    // MARK: Plans

    /// What `moveFolder` (or, with `moving` false, `copyFolder`) would do, checked as they check it,
    /// without changing anything: a caller with rules of its own for new names checks each
    /// destination against the vault as it is, before the move.
    public func folderPlan(from old: String, to new: String, overwrite: Bool, moving: Bool) throws(VaultError) -> [Relocation] {
        try relocations(from: old, to: new, overwrite: overwrite, movesSources: moving)
    }

    /// What moving or copying the folder `old` to the folder `new` does to each entry, checked:
    /// both folders and every new name follow the name rules, and no existing entry is in the way
    /// unless `overwrite`.
    private func relocations(from old: String, to new: String, overwrite: Bool, movesSources: Bool) throws(VaultError) -> [Relocation] {
        // As every way in: new names in NFC; a folder typed in another form finds the one stored in NFC.
        var source = try Self.checkedFolder(old)
        var names = names(under: source)
        if names.isEmpty, case let normalized = Self.folder(EntryName.normalized(old)), !normalized.utf8.elementsEqual(source.utf8) {
            source = normalized
            names = self.names(under: normalized)
        }
        let destination = try Self.checkedFolder(EntryName.normalized(new))
        guard !names.isEmpty else { throw .entryNotFound(Self.folder(old)) }
        guard source != destination else { return [] }
        let leaving: Set<String> = movesSources ? Set(names) : []
        var plan: [Relocation] = []
        plan.reserveCapacity(names.count)
        for name in names {
            let target = EntryName.normalized(destination + String(decoding: name.utf8.dropFirst(source.utf8.count), as: UTF8.self))
            _ = try EntryName.validate(target)
            let replaces = contains(target) && !leaving.contains(target)
            guard !replaces || overwrite else { throw .entryExists(target) }
            plan.append(Relocation(source: name, destination: target, replaces: replaces))
        }
        return plan
    }

    /// The entry `name` as a new copy: its value and fields, created and modified `now`.
    private func copied(_ name: String, now: Int64) throws(VaultError) -> Entry {
        guard let entry = entry(name) else { throw .entryNotFound(name) }
        return Entry(value: entry.value, fields: entry.fields, created: now, modified: now)
    }

    /// `name` as a folder, checked: without its trailing '/', it must be a valid entry name.
    private static func checkedFolder(_ name: String) throws(VaultError) -> String {
        let folder = folder(name)
        _ = try EntryName.validate(String(folder.dropLast()))
        return folder
    }
}
