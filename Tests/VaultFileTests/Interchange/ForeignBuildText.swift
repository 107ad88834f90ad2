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

    /// An item with a title, folders, a username, one URL and a value.
    static func item(_ title: String, folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        var item = ForeignItem(folders: folders, title: title, value: Array(value.utf8))
        item.username = user
        item.urls = url.map { [$0] } ?? []
        return item
    }
}
