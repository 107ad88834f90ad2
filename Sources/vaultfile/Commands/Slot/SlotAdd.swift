import ArgumentParser
import KDF
import SecureMemory
import VaultFormat
import VaultModel

/// `vaultfile slot add KIND …`: one more secret that opens the vault; the file key stays.
///
/// The kind is a word (a subcommand), not an option: `--keyfile FILE` and `--recovery` on the same
/// command line are the unlock sources that open the vault first.
struct SlotAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a keyslot: password, recipient R, recipients-file F, keyfile F or recovery.",
        discussion: """
            Opening the vault needs one of its secrets (any unlock source: --identity, --keyfile, \
            --recovery, a password). The new slot wraps the same file key, so nothing else changes; \
            the first slot added sets the keyslots flag (format 1.1, or 1.2 with history), which \
            vaultfile 0.1.0 cannot open; an ssh-rsa key (2,048 to 8,192 bits, e = 65537) or an age \
            post-quantum recipient (age1pq1…) sets the long-keys flag (format 1.4), which vaultfile \
            0.3.0 and older cannot open. A classical key (age1…, ssh-ed25519, ssh-rsa) is refused in a \
            post-quantum vault without --allow-classical (age's no-mixing rule).
            """,
        subcommands: [SlotAddPassword.self, SlotAddRecipient.self, SlotAddRecipientsFile.self, SlotAddKeyfile.self, SlotAddRecovery.self])

    /// Adds `slots` to the vault under its lock and says what was done; returns the new ids.
    ///
    /// A key a slot already holds (the same recipient, ssh key or keyfile) is refused: two slots
    /// for one key would keep its holder in after `slot rm` of either. With `skippingRepeats`
    /// (a recipients file, re-run after the team file grew) such keys are skipped and named.
    @discardableResult
    static func add(_ slots: [(NewSlot, String)], to unlock: UnlockOptions, skippingRepeats: Bool = false, readmit: Bool = false,
                    allowClassical: Bool = false) throws -> [Int] {
        let path = unlock.location.path
        let readmitting = Readmission(allowed: readmit)
        var quantumLost: String?
        // Whoever adds a classical key on purpose takes the vault as no longer post-quantum on this machine.
        if allowClassical, slots.contains(where: { $0.0.isClassicalPublicKey }) { classicalAcceptance.withLock { $0.asker = .adding } }
        // A slot's secret even while an agent holds the file key: a new slot changes who can open
        // the vault. The file key stays, so the agent's copy keeps opening it.
        let (ids, upgraded, skipped, longKeys) = try unlock.update(askingAgent: false) { unlocked -> ([Int], Bool, [String], Bool) in
            let wasOld = !unlocked.header.usesKeyslots11, hadLongKeys = unlocked.header.usesLongKeys
            var ids: [Int] = [], skipped: [String] = []
            let quantumBefore = PostQuantumStatus(unlocked.header.keyslots).words
            defer { quantumLost = PostQuantumStatus(unlocked.header.keyslots).words == nil ? quantumBefore : nil }
            for (slot, label) in slots {
                if skippingRepeats, let existing = try unlocked.slotHolding(slot) {
                    skipped.append("\(slot.keyName ?? "a key"): keyslot \(existing) (\(Rotation.describe(unlocked.slots[existing]))) already holds it")
                    continue
                }
                // age's no-mixing rule: a classical key in a post-quantum vault only when asked for.
                try PostQuantumStatus.checkAdding(slot, to: unlocked.header.keyslots, allowClassical: allowClassical)
                try unlocked.addSlot(slot, label: label, now: currentTimeMilliseconds())
                try readmitting.check(unlocked, path: path)
                ids.append(unlocked.header.keyslots.count - 1)
            }
            return (ids, wasOld && !ids.isEmpty, skipped, !hadLongKeys && unlocked.header.usesLongKeys)
        }
        readmitting.forgetRemovals()
        for line in skipped { Messages.info("skipped \(line)") }
        if ids.isEmpty { Messages.info("no keyslot added to \(path): every key already has one") }
        for id in ids { Messages.info("added keyslot \(id) to \(path)") }
        if upgraded {
            Messages.info("\(path) now uses format 1.1 (keyslots); vaultfile 0.1.0 refuses it and asks to upgrade")
        }
        if let quantumLost {
            Messages.warning("\(path) was \(quantumLost) and no longer is (--allow-classical): a quantum computer could open it "
                             + "through the classical slot; 'vaultfile info' no longer says post-quantum, and the slot's 'slot rm' makes it so again; "
                             + "every other member who saw it post-quantum is warned on their next open, until they accept it ('slot list --accept-classical')")
        }
        if longKeys {
            Messages.info("\(path) now uses format 1.4 (long slot keys: an ssh-rsa, post-quantum or age plugin slot); vaultfile 0.3.0 and older refuse it and ask to upgrade")
        }
        return ids
    }
}

/// Options every kind shares.
struct SlotAddOptions: ParsableArguments {
    @Option(name: .customLong("label"), help: ArgumentHelp(
        "A label for people, e.g. a name or 'CI' (at most 64 bytes; encrypted in the vault).", valueName: "text"))
    var label: String?

    @Flag(name: .customLong("readmit"), help: "Add a key that was removed from the vault (a removal this machine learned, or one the vault records).")
    var readmit = false

    @Flag(name: .customLong("allow-classical"), help: "Add an X25519, ssh-ed25519 or ssh-rsa key to a post-quantum vault (it then is no longer post-quantum).")
    var allowClassical = false

    func validate() throws {
        if let label, !SlotMetadata.isValidLabel(label) {
            throw ValidationError("--label takes at most \(SlotMetadata.maxLabelLength) bytes of UTF-8 without control characters")
        }
    }
}

// MARK: - Kinds

/// `slot add password`: another password (each with its own KDF settings).
struct SlotAddPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "password", abstract: "Add a password (asked twice, or --new-password-file/-fd).")

    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var options: SlotAddOptions
    @OptionGroup var kdf: KDFOptions
    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file.", valueName: "file"))
    var newPasswordFile: String?
    @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("Read the new password from this descriptor.", valueName: "n"))
    var newPasswordFD: Int32?

    func validate() throws {
        if newPasswordFile != nil && newPasswordFD != nil { throw ValidationError("give at most one of --new-password-file and --new-password-fd") }
    }

    func run() throws {
        let parameters = try kdf.parameters(within: unlock.limits())
        // The new password is read before the vault is opened, so a failing source changes nothing.
        let new: SecureBytes
        if let newPasswordFile {
            new = try PasswordSource.file(newPasswordFile).read(prompt: "")
        } else if let newPasswordFD {
            new = try PasswordSource.descriptor(newPasswordFD).read(prompt: "")
        } else {
            new = try Terminal.readNewSecret(prompt: "New password for \(unlock.location.path): ", confirm: "Repeat the new password: ")
        }
        guard new.count > 0 else { throw CLIError.emptyPassword }
        PasswordAdvice.warnIfWeak(new, typed: newPasswordFile == nil && newPasswordFD == nil)
        Messages.progress("adding a password (\(parameters))…")
        try SlotAdd.add([(.password(new, parameters), options.label ?? "")], to: unlock, readmit: options.readmit)
    }
}

/// `slot add recipient R`: an age recipient (`age1…`, `age1pq1…`) or an ssh-ed25519 or ssh-rsa public key.
struct SlotAddRecipient: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipient",
        abstract: "Add an age recipient (age1…, age1pq1…) or an ssh-ed25519 or ssh-rsa public key ('ssh-ed25519 AAAA… [comment]', quoted).")

    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var options: SlotAddOptions
    @Argument(help: "The recipient: age1…, age1pq1…, an age plugin recipient (age1NAME1…, runs age-plugin-NAME), or one ssh-ed25519 or ssh-rsa public key line in quotes.") var recipient: String

    func run() throws {
        let slot = try Recipients.parse(recipient, source: nil)
        try SlotAdd.add([(slot.slot, options.label ?? slot.defaultLabel)], to: unlock, readmit: options.readmit, allowClassical: options.allowClassical)
    }
}

/// `slot add recipients-file F`: every recipient of a file (one per line, `#` comments).
struct SlotAddRecipientsFile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipients-file",
        abstract: "Add every recipient in a file: age1…, age1pq1…, ssh-ed25519 or ssh-rsa lines, blank lines skipped (age's recipients files).",
        discussion: """
            A '# comment' line right before a recipient becomes that slot's label (the last of several \
            comment lines in a row; a blank line in between ends it), so a team file such as \
            '# Alice' then 'age1…' labels each member; without one, an ssh key's own comment is the \
            label. --label gives every slot of the file the same label instead. A key that already \
            has a slot is skipped and named, so the command can run again after the file grew.
            """)

    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var options: SlotAddOptions
    @Argument(help: "The recipients file.") var file: String

    func run() throws {
        let slots = try Recipients.parseFile(file)
        try SlotAdd.add(slots.map { ($0.slot, options.label ?? $0.defaultLabel) }, to: unlock, skippingRepeats: true, readmit: options.readmit,
                        allowClassical: options.allowClassical)
    }
}

/// `slot add keyfile F`: a keyfile (`keygen --keyfile` makes one).
struct SlotAddKeyfile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyfile",
        abstract: "Add a keyfile: a file of 32 bytes to 64 MiB whose whole content is the secret.",
        discussion: """
            No slow KDF protects a keyfile: it is as strong as it is unpredictable. A file that \
            'vaultfile keygen --keyfile' did not make (64 random bytes) needs --any-keyfile.
            """)

    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var options: SlotAddOptions
    @Flag(name: .customLong("any-keyfile"), help: "Accept a file 'vaultfile keygen --keyfile' did not make.") var anyKeyfile = false
    @Argument(help: "The keyfile.") var file: String

    func run() throws {
        try Keyfiles.checkNew(file, anyKeyfile: anyKeyfile)
        try SlotAdd.add([(.keyfile(path: file), options.label ?? "")], to: unlock, readmit: options.readmit)
    }
}

/// `slot add recovery`: a recovery code, written once to standard output.
struct SlotAddRecovery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery",
        abstract: "Add a recovery code and print it (only it, and a newline) to standard output, once.",
        discussion: """
            The code holds 140 random bits in 7 groups of 5 characters (XXXXX-XXXXX-…); each group's last \
            character checks it, so a mistyped group is caught before anything is tried. Keep it on paper \
            or in a safe; open the vault with it through --recovery or --recovery-file.
            """)

    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var options: SlotAddOptions

    func run() throws {
        let code = RecoveryCode.generate()
        try SlotAdd.add([(.recovery(code, NewSlot.recoveryKDF), options.label ?? "")], to: unlock, readmit: options.readmit)
        try StandardOutput.line(code.formatted())
    }
}

// MARK: - Parsing recipients and checking keyfiles

/// Recipients as people write them.
enum Recipients {
    /// A slot for one recipient, and the label it gets without --label (an ssh key's comment).
    ///
    /// `source` names the recipient in a message when there are several (a file's line, the
    /// second `--recipient`); the text is never quoted by this prefix: it may be a secret key
    /// pasted by mistake.
    static func parse(_ text: String, source: String?) throws -> (slot: NewSlot, defaultLabel: String) {
        let trimmed = text.trimmingSpaces()
        do throws(VaultError) {
            try refuseMisplaced(trimmed)
            if trimmed.hasPrefix(SSHRSAPublicKey.typeName + " ") {
                let key = try SSHRSAPublicKey(parsing: trimmed)
                return (.sshRSA(key), SlotMetadata.isValidLabel(key.comment) ? key.comment : "")
            }
            if trimmed.hasPrefix("ssh-") {
                let key = try SSHEd25519PublicKey(parsing: trimmed)
                return (.sshEd25519(key), SlotMetadata.isValidLabel(key.comment) ? key.comment : "")
            }
            if AgePQRecipient.looksLike(trimmed) { return (.postQuantum(try AgePQRecipient(parsing: trimmed)), "") }
            if AgePluginRecipient.looksLikePlugin(trimmed) { return (.plugin(try AgePluginRecipient(parsing: trimmed)), "") }
            return (.recipient(try AgeRecipient(parsing: trimmed)), "")
        } catch {
            guard let source, case .malformedInput(let why) = error else { throw error }
            throw VaultError.malformedInput("\(source): \(why)")
        }
    }

    /// The recipients of a file; a bad line is named by its number.
    ///
    /// A comment line right before a recipient (`# Alice`, as team recipients files hold them) is
    /// that recipient's label; of several comment lines in a row the last one counts, and a blank
    /// line in between ends it. Without one, an ssh key's own comment is the label. A comment
    /// longer than a label is cut to 64 bytes at a character boundary; tabs become spaces.
    static func parseFile(_ path: String) throws -> [(slot: NewSlot, defaultLabel: String)] {
        let bytes = try KeyFiles.read(path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw VaultError.malformedInput("\(path) is not UTF-8 text") }
        var result: [(slot: NewSlot, defaultLabel: String)] = []
        var comment: String? = nil
        for (index, raw) in text.textLines().enumerated() {
            let line = String(raw).trimmingSpaces()
            if line.isEmpty { comment = nil; continue }
            if line.hasPrefix("#") { comment = commentLabel(line); continue }
            let parsed = try parse(line, source: "\(path), line \(index + 1)")
            result.append((parsed.slot, comment.flatMap { $0.isEmpty ? nil : $0 } ?? parsed.defaultLabel))
            comment = nil
        }
        guard !result.isEmpty else { throw VaultError.malformedInput("\(path) holds no recipient") }
        return result
    }

    /// The label a `# …` comment line gives: the text after the `#`s, trimmed, without control
    /// characters (tabs become spaces), cut to a label's length at a character boundary.
    static func commentLabel(_ line: String) -> String {
        let text = String(line.drop { $0 == "#" }).trimmingSpaces()
        var label = ""
        for character in text {
            let next = character == "\t" ? " " : character
            if next.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { continue }
            guard label.utf8.count + String(next).utf8.count <= SlotMetadata.maxLabelLength else { break }
            label.append(next)
        }
        return SlotMetadata.isValidLabel(label) ? label : ""
    }
}

/// Keyfiles given to become slots.
enum Keyfiles {
    /// Refuses a file `keygen --keyfile` did not make, unless `anyKeyfile`.
    static func checkNew(_ path: String, anyKeyfile: Bool) throws {
        guard try Keyfile.isGenerated(path: path) || anyKeyfile else {
            throw CLIError.refused("\(path) was not made by 'vaultfile keygen --keyfile'; a keyfile is as strong as it is unpredictable, "
                                   + "and no slow KDF protects it",
                                   hint: "use a file from 'vaultfile keygen --keyfile FILE', or pass --any-keyfile if this file is random and secret")
        }
    }
}

extension String {
    /// Without spaces, tabs and line ends at either end.
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else { return "" }
        return String(scalars[first...last])
    }
}
