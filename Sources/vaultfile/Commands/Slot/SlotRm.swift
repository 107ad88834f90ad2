import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel

/// `vaultfile slot rm SLOT…`: remove keyslots and rotate the file key, once.
struct SlotRm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove keyslots (by id, key or label) and rotate the file key once.",
        discussion: """
            A slot is named by its id (see 'vaultfile slot list'), by its key (an age1… or age1pq1… recipient, or one cut as 'slot list' shows it, an ssh \
            public key line in quotes, or a fingerprint as 'slot list' shows it: SHA256:…, x25519:…, mlkem768x25519:…), or by its label: the whole \
            label, or a prefix of exactly one label. A prefix that several labels share is refused naming \
            each of them (exit 2). Several slots named in one command are all resolved against the slots as \
            they are before it and removed in one rotation; ids are positions, so the slots after a removed \
            one move down (the command lists the new ids).

            Everything is re-encrypted under a new file key, wrapped to every remaining slot from its public \
            key; the slot that opened the vault gets a fresh salt. The removed secret cannot open the new \
            file, but copies of the old file (git history, backups, other clones) still open with it: rotate \
            the secrets stored in the vault too if its holder must lose them.

            A slot that cannot be re-wrapped without its own secret (a v1 password slot that did not open \
            the vault, or a slot of a kind this vaultfile does not know) stops the command (exit 2, naming \
            it) unless it is dropped on purpose with --drop-slot ID.
            """)

    @OptionGroup var unlock: UnlockOptions
    @Option(name: .customLong("drop-slot"), help: ArgumentHelp(
        "Also drop this slot if it cannot be re-wrapped (repeatable); its holder loses access.", valueName: "id"))
    var dropSlots: [Int] = []
    @Argument(help: ArgumentHelp("The slots: ids, keys (age1…, age1pq1…, 'ssh-ed25519 AAAA…', SHA256:…, mlkem768x25519:…) or labels (a unique prefix is enough).",
                                 valueName: "slot"))
    var slots: [String]

    func run() throws {
        try Rotation.run(unlock, dropping: dropSlots, removing: slots)
    }
}

// MARK: - Rotations and what they say

/// A rotation of the file key (`slot rm`, `rekey`), under the vault's lock, and its report.
enum Rotation {
    /// Opens the vault with any unlock source, rotates (removing the slots `removing` names, each
    /// resolved before any is removed), writes it, and reports every key the new file key is wrapped to.
    /// With `sign` (`rekey --sign`), the rotated vault is signed from then on (format 1.3, or 1.4
    /// with long slot keys), and every slot that cannot sign is named: its holder reads but no longer writes.
    static func run(_ unlock: UnlockOptions, dropping: [Int], removing: [String], sign: Bool = false) throws {
        // Refuses an older copy as any write does; records the file key this rotation retires.
        // A slot's secret even while an agent holds the file key (`replaceKeys` never asks the
        // agent): a rotation changes who can open the vault. The agent gets the new key after.
        try unlock.replaceKeys({ unlocked -> (vault: UnlockedVault, result: ([SlotDescription], [SlotDescription], String?, Bool)) in
            let indices = try unlocked.slotIndices(named: removing)
            let removed = indices.map { unlocked.slots[$0] }
            let (rotated, wrappedTo) = sign ? try unlocked.rotatedSigning(dropping: Set(dropping), now: currentTimeMilliseconds())
                : try unlocked.rotated(removing: Set(indices), dropping: Set(dropping), now: currentTimeMilliseconds())
            return (rotated, (removed, wrappedTo, mintedNothing(unlocked, rotated), rotated.header.usesLongKeys))
        }, then: { result in
            report(removed: result.0, wrappedTo: result.1, dropping: dropping, path: unlock.location.path)
            if sign {
                let (format, older) = result.3 ? ("1.4", "0.3.0") : ("1.3", "0.2.0")
                Messages.info("\(unlock.location.path) is now signed (format \(format)): every write is signed by the slot that opened it; "
                              + "vaultfile \(older) and older now refuse this vault (upgrade them first)")
                warnReadOnly(result.1)
            }
            if let why = result.2 { warnMintedNothing(why, removal: !result.0.isEmpty) }
        })
    }

    /// Why a rotation of a vault whose slots have public keys gave no slot a key minted here (the
    /// identity that opened it keeps its key, or the slot that opened it was removed); nil when it minted one.
    /// A signed result needs no such warning: a copy the removed member re-keys is signed by her
    /// key, which every machine that sees this seal's tombstone refuses (issue 40).
    private static func mintedNothing(_ opened: UnlockedVault, _ rotated: UnlockedVault) -> String? {
        guard opened.header.usesKeyslots11, !rotated.isSigned, let source = opened.openedSlot?.credential.source else { return nil }
        guard let after = rotated.openedSlotPublicKey else { return "the slot it was opened with (\(source)) was removed" }
        return after == opened.openedSlotPublicKey ? "it was opened with an identity (\(source)), whose slot keeps its public key" : nil
    }

    /// Names every slot of a vault just signed that cannot sign seals (post-quantum, plugin): its
    /// holder can still read, but every write through it is refused from now on.
    private static func warnReadOnly(_ slots: [SlotDescription]) {
        for slot in slots where SealScheme.direct(forSlotType: slot.type) == nil {
            Messages.warning("keyslot \(slot.index) (\(describe(slot))) cannot sign seals: its holder can still read this vault but can no "
                             + "longer write it; if they must write, give them a slot that signs ('vaultfile slot add password' or "
                             + "'slot add keyfile')")
        }
    }

    /// Says plainly what a rotation that minted no key does not do (docs/SECURITY.md, "A removed member's planted copy").
    private static func warnMintedNothing(_ why: String, removal: Bool) {
        let who = removal ? "the removed member" : "whoever lost access"
        Messages.warning("this rotation gave no slot a new key, since \(why): on this machine it protects nothing against a copy that "
                         + "\(who) re-keys from an older one and hands back with your slots kept (theirs gone); rotate again opened with a "
                         + "password, keyfile or recovery code of yours ('vaultfile rekey --keyfile FILE', '--recovery', or the password), "
                         + "or change the password ('vaultfile passwd')")
    }

    /// What a rotation says: the slots removed, those dropped, every key the new file key is wrapped to, and what copies still open with.
    private static func report(removed: [SlotDescription], wrappedTo: [SlotDescription], dropping: [Int], path: String) {
        for slot in removed.sorted(by: { $0.index < $1.index }) {
            // Named by its key too: an id is a position, and the ids after it move down.
            let key = slot.fingerprint.map { ", \($0)" } ?? ""
            Messages.info("removed keyslot \(slot.index) (\(describe(slot))\(key)) from \(path)")
        }
        if dropping.isEmpty, let moves = moves(removed: removed.map(\.index), kept: wrappedTo.count) {
            let what = removed.count == 1 ? "it moved down one id" : "them moved down"
            Messages.info("the keyslots after \(what) (\(moves)); 'vaultfile slot list' shows them")
        } else if let first = removed.map(\.index).min(), wrappedTo.contains(where: { $0.index >= first }) {
            Messages.info("the keyslots after them moved down (ids are positions); their new ids are below")
        }
        for id in dropping.sorted() { Messages.info("dropped keyslot \(id) on purpose") }
        Messages.info("the file key was rotated; the new key is wrapped to \(wrappedTo.count) keyslot\(wrappedTo.count == 1 ? "" : "s"):")
        for slot in wrappedTo {
            Messages.info("  \(slot.index)  \(describe(slot))  \(slot.fingerprint ?? slot.kdf.map { "\($0)" } ?? "-")")
        }
        // A vault made before repeated keys were refused may hold one key in two slots.
        for gone in removed where gone.kind == "recipient" || gone.kind == "ssh-ed25519" || gone.kind == "ssh-rsa" {
            guard let key = gone.fingerprint else { continue }
            for twin in wrappedTo where twin.kind == gone.kind && twin.fingerprint == key {
                Messages.warning("keyslot \(twin.index) (\(describe(twin))) holds the same key as the removed slot, so \(key) still opens "
                                 + "\(path); remove it too: 'vaultfile slot rm \(twin.index)'")
            }
        }
        if !removed.isEmpty || !dropping.isEmpty {
            Messages.warning("copies of the old file (git history, backups, other clones) still open with the removed secret; "
                             + "change the secrets stored in the vault if its holder must lose them")
        }
    }

    /// Every id that moved when the slots `removed` (old ids) went and `kept` slots stayed, in
    /// runs: "2 is now 1", "2–4 are now 1–3", "3 is now 2, 5–6 are now 3–4"; nil when none moved.
    static func moves(removed: [Int], kept: Int) -> String? {
        let gone = Set(removed)
        let olds = (0..<(kept + gone.count)).filter { !gone.contains($0) }
        var runs: [(old: Int, new: Int, count: Int)] = []
        for (new, old) in olds.enumerated() where old != new {
            if let last = runs.last, last.old + last.count == old, last.new + last.count == new {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((old, new, 1))
            }
        }
        guard !runs.isEmpty else { return nil }
        return runs.map { run in
            run.count == 1 ? "\(run.old) is now \(run.new)"
                : "\(run.old)–\(run.old + run.count - 1) are now \(run.new)–\(run.new + run.count - 1)"
        }.joined(separator: ", ")
    }

    /// `kind, label`.
    static func describe(_ slot: SlotDescription) -> String {
        slot.label.isEmpty ? slot.kind : "\(slot.kind), \(slot.label)"
    }
}
