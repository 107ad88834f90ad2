@testable import VaultInterchange
@testable import VaultModel

// MARK: - What a build of foreign items gives, as text

/// The helpers the builder's comparisons share (`ForeignRecordsTests`, `ForeignStreamTests`).
enum ForeignBuildText {
    /// Everything an import gives a user, as text: entries, renamings, warnings, history, the mark
    /// of a foreign import and the vault once put; the error; or "nil" when the build gave nothing.
    static func described(_ build: () throws(VaultError) -> ImportedEntries?) -> String {
        do {
            guard let imported = try build() else { return "nil" }
            var vault = Vault(history: HistoryPolicy(versions: 5, byteBudget: 1 << 20, trashLimit: 2))
            try vault.put(contentsOf: imported, now: 9)
            let entries = imported.entries.map { "\(Array($0.name.utf8))=\($0.entry.value)|\($0.entry.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })|\($0.entry.created),\($0.entry.modified)" }
            return "\(entries)|\(imported.renamings.map { "\($0.original)>\($0.name):\($0.reasons.map(\.name))" })|\(imported.warnings.map(\.description))"
                + "|\((imported.history ?? []).map { "\($0.name):\($0.versions.count)" })|\(imported.fromForeign)|\(try vault.encodedContent())"
        } catch {
            return "error: \(error.description)"
        }
    }

    /// An export's entries three ways, each `described`: built as read (`Interchange.streamedEntries`;
    /// "nil" when the stream declines), from every item read first (`ForeignBuilder.build(asEntries:)`,
    /// the reference), and through the import's own entry point (`Interchange.read`).
    static func builds(of bytes: [UInt8], format: InterchangeFormat, options: ForeignBuildOptions) -> (streamed: String, reference: String, read: String) {
        let streamed = described { () throws(VaultError) in try Interchange.streamedEntries(bytes, format: format, now: 7, options: options) }
        let reference = described { () throws(VaultError) in
            guard var foreign = try Interchange.foreignItems(bytes, format: format, now: 7) else { return nil }
            defer { foreign.wipe() }
            return try ForeignBuilder.build(asEntries: foreign, now: 7, options: options)
        }
        let read = described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 7, options: options) }
        return (streamed, reference, read)
    }

    /// `ForeignBuilder.build(streamingGroups:)` of `items`, handed over one by one.
    static func grouped(_ items: [ForeignItem], prefix: [String] = []) throws(VaultError) -> ForeignBuilder.GroupedBuild {
        try ForeignBuilder.build(streamingGroups: { sink throws(VaultError) in
            var source = ForeignImport(format: "test")
            for var item in items { source.add(&item, to: sink) }
            return source
        }, capacity: 16, now: 5, options: ForeignBuildOptions(prefix: prefix))
    }

    /// The plan of `items` outside folders (`ForeignNaming.Plan`: one read, then `decide`); nil
    /// when a row was not kept or the plan could not decide.
    static func decidedPlan(_ items: [ForeignItem]) -> ForeignNaming.Plan? {
        var plan = ForeignNaming.Plan()
        for item in items {
            let base = ForeignNaming.base(of: item, prefix: [])
            guard plan.note(item, base: base.named.name, exact: base.exact) else { return nil }
        }
        return plan.decide() ? plan : nil
    }

    /// What `plan` gives the item at `index` (its number, and why it is numbered).
    static func planned(_ plan: ForeignNaming.Plan, _ item: ForeignItem, at index: Int) -> (number: UInt32, reason: ImportRenaming.Reason)? {
        let base = ForeignNaming.base(of: item, prefix: [])
        return plan.number(of: item, at: index, base: base.named.name, exact: base.exact)
    }

    /// An item with a title, folders, a username, one URL and a value.
    static func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        var item = ForeignItem(folders: folders, title: title, value: Array(value.utf8))
        item.username = user
        item.urls = url.map { [$0] } ?? []
        return item
    }

    /// An item with something in every part the builder fills: notes, TOTP, custom fields (one
    /// protected, one called `username`), an extra, a creation time and a history version;
    /// `attachments` too when asked.
    static func fullItem(attachments: Bool = false) -> ForeignItem {
        var full = item("Mail", folders: ["Work"], user: "alice", url: "https://mail.example.com")
        full.notes = "n"
        full.totp = "JBSWY3DPEHPK3PXP"
        full.fields = [ForeignField(label: "PIN", value: [1, 2], protected: true), ForeignField(label: "username", value: Array("x".utf8))]
        full.extras = [(label: "tags", value: "a, b")]
        if attachments { full.attachments = [ForeignAttachment(name: "a b.bin", bytes: [0, 0xFF]), ForeignAttachment(name: "e", bytes: [])] }
        full.created = 1_000
        full.history = [ForeignVersion(value: Array("old".utf8), username: "alice", modified: 500)]
        return full
    }
}
