import VaultFile
import VaultFormat
@testable import vaultfile

// MARK: - The plain reference of textconv's entries

// Test-only: `ReadAllDifferentialTests` ties `Textconv.listEntries` (Commands/Git/Textconv.swift),
// which reads each entry's bytes where they lie, to this.

extension VaultfileCommand.Git.Textconv {
    /// `listEntries` through `sortedEntries` (every entry decoded): the plain reference it is tested against.
    static func listEntriesThroughEntries(of unlocked: UnlockedVault, showSecrets: Bool, into out: BufferedOutput) {
        func show(_ bytes: [UInt8], of name: String, field: String?) {
            if showSecrets { return out.appendJSONString(String(decoding: bytes, as: UTF8.self)) }
            out.append("fingerprint:")
            out.append(String(hex(unlocked.fingerprint(entry: name, field: field, value: bytes)).prefix(16)))
        }
        for (name, entry) in unlocked.vault.sortedEntries {
            out.append(name)
            out.append("  (modified ")
            out.appendTimestamp(milliseconds: entry.modified)
            out.append(")\n    value  ")
            show(entry.value, of: name, field: nil)
            out.append(UInt8(ascii: "\n"))
            for field in entry.fields.keys.sorted() {
                out.append("    \(field)  ")
                show(entry.fields[field]!, of: name, field: field)
                out.append(UInt8(ascii: "\n"))
            }
        }
    }
}
