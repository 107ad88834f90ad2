import ArgumentParser
import KDF
import VaultFormat

extension VaultfileCommand {
    /// Describes a vault from its header alone: no password needed.
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Show the format, id, KDF settings, keyslots and sizes of a vault (no password needed).")

        @OptionGroup var location: VaultOptions
        @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

        func run() throws {
            let store = location.store
            let (header, fileSize, headerLength) = try store.readHeader()
            // Kinds and KDF settings only: who can open the vault (labels, recipients) is in the
            // encrypted metadata, for those who can open it ('vaultfile slot list').
            let slots: [(type: String, kdf: KDFParameters?)] = header.keyslots.map { slot in
                switch slot {
                case .password(let password): return (header.usesKeyslots11 ? "password (v1)" : "password", password.kdf)
                case .x25519(let x25519): return (x25519.kind.name, x25519.kdf)
                case .sshRSA: return ("ssh-rsa", nil)
                case .mlkem768x25519: return (HybridSlot.kindName, nil)
                case .plugin: return ("plugin", nil)
                case .unknown(let type, _): return ("unknown type \(type)", nil)
                }
            }
            // Recovery codes hold 140 random bits and use a cheap KDF on purpose, identities and
            // keyfiles are keys: only passwords are judged, and a vault without a password slot is
            // not judged at all (issue 47: it was said to meet the recommendation).
            let hasPassword = slots.contains { $0.type.hasPrefix("password") }
            let weak = slots.contains { $0.type.hasPrefix("password") && ($0.kdf.map { !$0.meetsRecommendedMinimum } ?? false) }
            let seen = try Self.seen(header, path: store.path)
            let members = Self.members(header)
            // Said only of a vault with a post-quantum slot (age's meaning: every slot is; docs/SECURITY.md).
            let quantum = PostQuantumStatus(header.keyslots).words
            if json {
                try StandardOutput.line(JSON.object([
                    ("path", .string(store.path)),
                    ("format", .string("\(VaultHeader.majorVersion).\(header.minorVersion)")),
                    ("vault_id", .string(hex(header.vaultID))),
                    ("generation", .uint(header.generation)),
                    ("cipher", .string("XChaCha20-Poly1305 secretstream, 64 KiB chunks")),
                    ("keyslots", .array(slots.enumerated().map { Self.json(type: $1.type, kdf: $1.kdf, rsa: header.keyslots[$0]) })),
                    ("file_bytes", .int(Int64(fileSize))),
                    ("header_bytes", .int(Int64(headerLength))),
                    ("payload_bytes", .int(Int64(fileSize - headerLength))),
                    ("kdf_below_recommendation", hasPassword ? .bool(weak) : .null),
                ] + seen.json + members.json + [("post_quantum", JSON.string(quantum ?? "no"))]).text)
                return
            }
            var lines = [
                "path:        \(store.path)",
                "format:      vaultfile \(VaultHeader.majorVersion).\(header.minorVersion)",
                "vault id:    \(hex(header.vaultID))",
                "generation:  \(header.generation)",
            ] + seen.lines + members.lines + ["cipher:      XChaCha20-Poly1305 (secretstream, 64 KiB chunks)"]
            for (index, slot) in slots.enumerated() {
                let size = Self.modulusBytes(header.keyslots[index]).map { ", \($0 * 8)-bit key" } ?? ""
                lines.append("keyslot \(index):   \(slot.type)\(slot.kdf.map { ", \($0)" } ?? "")\(size)")
            }
            if let quantum { lines.append("quantum:     \(quantum)") }
            lines.append("size:        \(fileSize) bytes (header \(headerLength), payload \(fileSize - headerLength))")
            lines.append("kdf:         " + (!hasPassword ? "not judged: no password slot (only a password's KDF is judged)"
                                            : weak ? "BELOW today's recommendation (OWASP); strengthen with 'vaultfile passwd'"
                                            : "meets today's recommendation (OWASP)"))
            // The paths (this vault's, the recorded copy's, a work tree's) may hold control characters:
            // escaped like every path a message shows (JSON escapes them itself).
            try StandardOutput.line(lines.map { Messages.escaped($0) }.joined(separator: "\n"))
        }

        /// The modulus length of an ssh-rsa slot (its wrap is exactly that long; the key is in the metadata).
        private static func modulusBytes(_ slot: Keyslot) -> Int? {
            if case .sshRSA(let rsa) = slot { return rsa.ciphertext.count }
            return nil
        }

        private static func json(type: String, kdf: KDFParameters?, rsa slot: Keyslot) -> JSON {
            var pairs: [(String, JSON)] = [("type", .string(type))]
            if let bytes = modulusBytes(slot) { pairs.append(("modulus_bytes", .int(Int64(bytes)))) }
            switch kdf {
            case .argon2id(let p)?:
                pairs += [("kdf", .string("argon2id")), ("memory_kib", .int(Int64(p.memoryKiB))),
                          ("iterations", .int(Int64(p.iterations))), ("parallelism", .int(Int64(p.parallelism)))]
            case .pbkdf2SHA256(let p)?:
                pairs += [("kdf", .string("pbkdf2-sha256")), ("iterations", .int(Int64(p.iterations)))]
            case nil:
                break
            }
            // Judged for passwords only (a recovery code's cheap KDF is by design).
            if let kdf, type.hasPrefix("password") { pairs.append(("meets_recommendation", .bool(kdf.meetsRecommendedMinimum))) }
            return .object(pairs)
        }
    }
}
