import ArgumentParser
import KDF
import SecureMemory
import VaultFormat
import VaultInterchange
import VaultModel

extension VaultfileCommand {
    /// Writes one entry's value (or field) as a real age v1 file, for age recipients or a passphrase.
    struct Share: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "share",
            abstract: "Write an entry's value (or a field) as an age file for recipients or a passphrase.",
            discussion: """
                The file is an age v1 file (age-encryption.org/v1) that the real 'age -d' opens: to age1… \
                (X25519), age1pq1… (post-quantum: age 1.3 or later opens it, and it is never mixed with \
                classical recipients, exit 64), age plugin (age1NAME1…: runs age-plugin-NAME from PATH's \
                absolute folders), ssh-ed25519 and ssh-rsa recipients (--recipient, repeatable; --recipients-file: one a line, \
                '#' comments), or to a passphrase (--passphrase: asked twice on the terminal, or \
                --passphrase-file/--passphrase-fd), which, as age requires, is then the only recipient. Only \
                that value leaves the vault, which is opened read-only. --out files are written 0600, \
                atomically, never over an existing file without --overwrite; without --out the file goes to \
                standard output, and a binary one is not written to a terminal (use --armor, as age does).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.", completion: EntryCompletion.names) var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Share this named field instead of the value.", valueName: "field"), completion: EntryCompletion.fields)
        var field: String?
        @Option(name: .customLong("recipient"), help: ArgumentHelp("An age1… or age1pq1… recipient, an age plugin recipient (age1NAME1…), or an 'ssh-ed25519 AAAA…' or 'ssh-rsa AAAA…' public key; repeatable.", valueName: "recipient"))
        var recipients: [String] = []
        @Option(name: .customLong("recipients-file"), help: ArgumentHelp("Every recipient in this file (one a line, # comments); repeatable.", valueName: "file"), completion: .file())
        var recipientsFiles: [String] = []
        @OptionGroup var passphrase: AgePassphraseOptions
        @Flag(name: .customLong("armor"), help: "Write the PEM-armored form (-----BEGIN AGE ENCRYPTED FILE-----), as age -a.") var armor = false
        @Option(name: .customLong("out"), help: ArgumentHelp("Write here (mode 0600, atomically) instead of stdout; - is stdout.", valueName: "file"), completion: .file())
        var output: String?
        @Flag(name: .customLong("overwrite"), help: "Replace an existing --out file (never a vault).") var overwrite = false

        /// The file `--out` names: none for `-`, standard output.
        private var file: String? { output == "-" ? nil : output }

        func validate() throws {
            // The field may be a label an import kept (`Пин`), which is no field name: found in run().
            try validateEntryArguments(name: name, field: nil)
            if let field, field.allSatisfy(\.isWhitespace) { throw ValidationError(Get.blankField) }
            let hasRecipients = !recipients.isEmpty || !recipientsFiles.isEmpty
            if passphrase.isGiven && hasRecipients {
                throw ValidationError("a passphrase is an age file's only recipient, as age requires: give either --passphrase or --recipient/--recipients-file")
            }
            if !passphrase.isGiven && !hasRecipients { throw ValidationError("give at least one --recipient or --recipients-file, or --passphrase") }
        }

        func run() throws {
            // Recipients and the output are checked before the vault is opened: a typo costs no unlock.
            var ageRecipients = try Self.recipients(recipients, files: recipientsFiles)
            if file == nil && StandardOutput.isTerminal && !armor {
                throw CLIError.refused("refusing to write a binary age file to the terminal", hint: "use --armor, --out FILE, or redirect the output")
            }
            let target = try file.map { try PlaintextOutput($0, vault: unlock.location.path, overwrite: overwrite) }
            let limits = try unlock.limits()
            let unlocked = try unlock.open(entriesOnly: true)
            // A field an import stored under another name (`Пин` as `xn--r0a4cp`) by its label too.
            let part = EntryPart(field: try field.map { try ImportedLabels.field($0, of: name, in: unlocked.vault, note: "shared") })
            // The entry must exist before a passphrase is typed twice for it.
            try unlocked.vault.withValue(of: name, part: part) { _ in }
            if passphrase.isGiven {
                let secret = try passphrase.read(prompt: "Passphrase for the age file of \(name): ", confirm: true)
                ageRecipients = [AgeScryptPassphrase(passphrase: secret, limits: limits, logN: Self.workFactor(within: limits))]
            }
            if let target {
                try target.write(try unlocked.vault.withValue(of: name, part: part) { try AgeFile.encrypt($0, to: ageRecipients, armor: armor) })
                Messages.info("wrote an age file of '\(Messages.escaped(name))'\(field.map { " (field '\(Messages.escaped($0))')" } ?? "") to \(file ?? "")")
            } else if armor {
                try StandardOutput.write(try unlocked.vault.withValue(of: name, part: part) { try AgeFile.encrypt($0, to: ageRecipients, armor: true) })
            } else {
                // Streamed: the file of a large value is never held whole.
                try unlocked.vault.withValue(of: name, part: part) { value in
                    try AgeFile.encrypt(value, to: ageRecipients) { try StandardOutput.write($0) }
                }
            }
            if ageRecipients.contains(where: { $0 is AgePQRecipient }) {
                Messages.info("note: the file is for post-quantum (age1pq1…) recipients: it needs age 1.3 or later "
                              + "(or 'vaultfile receive'); older age, such as Debian's 1.1.1, cannot open it")
            }
        }

        /// age's default work factor (2^18, 256 MiB), lowered to fit the memory cap.
        static func workFactor(within limits: KDFLimits) -> Int {
            var logN = AgeScryptPassphrase.defaultLogN
            while logN > 10, UInt64(1024) << UInt64(logN) > limits.maxMemoryBytes { logN -= 1 }
            return logN
        }

        /// The recipients of `--recipient` and `--recipients-file`, parsed as `slot add` parses them.
        static func recipients(_ texts: [String], files: [String]) throws -> [any AgeFileRecipient] {
            var slots: [NewSlot] = []
            for (index, text) in texts.enumerated() {
                slots.append(try Recipients.parse(text, source: texts.count > 1 ? "--recipient \(index + 1)" : nil).slot)
            }
            for path in files { slots += try Recipients.parseFile(path).map(\.slot) }
            var plugins: [AgePluginRecipient] = []
            let native = try slots.compactMap { slot throws -> (any AgeFileRecipient)? in
                switch slot {
                case .recipient(let recipient): return recipient
                case .sshEd25519(let key): return key
                case .sshRSA(let key): return key
                case .postQuantum(let recipient): return recipient
                case .plugin(let recipient):
                    plugins.append(recipient)
                    return nil
                default: throw CLIError.invalidArgument("share writes to age1…, age1pq1…, age1NAME1… (plugins), ssh-ed25519 and ssh-rsa recipients")
                }
            }
            // One plugin run per plugin, for all of its recipients (a PIN or a touch asked once).
            let grouped: [any AgeFileRecipient] = AgePluginFileRecipient.grouped(plugins, launcher: PluginLauncher()).map { $0 }
            return native + grouped
        }
    }
}
