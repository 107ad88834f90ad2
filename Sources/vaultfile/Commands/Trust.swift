import ArgumentParser
import VaultFile
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// `vaultfile trust`: shows who signed a copy and its slots against the members pinned here,
    /// and pins it once confirmed, as ssh does for a changed host key.
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust",
            abstract: "Show who signed the vault and its keyslots against the members pinned here, and pin them once confirmed.",
            discussion: """
                Prints the vault id, the seal's signer, and each keyslot (id, kind, label, fingerprint) marked pinned, \
                new or changed (with the fingerprint pinned before), then why this machine does not trust the copy, if \
                it does not. Compare the fingerprints with a member's 'vaultfile slot list' over a channel you trust. \
                On a terminal it asks before pinning; --yes pins without asking. Pinning makes this copy's keyslots the \
                members of the vault on this machine (the key lineage takes it too, as --accept-rotation would): writes to \
                it are then let through. A copy that holds a key removed from the vault, or is signed by one, is pinned only \
                with --readmit too, unless a pinned member readmitted the key after its removal. Exit 0 when pinned (or already \
                trusted), 1 when declined or when there is no terminal to ask.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Flag(name: .customLong("yes"), help: "Pin without asking.") var yes = false
        @Flag(name: .customLong("readmit"), help: "Pin a copy that holds or is signed by a key removed from the vault (a readmission a member confirmed).")
        var readmit = false

        func run() throws {
            guard let rollback = try unlock.rollbackCheck(writing: true) else {
                throw CLIError.invalidArgument("no state folder can be used on this machine (set VAULTFILE_STATE_DIR): nothing can be pinned")
            }
            // The judgement's own warning would repeat what this command shows.
            rollback.allowUntrusted = true
            let unlocked = try unlock.location.store.read(with: try unlock.unlocker(), rollback: rollback)
            let path = unlock.location.path
            guard let evidence = unlocked.sealEvidence else {
                if case .unsignedAfterSigned? = rollback.lastJudgement?.findings.first {
                    Messages.warning("\(path) is unsigned, and this machine has seen the vault signed: an unsigned copy cannot be pinned; "
                        + "use a signed copy of the members, or --allow-untrusted for one command")
                    throw ExitCode(.notFound)
                }
                Messages.info("\(path) is unsigned: there are no members to pin (sign it with 'vaultfile rekey --sign')")
                return
            }
            let before = try? rollback.memberTrust.record(of: unlocked.header.vaultID)
            let judgement = rollback.lastJudgement
            try StandardOutput.line(Self.describe(evidence, slots: unlocked.slots, pinned: before ?? nil, judgement: judgement))
            if let judgement, judgement.isTrusted, before != nil {
                Messages.info("\(path) is trusted on this machine: nothing to pin")
                return
            }
            let removed = Self.needingReadmit(evidence, record: before ?? nil)
            guard removed.isEmpty || readmit else {
                Messages.warning("\(path) holds or is signed by a key removed from the vault (\(removed.joined(separator: ", "))): "
                    + "not pinned; pin it only if a member confirms the readmission, with --readmit too")
                throw ExitCode(.notFound)
            }
            guard yes || Self.ask("Pin these keyslots as the members of this vault on this machine? [y/N] ") else {
                Messages.info("not pinned: writes to \(path) stay refused (exit 7)")
                throw ExitCode(.notFound)
            }
            do {
                try rollback.pin(unlocked, path: path)
            } catch {
                throw CLIError.invalidArgument("\(error)")
            }
            Messages.info("pinned \(evidence.slots.count) keyslot\(evidence.slots.count == 1 ? "" : "s") of \(path) as the vault's members on this machine")
            // What the copy says of itself (its own removals) no pin can change: say so.
            let copy = MemberTrust.Copy(evidence: evidence, vaultID: unlocked.header.vaultID, generation: unlocked.header.generation)
            if let record = (try? rollback.memberTrust.record(of: unlocked.header.vaultID)) ?? nil {
                let after = MemberTrust.judge(copy, record: record, otherVaultAtPath: nil, comparesGenerations: rollback.comparesGenerations)
                if !after.isTrusted {
                    Messages.warning("\(path) is still not trusted: " + TrustFinding.joined(after.findings) + "; the copy itself records it, "
                        + "so writes to it stay refused (exit 7): use a copy the members wrote")
                }
            }
        }

        /// The vault id, the signer, each slot against `pinned`, and why the copy is not trusted.
        static func describe(_ evidence: SealEvidence, slots: [SlotDescription], pinned: MemberTrust.Record?,
                             judgement: MemberTrust.Judgement?) -> String {
            var lines = ["vault id: " + MemberTrust.hex(evidence.vaultID), "generation: \(evidence.generation)",
                         "signed by: \(evidence.signer.fingerprint) (keyslot \(evidence.signerPosition)\(evidence.replacedKey == nil ? "" : ", its key before this seal changed it"))"]
            let pinnedKeys = Swift.Set((pinned?.pinned ?? []).map(\.key.id))
            let removals = removals(evidence, record: pinned)
            var rows: [[String]] = []
            for slot in evidence.slots {
                let key = MemberKey(type: slot.type, bytes: slot.key)
                let kind = slots.first { $0.index == slot.position }?.kind ?? "type \(slot.type)"
                var state: String
                if slot.key.isEmpty {
                    state = "cannot sign"
                } else if let removal = removals[key.id] {
                    state = removedState(removal, evidence: evidence, record: pinned)
                } else if pinned == nil {
                    state = "new"
                } else if pinnedKeys.contains(key.id) {
                    state = "pinned"
                } else if let old = pinned?.pinned.first(where: { member in
                    (member.position == slot.position || !slot.label.isEmpty && member.label == slot.label)
                        && !evidence.slots.contains { $0.key == member.key.bytes }
                }) {
                    state = "changed (was \(old.key.fingerprint))"
                } else {
                    state = "new"
                }
                if judgement?.traced.contains(slot.position) == true { state += ", added by a pinned member" }
                rows.append([String(slot.position), kind, slot.label.isEmpty ? "-" : slot.label, slot.key.isEmpty ? "-" : key.fingerprint, state])
            }
            lines.append(SlotList.table(header: ["ID", "KIND", "LABEL", "FINGERPRINT", "HERE"], rows: rows))
            if let judgement, !judgement.isTrusted {
                lines.append("not trusted: " + TrustFinding.joined(judgement.findings))
            } else if pinned == nil {
                lines.append("this vault id was never pinned on this machine")
            }
            return lines.joined(separator: "\n")
        }

        /// Asks `prompt` on the terminal; true for an answer starting with y. False without a terminal.
        private static func ask(_ prompt: String) -> Bool {
            let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else {
                Messages.warning("no terminal to ask whether to pin: run 'vaultfile trust' again with --yes once the fingerprints are checked")
                return false
            }
            defer { close(fd) }
            _ = Stream.write(Array(prompt.utf8), to: fd)
            var answer: [UInt8] = []
            var byte: UInt8 = 0
            while answer.count < 64 {
                let count = read(fd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 || byte == 0x0A { break }
                answer.append(byte)
            }
            return answer.first == UInt8(ascii: "y") || answer.first == UInt8(ascii: "Y")
        }
    }
}
