import VaultFile
import VaultFormat
import VaultModel

// MARK: - Who signs the vault, and the members pinned here

extension VaultfileCommand.Info {
    /// Whether the vault of `header` is signed, and what this machine pinned of its members: one line
    /// of text and the JSON fields (appended after the others, so scripts keep their keys). Who signed
    /// a copy is in its encrypted signature block: judged when it is opened with a secret, never here.
    static func members(_ header: VaultHeader) -> (lines: [String], json: [(String, JSON)]) {
        let label = "signed:      "
        var record: MemberTrust.Record?
        var problem: String?
        if let state = try? StateFolder.usable(writing: false) {
            do {
                record = try MemberTrust(state: state).record(of: header.vaultID)
            } catch {
                problem = "\(error)"
            }
        }
        let pinned = record.map { "\($0.pinned.count) member key\($0.pinned.count == 1 ? "" : "s") pinned here" + ($0.removed.isEmpty ? "" : ", \($0.removed.count) removal\($0.removed.count == 1 ? "" : "s") learned") }
        let text: String
        if header.isSigned {
            text = "yes (signed seals, format 1.3 and later; this copy is \(VaultHeader.majorVersion).\(header.minorVersion)): who signed this copy is judged when it is opened with a secret (exit 7 on a write when no "
                + "member pinned here signed it); " + (problem ?? pinned ?? "no member pinned here yet (the first open pins them)")
        } else if let firstSigned = record?.firstSigned {
            text = "NO, but this machine has seen the vault signed since generation \(firstSigned): a write to this copy is refused (exit 7)"
        } else {
            text = "no: anyone who knows a keyslot's public key can write a copy its members open ('vaultfile rekey --sign' signs it)"
        }
        return ([label + text], [
            ("signed", .bool(header.isSigned)),
            ("members_pinned", record.map { .int(Int64($0.pinned.count)) } ?? .null),
            ("first_signed_generation", record?.firstSigned.map { .uint($0) } ?? .null),
        ])
    }
}
