import ArgumentParser
import KDF
import SecureMemory
import VaultFile
import VaultFormat

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

                It finds the default identities ($XDG_CONFIG_HOME/vaultfile/identity.txt) as every verb \
                does, so git's configuration needs no --identity. With no source at all (no option, no \
                variable, no default identity that opens the vault, and no terminal to ask on, as when git \
                runs a diff in a pager or a GUI), it prints what the header tells without a password \
                (generation, size, keyslots and their KDF) and one line saying how to see the entries, and \
                exits 0, so that 'git diff' and 'git log -p' still work. A wrong password is still an error.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The vault file git hands over.") var file: String
        @Flag(name: .customLong("show-secrets"), help: "Print values instead of fingerprints.") var showSecrets = false

        func run() throws {
            PluginLauncher.forbid("git textconv")
            // git shows old versions too (`git log -p`): the agent keeps every key of the vault id.
            // No rollback check (git's history is full of older copies), no KDF progress, no warning.
            let unlocked: UnlockedVault
            do {
                unlocked = try VaultStore(path: file).read(with: try unlock.unlocker(announcing: false, agentPath: file))
            } catch let error as CLIError where Self.meansNoSource(error, source: unlock.source) {
                // Only the unlock sources throw a CLIError here: the agent's lookup warns instead.
                try StandardOutput.line(try Self.headerOnlyListing(of: file).joined(separator: "\n"))
                return
            }
            // Line by line through one buffer (wiped: --show-secrets prints values), not one joined text.
            let out = BufferedOutput()
            out.append("# vaultfile vault \(hex(unlocked.header.vaultID)), \(unlocked.vault.count) entries\n")
            // Format 1.1: who can open it, so that a diff shows slots added and removed (no secret in it).
            if unlocked.header.usesKeyslots11 {
                for slot in unlocked.slots {
                    out.append("# keyslot \(slot.index): \(Rotation.describe(slot))\(slot.recipient.map { " \($0)" } ?? "")\n")
                }
            }
            Self.listEntries(of: unlocked, showSecrets: showSecrets, into: out)
            try out.finish()
        }
    }
}

// MARK: - The entries

extension VaultfileCommand.Git.Textconv {
    /// Appends one line per entry (name and modified time) and one per value and field (its
    /// fingerprint, or with `showSecrets` the value as a JSON string), in name order.
    ///
    /// From each entry's bytes where they lie (`Vault.forEachEntryBytes`), each fingerprint hashed
    /// over them in place: decoding every entry first (`listEntriesThroughEntries`, the plain
    /// reference) made textconv 7–8× a `verify` at 100,000 entries.
    static func listEntries(of unlocked: UnlockedVault, showSecrets: Bool, into out: BufferedOutput) {
        func show(_ bytes: UnsafeRawBufferPointer, of name: UnsafeRawBufferPointer, field: UnsafeRawBufferPointer?) {
            if showSecrets { return out.appendJSONString(utf8: bytes) }
            out.append(literal: "fingerprint:")
            var fingerprint: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &fingerprint) { fingerprint in
                unlocked.fingerprint(entry: name, field: field, value: bytes, into: fingerprint)
                out.appendHex(UnsafeRawBufferPointer(rebasing: fingerprint[..<8]))
            }
        }
        unlocked.vault.forEachEntryBytes { entry in
            out.append(entry.name)
            out.append(literal: "  (modified ")
            out.appendTimestamp(milliseconds: entry.modified)
            out.append(literal: ")\n    value  ")
            show(entry.value, of: entry.name, field: nil)
            out.append(UInt8(ascii: "\n"))
            for field in entry.fields {
                out.append(literal: "    ")
                out.append(field.name)
                out.append(literal: "  ")
                show(field.value, of: entry.name, field: field.name)
                out.append(UInt8(ascii: "\n"))
            }
        }
    }
}

// MARK: - Without a password

extension VaultfileCommand.Git.Textconv {
    /// Whether `error` says that no source exists at all: no option or variable names one, the
    /// default identities (if any) open nothing, and there is no terminal to ask on or no password
    /// slot to ask for (also inside 'vaultfile exec', which withholds them).
    static func meansNoSource(_ error: CLIError, source: PasswordSource) -> Bool {
        guard case .prompt = source else { return false }
        switch error {
        case .noPasswordSource: return true
        case .nothingOpens(let report): return report.noSourceGiven
        case .refused: return PasswordSource.runsInsideExec
        default: return false
        }
    }

    /// The listing from the header alone: the vault id, generation, file size and each keyslot's
    /// KDF (what 'vaultfile info' shows), and how to see the entries.
    static func headerOnlyListing(of file: String) throws -> [String] {
        let (header, fileSize, _) = try VaultStore(path: file).readHeader()
        var lines = [
            "# vaultfile vault \(hex(header.vaultID)), entries not shown: no password source",
            "generation  \(header.generation)",
            "size  \(fileSize) bytes",
        ]
        for (index, slot) in header.keyslots.enumerated() {
            if case .password(let password) = slot {
                lines.append("keyslot \(index)  password, \(password.kdf)")
            } else {
                lines.append("keyslot \(index)  another kind")
            }
        }
        lines.append("# to see the entries, start an agent with 'vaultfile unlock', keep your identity in "
                     + "\(DefaultIdentity.file ?? "~/.config/vaultfile/identity.txt"), or set VAULTFILE_PASSWORD_COMMAND (see 'vaultfile git setup')")
        return lines
    }
}
