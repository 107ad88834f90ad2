import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand.Git {
    /// Prints a stable, readable listing of a vault for `git diff`: names, fields, times, keyed fingerprints.
    struct Textconv: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "textconv",
            abstract: "Print a stable listing of a vault for git diff: names, fields, times and keyed fingerprints.",
            discussion: """
                A fingerprint changes when the value changes but reveals nothing about it: it is an HMAC under \
                a subkey of the vault's file key over the entry name, the field and the value, never an unkeyed \
                hash of a guessable secret, so equal values of two entries or fields do not show as equal. The \
                same value in the same place keeps its fingerprint, so a return to an earlier value shows. \
                A diff still shows the entry and field names, the modified times, the number of entries, and \
                which values changed. --show-secrets prints the values instead. A vault of format 1.1 also \
                lists its keyslots (kind, label, recipient), so a diff shows who was given or lost access.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The vault file git hands over.") var file: String
        @Flag(name: .customLong("show-secrets"), help: "Print values instead of fingerprints.") var showSecrets = false

        func run() throws {
            let store = VaultStore(path: file)
            // git shows old versions too (`git log -p`): the agent keeps every key of the vault id.
            let unlocked = try unlock.openWithAgent(store) ?? store.open(credentials: try unlock.credentials(), limits: try unlock.limits())
            // Line by line through one buffer (wiped: --show-secrets prints values), not one joined text.
            let out = BufferedOutput()
            out.append("# vaultfile vault \(hex(unlocked.header.vaultID)), \(unlocked.vault.count) entries\n")
            // Format 1.1: who can open it, so that a diff shows slots added and removed (no secret in it).
            if unlocked.header.usesKeyslots11 {
                for slot in unlocked.slots {
                    out.append("# keyslot \(slot.index): \(Rotation.describe(slot))\(slot.recipient.map { " \($0)" } ?? "")\n")
                }
            }
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
            try out.finish()
        }
    }
}
