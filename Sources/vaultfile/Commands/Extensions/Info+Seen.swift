import VaultFile
import VaultFormat
import VaultModel

// MARK: - What this machine has seen of the vault

extension VaultfileCommand.Info {
    /// The generation recorded on this machine for the vault of `header`, beside the file's own:
    /// one line of text and the JSON fields (appended after the others, so scripts keep their keys).
    static func seen(_ header: VaultHeader, path: String) throws -> (lines: [String], json: [(String, JSON)]) {
        let label = "seen here:   "
        func off(_ because: String) -> ([String], [(String, JSON)]) {
            ([label + "not checked: \(because)"], [
                ("rollback_check", .string("off")), ("rollback_check_off_because", .string(because)),
                ("seen_generation", .null), ("seen_at", .null), ("seen_path", .null), ("copy", .null), ("lineage", .null), ("lineage_since", .null),
            ])
        }
        let records: SeenGenerations
        switch try RollbackSetting.forVault(at: path) {
        case .offInGit(let root): return off("git manages this file (work tree \(root))")
        case .offByEnvironment: return off("VAULTFILE_ROLLBACK_CHECK=off")
        case .noStateFolder: return off("no state folder is known (set VAULTFILE_STATE_DIR)")
        case .unsafeStateFolder(let unsafe): return off("\(unsafe) (\(unsafe.fix))")
        case .on(let seen): records = seen
        }
        let record: SeenGenerations.Record?
        do {
            record = try records.record(for: header.vaultID)
        } catch {
            return off("\(error)")
        }
        let comparison = SeenGenerations.compare(header, with: record)
        let text: String, copy: String
        switch comparison {
        case .unseen:
            (text, copy) = ("nothing yet (recorded at the first unlock)", "unseen")
        case .same(let record):
            (text, copy) = ("generation \(record.generation), this copy, since \(record.seenText)", "same")
        case .newer(let record):
            (text, copy) = ("generation \(record.generation) on \(record.seenText); this copy's generation is higher (anyone who writes a "
                + "copy chooses its generation: see 'lineage')", "newer")
        case .older(let record):
            (text, copy) = ("generation \(record.generation) on \(record.seenText) at \(record.path): this is an OLDER COPY; "
                + "writes to it are refused (exit 7) unless --allow-rollback", "older")
        case .diverged(let record):
            (text, copy) = ("generation \(record.generation) on \(record.seenText) at \(record.path), with other contents: the copies "
                + "have DIVERGED; writes to it are refused (exit 7): combine them with 'vaultfile merge --both'", "diverged")
        case .implausible(let record):
            let seen = record.map { "generation \($0.generation) on \($0.seenText) at \($0.path)" } ?? "nothing yet"
            (text, copy) = ("\(seen); this copy's generation is IMPLAUSIBLE (\(Generations.implausibility(of: header.generation, seen: record))): "
                + "it is not recorded, and writes to it are refused (exit 7) unless --allow-rollback", "implausible")
        }
        // The key lineage needs the file key and the keyslots' metadata: judged only when the vault is opened.
        let since = try? RetiredKeys(state: records.state).lineageSince(vault: header.vaultID)
        let lineage = since.flatMap { $0 }.map { "a rotation ran here (keys of this machine's lineage since \(utcText(seconds: $0))): "
            + "whether this copy descends from it is judged when it is opened with a secret, not from the header; a copy that does not "
            + "is refused then (exit 7 on a write)" } ?? "no rotation ran here: no copy is refused as of another lineage"
        return ([label + text, "lineage:     " + lineage], [
            ("rollback_check", .string("on")), ("rollback_check_off_because", .null),
            ("seen_generation", record.map { .uint($0.generation) } ?? .null),
            ("seen_at", record.map { .string(UTCTime.rfc3339(seconds: $0.seen)) } ?? .null),
            ("seen_path", record.map { .string($0.path) } ?? .null),
            ("copy", .string(copy)),
            ("lineage", .string(since.flatMap { $0 } == nil ? "no_rotation_here" : "judged_when_opened")),
            ("lineage_since", since.flatMap { $0 }.map { .string(UTCTime.rfc3339(seconds: $0)) } ?? .null),
        ])
    }
}
