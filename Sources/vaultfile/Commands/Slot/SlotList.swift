import ArgumentParser
import KDF
import VaultModel

/// `vaultfile slot list`: every keyslot, after unlocking.
struct SlotList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the keyslots: id, kind, label, recipient or KDF, fingerprint, and when each was added.",
        discussion: """
            Needs a secret that opens the vault: who can open it is kept encrypted. The id is the slot's \
            position; 'slot rm' takes an id or a label. A vault of format 1.0 has no labels or times.
            """)

    @OptionGroup var unlock: UnlockOptions
    @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

    func run() throws {
        listingSlots.withLock { $0 = true }
        let unlocked = try unlock.open()
        let slots = unlocked.slots
        if json {
            try StandardOutput.line(JSON.array(slots.map { slot in
                var pairs: [(String, JSON)] = [("id", .int(Int64(slot.index))), ("kind", .string(slot.kind)), ("type", .int(Int64(slot.type))),
                                               ("label", .string(slot.label))]
                if let kdf = slot.kdf { pairs.append(("kdf", .string(kdf.description))) }
                if let recipient = slot.recipient { pairs.append(("recipient", .string(recipient))) }
                if let fingerprint = slot.fingerprint { pairs.append(("fingerprint", .string(fingerprint))) }
                pairs.append(("added", slot.added.map { .string(timestamp(milliseconds: $0)) } ?? .null))
                pairs.append(("opened_this_session", .bool(slot.index == unlocked.openedSlot?.index)))
                return .object(pairs)
            }).text)
            return
        }
        let rows = slots.map { slot -> [String] in
            let detail = slot.recipient ?? slot.kdf?.description ?? slot.fingerprint ?? "-"
            let mark = slot.index == unlocked.openedSlot?.index ? " *" : ""
            // A recipient is its own fingerprint; a secret-derived slot's key is told apart by its x25519: one only.
            let fingerprint = slot.recipient == nil ? slot.fingerprint ?? "-" : "-"
            return [String(slot.index) + mark, slot.kind, slot.label.isEmpty ? "-" : slot.label, detail, fingerprint,
                    slot.added.map { timestamp(milliseconds: $0) } ?? "-"]
        }
        try StandardOutput.line(Self.table(header: ["ID", "KIND", "LABEL", "RECIPIENT OR KDF", "FINGERPRINT", "ADDED"], rows: rows))
    }

    /// Columns padded to their widest cell, two spaces apart.
    static func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
