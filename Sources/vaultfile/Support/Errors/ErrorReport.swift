import KDF
import SecureMemory
import VaultFile
import VaultFormat
import VaultModel

// MARK: - What the user is told

/// What the command line makes of an error: the message, the next step, and the exit status.
/// The one place that turns errors into `vaultfile: error: …`, `vaultfile: hint: …` and a status:
/// libraries say what happened and its category; every hint (and every option it names) is here.
struct ErrorReport: Equatable {
    /// What happened; never a secret.
    let description: String
    /// What the user can do next, or nil.
    let hint: String?
    /// The process exit status.
    let status: ExitStatus

    /// The report of `error`, or nil for an error that is not vaultfile's (ArgumentParser's own
    /// `ExitCode`, `ValidationError` and parse errors, which it reports itself).
    init?(_ error: any Error) {
        switch error {
        case let batch as BatchError:
            let inner = ErrorReport(batch.underlying)
                ?? ErrorReport(description: String(describing: batch.underlying), hint: nil, status: .failure)
            self.init(description: "line \(batch.line): \(inner.description); nothing was changed", hint: inner.hint, status: inner.status)
        case let failed as EditNotSavedError:
            let inner = ErrorReport(failed.underlying)
                ?? ErrorReport(description: String(describing: failed.underlying), hint: nil, status: .failure)
            self.init(description: "\(inner.description); your edit was not saved (its text was wiped)", hint: inner.hint, status: inner.status)
        // The two common types first, by their concrete type: a cast to the protocol looks the
        // conformance up by scanning the binary's conformance records (0.3 M instructions, 7 % of a
        // `get` that ends in "no entry named"). Same report either way.
        case let error as VaultError:
            // A write through the agent that it would not sign: the agent signer's own error.
            if case .sealSigningFailed = error, let refusal = AgentSealSigner.lastFailure.withLock({ $0 }) {
                self.init(categorized: refusal)
            } else {
                self.init(categorized: error)
            }
        case let error as CLIError:
            self.init(categorized: error)
        case let error as any CategorizedError:
            self.init(categorized: error)
        default:
            return nil
        }
    }

    private init(categorized error: any CategorizedError) {
        self.init(description: error.description, hint: Self.hint(for: error), status: ExitStatus(error.category))
    }

    init(description: String, hint: String?, status: ExitStatus) {
        self.description = description
        self.hint = hint
        self.status = status
    }

    /// The next step for `error`, by its type (MARK: Hints).
    static func hint(for error: any CategorizedError) -> String? {
        switch error {
        case let error as VaultError: return hint(for: error)
        case let error as KDFError: return hint(for: error)
        case let error as CLIError: return hint(for: error)
        case let error as OTPError: return hint(for: error)
        case let error as BreachListError: return hint(for: error)
        case let error as AgeFileError: return hint(for: error)
        case let error as AgePluginClientError: return PluginHints.hint(for: error)
        default: return nil  // XChaCha20Poly1305.Failure: a bug or damage, nothing for the user to do
        }
    }

    static func hint(for error: OTPError) -> String? {
        switch error {
        case .noTOTP(let name): return "store one (the otpauth://totp/ URI on stdin) with: vaultfile set \(shellWord(name)) --totp < uri.txt"
        case .malformedURI, .invalidSecret, .unsupportedParameter: return "give an otpauth://totp/LABEL?secret=BASE32[&algorithm=SHA1|SHA256|SHA512&digits=6-10&period=1-3600] URI"
        case .invalidTime: return nil
        }
    }

    static func hint(for error: AgeFileError) -> String? {
        switch error {
        case .noIdentityMatches: return "give the identity the file was made for: --identity FILE (an age identity file or an OpenSSH ed25519 or RSA key)"
        case .passphraseRequired: return "give --passphrase-file or --passphrase-fd, or run it on a terminal to be asked"
        case .passphraseNotUsable: return "leave out the passphrase; open it with --identity FILE"
        case .wrongPassphrase: return "check the passphrase with whoever made the file"
        case .workFactorOverCap(_, let asked, _):
            return "if you trust this file, raise the limit with --kdf-max-memory \(ByteSize.argument(asked)) (or VAULTFILE_KDF_MAX_MEMORY)"
        case .plaintextTooLarge: return "an entry's value holds at most 256 MiB"
        case .plugin(let error): return PluginHints.hint(for: error)
        case .notAnAgeFile, .unsupportedVersion, .headerMalformed, .headerTooLarge, .stanzaMalformed, .scryptNotAlone, .headerMACFailed,
             .missingNonce, .payloadDamaged, .armorMalformed, .invalidRecipients, .scryptFailed: return nil
        }
    }

    static func hint(for error: BreachListError) -> String? {
        let forms = "give --hibp the Pwned Passwords file ordered by hash (SHA-1 or NTLM), or the folder of range files "
            + "the official downloader writes"
        switch error {
        case .unreadable, .notAFileOrFolder, .notAList: return forms
        case .notSorted: return "download the file ordered by hash, not the one ordered by prevalence; " + forms
        case .malformedLine: return "the download may be damaged or cut short: download it again"
        case .hashMismatch: return "leave out --hibp-hash to take the list's own kind, or give the list of the kind asked for"
        case .rangeFileMissing: return "run the downloader again: it completes a folder it left unfinished"
        case .rangeFileTooLarge, .rangeFileNotRegular:
            return "the official downloader writes regular files of under 100 KiB: run it again into an empty folder"
        }
    }

    static func hint(for error: VaultError) -> String? {
        switch error {
        case .notAVault: return "check the path; vault files start with the bytes \\x89VAULT\\r\\n"
        case .unsupportedVersion, .unsupportedFeature: return "upgrade vaultfile to open this vault"
        case .wrongPassword: return "check the password source (--password-file, --password-fd, --password-command, VAULTFILE_PASSWORD)"
        case .noSealSigner: return "open it with a slot's secret (its password, --identity, --keyfile or --recovery), or run 'vaultfile unlock' again"
        case .slotCannotSign(_, _, let signers): return SigningAdvice.hint(signers: signers)
        case .fileKeyRejected: return "forget the agent's keys of this vault with 'vaultfile lock', then 'vaultfile unlock' it again"
        case .noKeyslotOpens:
            return "check that the key is one the vault was shared with ('vaultfile slot list' on a machine that opens it); "
                + "other sources: --identity, --keyfile, --recovery, a password"
        case .slotNotFound: return "'vaultfile slot list' shows each slot's id, key and label"
        case .slotNameAmbiguous: return "name one of them by its id, its key (age1…, an ssh key line, a SHA256: fingerprint) or a longer label"
        case .historyOff: return "turn history on with 'vaultfile history --enable' (releases without history, such as 0.1.0, then say they cannot read the vault)"
        case .revisionNotFound(let entry, _, _): return "this lists the revisions kept: vaultfile history \(shellWord(entry))"
        case .rotationBlocked: return "open the vault with that slot's secret, or drop the slot on purpose with --drop-slot ID (its holder loses access)"
        case .sourceSecretRejected(_, let what) where what.contains("key file"):  // a KeePass database (import --format kdbx)
            return "check the database's password (--kdbx-password-file or the prompt) and key file (--kdbx-keyfile; --kdbx-no-password when it has none): 'keepassxc-cli open' takes the same"
        case .sourceSecretRejected:
            return "check the file's own password (--source-password-file, --source-password-fd, --source-password-command, or the prompt); "
                + "for a file under several vault ids, give each id's password: each option may be repeated, and every password is tried on every value"
        case .identityPassphraseWrong(let source, _):
            return "check the key's passphrase (--identity-passphrase-file, --identity-passphrase-fd, or typed at the prompt); "
                + (source.hasSuffix(".age") ? "'age -d KEY > /dev/null' asks for it and fails only when it is wrong (the secret key never reaches the terminal)"
                                            : "'ssh-keygen -y -f KEY' (an ssh key: prints its public key) or 'age -d KEY > /dev/null' (an age -p file) "
                                                + "asks for it and fails only when it is wrong")
        case .identityWorkOverCap:
            return "if the key is yours, re-encrypt it with ssh-keygen's default work: 'ssh-keygen -p -a 16 -f KEY'"
        case .notExportable: return "rename the entry ('vaultfile mv OLD NEW'), or leave it out of the export (--prefix)"
        case .sourceDamaged: return "take the file again from where it came from (git, a backup); the tool that wrote it may say more"
        case .importRunsDamaged: return "vaultfile's own encrypted temporary file changed while the import ran (another process, or the disk); the vault was not changed: run the import again"
        case .headerDamaged, .headerTampered, .payloadDamaged, .contentsDamaged: return "restore the vault from a backup or an earlier git commit"
        case .vaultMissing(let path):
            // The command names the path, so that it creates this vault whichever way the path was given.
            return "name another vault with --vault or VAULTFILE_PATH, or create this one (missing folders are made): "
                + "vaultfile init --vault \(shellPath(path))"
        case .vaultExists: return "choose another path, or remove the file first"
        case .busy: return "wait for the other process, or raise the wait with --lock-timeout"
        case .changedOnDisk: return "run the command again"
        case .entryNotFound, .referenceNotFound: return "'vaultfile list' shows the names in the vault"
        case .entryExists: return "pass --force to replace it"
        case .nameTwin(let name, let existing):
            return "use the existing entry's name, or give it the new spelling first: "
                + "vaultfile mv \(EntryName.spelledOut(existing)) \(EntryName.spelledOut(name))"
        case .environmentVariableClash:
            return "each variable holds one entry: rename one of the two, or leave one out with --prefix (or exec's --only)"
        case .mergeRefused(.unrelatedVaults):
            return "keep one side with 'git checkout --ours FILE' or '--theirs FILE', then move entries with export/import"
        case .mergeRefused(.passwordFails(_, let tried)) where VaultError.MergeRefusal.sources(tried) != nil:
            return "merge with a source that opens each side ('vaultfile slot list' on that side shows who can open it): "
                + "an identity, keyfile or password given to git's merge driver through VAULTFILE_IDENTITY_FILE, VAULTFILE_KEYFILE or VAULTFILE_PASSWORD_FILE"
        case .mergeRefused(.passwordFails):
            return "merge with the password of each side: check out that side, run 'vaultfile passwd' to the same password, and merge again"
        case .mergeRefused(.passwordOpensNone(_, let tried)) where VaultError.MergeRefusal.sources(tried) != nil:
            return "check the unlock sources git's merge driver is given (VAULTFILE_IDENTITY_FILE, VAULTFILE_IDENTITY, VAULTFILE_KEYFILE, "
                + "VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD_COMMAND or VAULTFILE_PASSWORD), then merge again"
        case .mergeRefused(.passwordOpensNone):
            return "check the password git's merge driver is given (VAULTFILE_PASSWORD_COMMAND, VAULTFILE_PASSWORD_FILE or VAULTFILE_PASSWORD), "
                + "then merge again"
        case .mergeRefused(.passwordOpensOnly(_, _, let tried)) where VaultError.MergeRefusal.sources(tried) != nil:
            return "merge with a source that BASE opens as well (a key from before the change), "
                + "or keep one side with 'git checkout --ours FILE' or '--theirs FILE' and move entries with export/import"
        case .mergeRefused(.passwordOpensOnly):
            return "merge with the password BASE opens with, after 'vaultfile passwd' back to it on the side that changed it; "
                + "or keep one side with 'git checkout --ours FILE' or '--theirs FILE' and move entries with export/import"
        case .mergeRefused(.removedKeyKept(let slot, _, let keptBy, _, _)):
            return "remove it on \(keptBy)'s side first ('vaultfile slot rm \(slot)' on that copy), commit, and merge again; to keep that "
                + "member, put the key back after the merge on purpose with 'vaultfile slot add --readmit'"
        case .mergeRefused(.conflictNameTaken(let entry, let parked, _)):
            return "settle or rename it on that side first, commit, and merge again: 'vaultfile mv' renames "
                + "\(shellWord(parked)), and an old conflict settles with: vaultfile resolve \(shellWord(entry)) --ours (or --theirs)"
        case .mergeRefused(.lowerKeyDerivation):
            return "if that change was meant, merge again with VAULTFILE_MERGE_ALLOW_WEAK=1 in the environment (after 'git merge --abort'); "
                + "else strengthen it on that branch with 'vaultfile passwd'"
        case .staleCopy(let path, _, let newer):
            // Merge first: --allow-rollback would leave the newer copy's changes behind, and this copy may have its own.
            // The merge is offered first and pasted last (`mergeCommand`); the others need no path.
            let rollback = "if this copy has no changes to keep, run the command again with --allow-rollback instead (it then becomes "
                + "the newest); if one of the two was meant as a separate vault (a cp to start another), keep both with --allow-rollback "
                + "once and make that one independent with 'vaultfile init --copy-of COPY --vault NEW.vault' (a new vault id)"
            guard !newer.path.isEmpty, newer.path != path else {
                return "to keep both copies' changes, find the newer copy (generation \(newer.generation)) and combine them, which writes "
                    + "the result to both (\(rollback)): \(mergeCommand(path, path))"
            }
            return "to keep both copies' changes, combine them, which writes the result to both (\(rollback)): \(mergeCommand(path, newer.path))"
        case .divergedCopy(let path, _, let other):
            // Never --allow-rollback here: it would leave the other copy's changes behind.
            return "combine the two copies, which writes the result to both: \(mergeCommand(path, other.path))"
        case .implausibleGeneration(let path, _, let seen):
            let next = Generations.successorBase(of: [], record: seen) + 1
            let merge = seen.map { "; or merge it into the copy seen here: \(mergeCommand($0.path, path))" } ?? ""
            return "if this copy is the one to keep, run the command again with --allow-rollback: its generation is then ignored "
                + "and the write gets generation \(next)\(merge)"
        case .sealedUnderRetiredKey:
            return "run 'vaultfile rekey' on this copy (and 'vaultfile slot rm' again for any slot the newer copy removed), "
                + "or merge it with the rotated copy ('git merge' of the branch that rotated the key, or 'vaultfile merge')"
        case .generationCeiling:
            return "no genuine copy gets there (it takes 2^63 writes): if this copy is the one to keep, run the command again with "
                + "--allow-rollback, which ignores its generation; or merge it into another copy with 'vaultfile merge'"
        case .refusedCopy(_, let why): return hint(for: why)
        case .untrustedCopy(let path, let why): return trustHint(path: path, why: why)
        case .io where error.isOutOfSpace:
            return "free room on that file system (or raise the quota), then run the command again: a new vault is written whole beside the old one before it replaces it"
        case .invalidName, .malformedInput, .limitExceeded, .notARegularFile, .io, .notDurable, .slotChangeRefused, .sealSigningFailed,
             .fieldNotFound: return nil  // .fieldNotFound: its message lists the entry's fields
        }
    }

    static func hint(for error: KDFError) -> String? {
        switch error {
        case .memoryOverCap(let asked, _):
            return "if you trust this file, raise the limit with --kdf-max-memory \(ByteSize.argument(asked)) (or VAULTFILE_KDF_MAX_MEMORY)"
        case .workOverCap(let asked, _):
            let bytes = asked.multipliedReportingOverflow(by: 1024).partialValue
            return "if you trust this file, raise the limit with --kdf-max-work \(ByteSize.argument(bytes)) (or VAULTFILE_KDF_MAX_WORK)"
        case .workTotalOverCap(let spent, let asked, _):
            let total = ByteSize.bytes(kibibytes: KDFError.total(spent, asked))
            return "if you trust this file, raise the limit on the total with --kdf-max-work \(ByteSize.argument(total)) (or VAULTFILE_KDF_MAX_WORK)"
        case .iterationsOverCap(let asked, _):
            return "if you trust this file, raise the limit with --kdf-max-iterations \(asked) (or VAULTFILE_KDF_MAX_ITERATIONS)"
        case .iterationsTotalOverCap(let spent, let asked, _):
            return "if you trust this file, raise the limit on the total with --kdf-max-iterations \(KDFError.total(spent, asked)) (or VAULTFILE_KDF_MAX_ITERATIONS)"
        case .aesKDFRoundsOverCap(_, let rounds, _): return "if you trust this file, raise the limit with --kdf-max-iterations \(rounds / 4 + min(rounds % 4, 1)) (or VAULTFILE_KDF_MAX_ITERATIONS)"
        case .belowMinimum: return "use stronger settings, or pass --allow-weak-kdf if you accept faster guessing"
        case .unknownAlgorithm: return "upgrade vaultfile"
        case .invalidParameters, .invalidSaltLength, .derivationFailed: return nil
        }
    }

    static func hint(for error: CLIError) -> String? {
        switch error {
        case .noForeignPasswordSource(_, let options): return "give it with \(options)"
        case .noPasswordSource:
            return "use --password-file FILE, --password-fd N, --password-command CMD or VAULTFILE_PASSWORD; to open a vault, "
                + "--identity FILE, --keyfile FILE or --recovery-file FILE work too ('passwd', 'slot add', 'slot rm', 'slot label' and 'rekey' "
                + "need one of these sources even while the agent holds the vault's key)"
        case .nothingOpens(let report): return report.hint
        case .gitCredentialVaultLocked(let path, let option, _, _): return GitCredentialHelper.lockedHint(path: path, vaultOption: option)
        case .noIdentityPassphraseSource:
            return "give the key's passphrase with --identity-passphrase-file FILE, --identity-passphrase-fd N or "
                + "VAULTFILE_IDENTITY_PASSPHRASE_FILE, or run the command on a terminal to be asked for it"
        case .identityPassphraseSourceFailed: return nil
        case .typedPasswordWrong:
            // Typed, not read from a source: the sources' list would only mislead.
            return "check Caps Lock and the keyboard layout, then run the command again; a vault shared with a key "
                + "also opens with it (--identity, --keyfile, --recovery)"
        case .passwordCommandFailed: return "run the command by hand to see why; its stdout must be the password"
        case .sourceDecryptionTotalOverLimit:
            return "a store's files hold passwords and notes; import its folders one at a time ('vaultfile import --format pass STORE/FOLDER --prefix FOLDER')"
        case .storeEncryptionFailed: return "gpg's message above says why: each --gpg-id (or the store's .gpg-id) must name a public key in your keyring that gpg trusts ('gpg --list-keys ID'; 'gpg --edit-key ID trust')"
        case .sourceDecryptionFailed(let tool, let file, let status, _):
            guard status != nil else { return "a store's files hold passwords and notes; decrypt this one by hand to see what it holds" }
            return tool == "gpg"
                ? "check that gpg decrypts it by hand (the secret key and gpg-agent must be available): gpg --decrypt \(shellPath(file)) > /dev/null"
                : "check the age identities (IDENTITIES: PASSAGE_IDENTITIES_FILE, SOPS_AGE_KEY_FILE or the documented default file): "
                    + "age --decrypt -i IDENTITIES \(shellPath(file)) > /dev/null"
        case .identitiesFileNoTerminal:
            return "run the import on a terminal: the passphrase is asked once there, and the identities stay in memory"
        case .identitiesFilePassphraseWrong(let file, _):
            return "this asks for it and fails only when it is wrong (the identities never reach the terminal): age --decrypt \(shellPath(file)) > /dev/null"
        case .sopsDataKeyNotOpened:
            return "name the file of the age identity the sops file was encrypted to with SOPS_AGE_KEY_FILE "
                + "(else $XDG_CONFIG_HOME/sops/age/keys.txt is read); 'sops --decrypt' with the same file shows whether it opens"
        case .refused(_, let hint), .importFormatMismatch(_, _, _, let hint): return hint
        case .importFormatUnknown(_, _, let hint?), .importUnreadable(_, _, _, let hint?): return hint
        case .importFormatUnknown:
            return "name it with --format (vaultfile import --help lists the formats; a pass or passage store is a folder)"
        case .agentFailed:
            return "'vaultfile agent status' shows the agent; 'vaultfile agent stop' ends it; --no-agent or VAULTFILE_NO_AGENT=1 skips it"
        case .agentHoldsOtherKeys(let path):
            return "its file key changed since it was unlocked (or this is another vault with the same id): "
                + "forget the old keys, then unlock again: vaultfile lock --vault \(shellPath(path))"
        case .agentChangeDenied:
            return "the confirm command the agent holds for this vault (the one the last accepted unlock set) decides such changes; "
                + "'vaultfile lock' then 'vaultfile unlock' starts afresh"
        case .agentCannotSign(let path, let reason): return SigningAdvice.throughAgent(path: shellPath(path), reason: reason)
        case .agentSignDenied:
            return "the confirm command the agent holds for this vault decides each signature; --no-agent writes with a slot's secret"
        case .noMatch(_, let searchedValues, let caseSensitive):
            var ways: [String] = []
            if caseSensitive { ways.append("-i ignores case") }
            if !searchedValues { ways.append("--values also searches values and fields") }
            return ways.isEmpty ? "'vaultfile list' shows the names in the vault" : ways.joined(separator: "; ")
        case .binaryOnTerminal(let name, let field):
            let command = "vaultfile get \(shellWord(name))" + (field.map { " --field \(shellWord($0))" } ?? "")
            return "pass --force to write it to the terminal anyway, or redirect or pipe it: \(command) > FILE"
        case .emptyValue: return "pass --allow-empty to store an empty value"
        case .regexWorkLimit: return "use a simpler pattern (fewer alternatives and counted repetitions such as {1000}), or search names only, without --values"
        case .unknownVerb(_, let suggestions):
            guard !suggestions.isEmpty else { return "'vaultfile --help' lists the verbs" }
            return "did you mean " + suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?"
        case .fieldLabelShared(let entry, _, let fields):
            return "ask for each by the name it is stored under (" + fields.map { "--field \(shellWord($0))" }.joined(separator: ", ")
                + "), as in: vaultfile get \(shellWord(entry)) --field \(shellWord(fields[0]))"
        case .folderNotEntry(let name, _):
            return "this shows the entries under it: vaultfile ls \(shellWord(name.hasSuffix("/") ? name : name + "/"))"
        case .noEntryOrFolder, .nothingUnder: return "'vaultfile ls' shows the names in the vault"
        case .referenceNotFound: return "'vaultfile ls' shows the names in the vault; in a reference '##' stands for a '#' in a name"
        case .kdfOverOpenCaps(_, let cap):
            let option: String
            switch cap {
            case .memoryOverCap(let asked, _): option = "--kdf-max-memory \(ByteSize.argument(asked)) (or VAULTFILE_KDF_MAX_MEMORY)"
            case .workOverCap(let asked, _), .workTotalOverCap(_, let asked, _):
                option = "--kdf-max-work \(ByteSize.argument(ByteSize.bytes(kibibytes: asked))) (or VAULTFILE_KDF_MAX_WORK)"
            case .iterationsOverCap(let asked, _), .iterationsTotalOverCap(_, let asked, _):
                option = "--kdf-max-iterations \(asked) (or VAULTFILE_KDF_MAX_ITERATIONS)"
            default: option = "the --kdf-max-* options"
            }
            return "choose cheaper settings ('vaultfile calibrate' stays within the limits), or give \(option) here "
                + "and on every open of this vault"
        case .execMatchesNothing: return "'vaultfile ls' shows the folders; pass --allow-empty to run the command all the same"
        case .stateFolderUnsafe(let unsafe): return unsafe.fix
        case .passwordSourceFailed, .emptyPassword, .passwordsDiffer, .inputFailed, .inputTooLarge, .io, .outputFailed, .invalidArgument,
             .cannotRun, .standardInputTaken, .pluginObserved, .agentOfAnotherRelease, .importUnreadable: return nil
        }
    }
}

/// `text` as one word for a POSIX shell, in a message the user may paste from: as it is when it
/// holds only characters no shell treats specially; else in single quotes (a quote inside written
/// as '\''); and as `$'…'` (bash, zsh, ksh) when it holds a character messages show escaped
/// (`Messages.escaped`: a control, a bidi or zero-width mark…). There each such character, and
/// `'` itself, is written as its UTF-8 bytes, `\xHH` each, which every shell with `$'…'` reads
/// back as those bytes whatever its locale (`\u202E` is read back only under a UTF-8 locale), so
/// what the line shows pastes as the name it stands for (att60 F8: a quoted `\x1B` stayed four
/// characters); a `\'` there ended the word in a shell without `$'…'` (dash), and what followed
/// ran once the user closed the quote (att63 F4).
///
/// The text is walked by Unicode scalars, never by Characters: a shell sees bytes, and a `'`
/// followed by a combining mark is one Character that is not `'` (att62 F1: such a quote was
/// written raw, ended the quoted word, and the pasted hint ran what followed). Every hint that
/// shows a command builds each word of it with this function, and never puts the command itself
/// in quotes (a quoted word inside would nest them).
/// A file operand takes `shellPath` instead: a leading `-` would make it an option.
func shellWord(_ text: String) -> String {
    // A leading '=' is zsh's command-path expansion (`=ls` → /usr/bin/ls): quoted (att63 F5).
    let plain = !text.isEmpty && !text.hasPrefix("=") && text.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-+,:@%=".unicodeScalars.contains(scalar))
    }
    guard !plain else { return text }
    guard text.unicodeScalars.contains(where: Messages.needsEscape) else {
        var quoted = "'"
        for scalar in text.unicodeScalars {
            if scalar == "'" { quoted += "'\\''" } else { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "'"
    }
    var quoted = "$'"
    for scalar in text.unicodeScalars {
        switch scalar {
        case "'": quoted += "\\x27"
        case "\\": quoted += "\\\\"
        case _ where !Messages.needsEscape(scalar): quoted.unicodeScalars.append(scalar)
        default: quoted += String(scalar).utf8.map { "\\x" + hexDigits(UInt32($0), width: 2) }.joined()
        }
    }
    return quoted + "'"
}

/// `value` in upper-case hexadecimal, at least `width` digits.
private func hexDigits(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// `path` as one word for a POSIX shell where a pasted command takes it as a file or folder (an
/// operand, or an option's value such as `--vault`'s): `shellWord`, with `./` before a relative
/// path that starts with `-` (not `-` itself, stdin), which the command would take for an option
/// (cold63 F7: `vaultfile import --format chrome-csv -x.csv` failed with "Unknown option
/// '-x.csv'"; recheck63b N4: `slot add keyfile -k.bin`). Every hint's path goes through it.
func shellPath(_ path: String) -> String {
    shellWord(path.hasPrefix("-") && path != "-" ? "./" + path : path)
}
