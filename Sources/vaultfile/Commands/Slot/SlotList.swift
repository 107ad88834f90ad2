import ArgumentParser
import KDF
import VaultFile
import VaultFormat
import VaultModel

/// `vaultfile slot list`: every keyslot, after unlocking.
struct SlotList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the keyslots: id, kind, label, recipient or KDF, fingerprint, and when each was added.",
        discussion: """
            Needs a secret that opens the vault: who can open it is kept encrypted. The id is the slot's \
            position; 'slot rm' takes an id, a key, a fingerprint or a label. A post-quantum recipient is \
            shown cut to its last 8 characters (--json gives it whole); its FINGERPRINT, mlkem768x25519:…, \
            names it. A vault of format 1.0 has no labels or times. \
            SIGNS says whether the slot can sign seals (a v1 password slot and unknown kinds cannot: their \
            holders write through another slot); HERE, for a signed vault, whether its key is a member \
            pinned on this machine ('vaultfile trust'). \
            --accept-classical takes a vault that was post-quantum when last opened here and no longer is (a \
            member added a classical slot with 'slot add --allow-classical', or another vault is at its path) \
            as it is: the warning every command on it gives until then stops.
            """)

    @OptionGroup var unlock: UnlockOptions
    @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false
    @Flag(name: .customLong("accept-classical"), help: "Accept on this machine that the vault is no longer post-quantum (its warning stops).")
    var acceptClassical = false

    func run() throws {
        listingSlots.withLock { $0 = true }
        if acceptClassical { classicalAcceptance.withLock { $0.asker = .listing } }
        let unlocked = try unlock.open()
        if acceptClassical, !classicalAcceptance.withLock({ $0.accepted }) {
            let status = PostQuantumStatus(unlocked.header.keyslots).words.map { "is \($0)" }
                ?? "was not seen post-quantum here before it lost it, or its loss was accepted already"
            Messages.info("nothing to accept: \(unlock.location.path) \(status)")
        }
        let slots = unlocked.slots
        let here = Self.pinnedHere(unlocked)
        if json {
            try StandardOutput.line(JSON.array(slots.map { slot in
                var pairs: [(String, JSON)] = [("id", .int(Int64(slot.index))), ("kind", .string(slot.kind)), ("type", .int(Int64(slot.type))),
                                               ("label", .string(slot.label))]
                if let kdf = slot.kdf { pairs.append(("kdf", .string(kdf.description))) }
                if let recipient = slot.recipient { pairs.append(("recipient", .string(recipient))) }
                if let fingerprint = slot.fingerprint { pairs.append(("fingerprint", .string(fingerprint))) }
                pairs.append(("added", slot.added.map { .string(timestamp(milliseconds: $0)) } ?? .null))
                pairs.append(("opened_this_session", .bool(slot.index == unlocked.openedSlot?.index)))
                pairs.append(("can_sign", .bool(SealScheme.direct(forSlotType: slot.type) != nil && slot.kind != "password (v1)")))
                pairs.append(("pinned_here", here.map { .bool($0.contains(slot.index)) } ?? .null))
                return .object(pairs)
            }).text)
            return
        }
        let rows = slots.map { slot -> [String] in
            let detail = Self.shortRecipient(slot) ?? slot.kdf?.description ?? slot.fingerprint ?? "-"
            let mark = slot.index == unlocked.openedSlot?.index ? " *" : ""
            // A recipient is its own fingerprint (but for a post-quantum one: 1,959 characters); a
            // secret-derived slot's key is told apart by its x25519: one only.
            let fingerprint = slot.recipient == nil || slot.type == HybridSlot.type ? slot.fingerprint ?? "-" : "-"
            let signs = SealScheme.direct(forSlotType: slot.type) != nil && slot.kind != "password (v1)" ? "yes" : "no"
            let pinned = here.map { $0.contains(slot.index) ? "pinned" : "not pinned" } ?? "-"
            return [String(slot.index) + mark, slot.kind, slot.label.isEmpty ? "-" : slot.label, detail, fingerprint,
                    slot.added.map { timestamp(milliseconds: $0) } ?? "-", signs, pinned]
        }
        try StandardOutput.line(Self.table(header: ["ID", "KIND", "LABEL", "RECIPIENT OR KDF", "FINGERPRINT", "ADDED", "SIGNS", "HERE"], rows: rows))
    }

    /// The ids of the slots whose keys are members pinned on this machine (`vaultfile trust`), nil for
    /// an unsigned vault or without a readable record.
    static func pinnedHere(_ unlocked: UnlockedVault) -> Swift.Set<Int>? {
        guard unlocked.isSigned, let state = try? StateFolder.usable(writing: false),
              let record = (try? MemberTrust(state: state).record(of: unlocked.header.vaultID)) ?? nil else { return nil }
        let pinned = Swift.Set(record.pinned.map(\.key.id))
        return Swift.Set((unlocked.slotMetadata ?? []).enumerated().compactMap { index, entry in
            !entry.publicKey.isEmpty && pinned.contains(MemberKey.id(of: entry.publicKey)) ? index : nil
        })
    }

    /// The recipient as the table shows it: whole, but a post-quantum one cut to `age1pq1…` and its
    /// last 8 characters (its 1,959 would fill a screen; `--json` gives it whole, and its
    /// `mlkem768x25519:` fingerprint names it for `slot rm` and `slot label`).
    static func shortRecipient(_ slot: SlotDescription) -> String? {
        guard let recipient = slot.recipient, slot.type == HybridSlot.type else { return slot.recipient }
        return AgePQRecipient.shortened(recipient)
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
