import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel

extension VaultfileCommand {
    /// Lends an entry's age identity to age through `age-plugin-vaultfile`, or prints its recipient
    /// or (asked explicitly) the identity itself.
    struct AgeIdentityVerb: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "age-identity",
            abstract: "Lend an entry's age identity to age and sops through age-plugin-vaultfile.",
            discussion: """
                The entry's value is an age identity (AGE-SECRET-KEY-1…, or a whole age-keygen file). --lend \
                marks the entry lent (its field 'age-lent' holds a random lend key) and prints an identity \
                file for age: 'age -d -i FILE' then runs age-plugin-vaultfile (a link to vaultfile on PATH), \
                which unwraps with the key kept in the vault, never handing it out. Without an option it \
                prints that file again for a lent entry. --unlend removes the mark: every line printed \
                before stops working (so does --lend after --unlend: a new lend key). --recipient prints \
                the age1… recipient to encrypt to; --raw prints the identity itself, for SOPS_AGE_KEY_CMD \
                (it is then the caller's to protect).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry whose value is an age identity.", completion: EntryCompletion.names) var name: String
        @Flag(name: .customLong("lend"), help: "Mark the entry lent and print its plugin identity (AGE-PLUGIN-VAULTFILE-1…).") var lend = false
        @Flag(name: .customLong("unlend"), help: "Remove the mark: every plugin identity of the entry stops working.") var unlend = false
        @Flag(name: .customLong("recipient"), help: "Print the entry's recipient (age1…), one per identity.") var recipient = false
        @Flag(name: .customLong("raw"), help: "Print the identity itself (AGE-SECRET-KEY-1…): a secret key on stdout.") var raw = false

        func validate() throws {
            try validateEntryArguments(name: name, field: nil)
            guard [lend, unlend, recipient, raw].filter({ $0 }).count <= 1 else {
                throw ValidationError("give at most one of --lend, --unlend, --recipient and --raw")
            }
        }

        func run() throws {
            if lend || unlend {
                let output = try unlock.update { unlocked in try change(unlocked) }
                if let output { try StandardOutput.write(Array(output.utf8)) }
                return
            }
            let unlocked = try unlock.open(entriesOnly: true)
            let identities = try Self.identities(in: unlocked.vault, name: name)
            if raw {
                try StandardOutput.write(Array(identities.map { $0.encodedSecretKey() + "\n" }.joined().utf8))
            } else if recipient {
                try StandardOutput.write(Array(identities.map { "\($0.recipient)\n" }.joined().utf8))
            } else {
                let stored = unlocked.vault.existingName(for: name) ?? name
                try Self.checkLendable(stored)
                guard let key = try Self.lendKey(in: unlocked.vault, name: stored) else {
                    throw CLIError.refused("'\(Messages.escaped(stored))' is not lent to age", hint: "this lends it and prints its identity: vaultfile age-identity \(shellWord(stored)) --lend")
                }
                try StandardOutput.write(Array(try Self.identityFile(vaultID: unlocked.header.vaultID, name: stored, lendKey: key, identities: identities).utf8))
            }
        }

        /// `--lend` (the identity file to print) or `--unlend` (nil), applied to the open vault.
        private func change(_ unlocked: UnlockedVault) throws -> String? {
            let stored = unlocked.vault.existingName(for: name) ?? name
            let identities = try Self.identities(in: unlocked.vault, name: stored)
            if !unlend { try Self.checkLendable(stored) }
            if unlend {
                guard try Self.lendKey(in: unlocked.vault, name: stored) != nil else {
                    Messages.info("'\(Messages.escaped(stored))' was not lent")
                    return nil
                }
                try unlocked.vault.removeField(VaultfilePluginIdentity.lentField, of: stored)
                Messages.info("'\(Messages.escaped(stored))' is no longer lent: its plugin identities stop working")
                return nil
            }
            // An entry already lent keeps its lend key: the lines printed before stay valid.
            var key = try Self.lendKey(in: unlocked.vault, name: stored)
            if key == nil {
                var field = VaultfilePluginIdentity.newLendField()
                defer { wipe(&field) }
                try unlocked.vault.setField(VaultfilePluginIdentity.lentField, value: field, for: stored)
                key = VaultfilePluginIdentity.lendKey(fromField: field)
                Messages.note("while the vault is unlocked (vaultfile unlock), any program of yours can decrypt age files for "
                              + "'\(Messages.escaped(stored))' through age-plugin-vaultfile, unless 'unlock --confirm-command' asks you")
            }
            guard var lendKey = key else { return nil }
            defer { wipe(&lendKey) }
            return try Self.identityFile(vaultID: unlocked.header.vaultID, name: stored, lendKey: lendKey, identities: identities)
        }

        /// The age identities of the entry's value; refused when it is not an age identity file.
        static func identities(in vault: Vault, name: String) throws -> [AgeIdentity] {
            try vault.withValue(of: name) { raw in
                var value = Array(raw)
                defer { wipe(&value) }
                do {
                    return try AgeIdentityFile.parse(value, source: "the value of '\(Messages.escaped(name))'")
                } catch {
                    if value.firstRange(of: Array("AGE-SECRET-KEY-PQ-1".utf8)) != nil {
                        throw CLIError.refused("'\(Messages.escaped(name))' holds a post-quantum identity (AGE-SECRET-KEY-PQ-1…): age-identity lends "
                                               + "and prints X25519 age identities (AGE-SECRET-KEY-1…) only; post-quantum identities cannot be lent; nothing was changed",
                                               hint: "give the identity file to --identity, or keep it in the default identity file")
                    }
                    throw CLIError.refused("\(String(describing: error)); age-identity lends an entry whose value is an age identity "
                                           + "(AGE-SECRET-KEY-1…, or an age-keygen file)",
                                           hint: "store one with: age-keygen | vaultfile set \(shellWord(name))")
                }
            }
        }

        /// Refuses, before anything is changed or noted, a name no plugin identity can carry.
        static func checkLendable(_ name: String) throws {
            if let problem = VaultfilePluginIdentity.nameProblem(name) {
                throw CLIError.refused("'\(Messages.escaped(name))' cannot be lent to age: \(problem); nothing was changed",
                                       hint: "rename it ('vaultfile mv') to a name of at most \(VaultfilePluginIdentity.maxNameLength) bytes without control or format characters")
            }
        }

        /// The lend key of a lent entry, or nil.
        static func lendKey(in vault: Vault, name: String) throws -> [UInt8]? {
            do {
                return try vault.withValue(of: name, part: EntryPart(field: VaultfilePluginIdentity.lentField)) { raw in
                    guard let key = VaultfilePluginIdentity.lendKey(fromField: Array(raw)) else {
                        throw CLIError.invalidArgument("the field '\(VaultfilePluginIdentity.lentField)' of '\(Messages.escaped(name))' is not "
                                                       + "a lend key (64 hex digits); this removes it: vaultfile age-identity \(shellWord(name)) --unlend")
                    }
                    return key
                }
            } catch VaultError.fieldNotFound {
                return nil
            }
        }

        /// The identity file age reads: two comments (entry, vault, recipients) and the line.
        static func identityFile(vaultID: [UInt8], name: String, lendKey: [UInt8], identities: [AgeIdentity]) throws -> String {
            let line = try VaultfilePluginIdentity(vaultID: vaultID, entry: name, lendKey: lendKey).line
            var text = "# age-plugin-vaultfile: entry '\(Messages.escaped(name))' of vault \(hex(vaultID))\n"
            for identity in identities { text += "# public key: \(identity.recipient)\n" }
            return text + line + "\n"
        }
    }
}
