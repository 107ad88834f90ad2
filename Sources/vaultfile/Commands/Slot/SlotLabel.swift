import ArgumentParser
import VaultFormat
import VaultModel

/// `vaultfile slot label SLOT TEXT`: rename a keyslot.
struct SlotLabel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label",
        abstract: "Give a keyslot a new label (an empty TEXT removes it); the file key stays.",
        discussion: """
            The slot is named as 'slot rm' names it: id, key or label (a unique prefix is enough). A label \
            only tells people apart: it opens nothing, so no rotation is needed, and copies of the old \
            file keep the old label. In a signed vault the slot that opened it attests the slot again \
            under its new label, so the seal and every member's trust of the slot stay valid; opening it \
            with a slot's own secret is therefore needed: it never asks the agent, and with no other source \
            it fails with "no password source" (exit 2), as slot add does. \
            A vault of format 1.0 has no labels (exit 2).
            """)

    @OptionGroup var unlock: UnlockOptions
    @Argument(help: ArgumentHelp("The slot: id, key (age1…, age1pq1…, 'ssh-ed25519 AAAA…', SHA256:…, mlkem768x25519:…) or label.", valueName: "slot")) var slot: String
    @Argument(help: ArgumentHelp("The new label (at most 64 bytes of UTF-8, no control characters; encrypted in the vault).",
                                 valueName: "text"))
    var text: String

    func validate() throws {
        if !SlotMetadata.isValidLabel(text) {
            throw ValidationError("a label takes at most \(SlotMetadata.maxLabelLength) bytes of UTF-8 without control characters")
        }
    }

    func run() throws {
        let path = unlock.location.path
        // A slot's secret even while an agent holds the file key: a signed vault's new attestation
        // is made by the slot that opened it.
        let (index, old, changed) = try unlock.update(askingAgent: false) { unlocked -> (Int, String, Bool) in
            let index = try unlocked.slotIndex(named: slot)
            let (old, changed) = try unlocked.relabelSlot(index, label: text)
            return (index, old, changed)
        }
        guard changed else {
            Messages.info("keyslot \(index) of \(path) is labelled '\(text)' already; nothing was written")
            return
        }
        let was = old.isEmpty ? "no label" : "'\(old)'"
        let now = text.isEmpty ? "no label" : "'\(text)'"
        Messages.info("keyslot \(index) of \(path) now has \(now) (it had \(was)); the file key was kept")
    }
}
