import KDF
import SecureMemory
import VaultFormat
import VaultInterchange
import VaultModel

// MARK: - export --format kdbx

extension VaultfileCommand.Export {
    /// Writes the vault (or the entries under `--prefix`) as a KDBX 4 database at `--out`, under a
    /// new password (`--new-password-file`/`-fd`, else asked twice on the terminal) and/or a key
    /// file (`--new-keyfile`). Argon2id at vaultfile's defaults (64 MiB, t = 3, p = 4) unless the
    /// KDF options say otherwise: never the vault's own settings, which may be PBKDF2 or weakened
    /// on purpose (`--allow-weak-kdf`) and would silently carry over to a file meant to travel.
    func exportKDBX(to path: String, target: PlaintextOutput) throws {
        let limits = try unlock.limits()
        let parameters: Argon2idParameters
        switch kdf.isSpecified ? try kdf.parameters(within: limits) : .argon2id(.defaults) {
        case .argon2id(let chosen): parameters = chosen
        case .pbkdf2SHA256:
            throw CLIError.invalidArgument("a KDBX database derives its key with Argon2 or AES-KDF; --kdf pbkdf2 cannot apply (leave out --kdf, or give argon2id)")
        }
        var keyFileKey: SecureBytes?
        if let newKeyFile { keyFileKey = try KDBXKeyFileInput.key(newKeyFile, refuseEmpty: true) }
        // Read before the vault opens (a missing file fails before any KDF), as passwd does.
        var password: SecureBytes?
        if let newPasswordFile { password = try PasswordSource.file(newPasswordFile).read(prompt: "") }
        if let newPasswordFD { password = try PasswordSource.descriptor(newPasswordFD).read(prompt: "") }
        if let given = password, given.count == 0 { throw CLIError.emptyPassword }
        let vault = try unlock.open().vault
        if password == nil && !noNewPassword {
            let typed: SecureBytes
            do { typed = try Terminal.readNewSecret(prompt: "Password for the KeePass database \(path): ", confirm: "Repeat the password: ") } catch {
                guard case .noPasswordSource = error else { throw error }
                throw CLIError.noForeignPasswordSource(what: "the KeePass database \(path)",
                                                       options: "--new-password-file FILE or --new-password-fd N, or protect it with a key file alone: --new-keyfile FILE --no-new-password")
            }
            guard typed.count > 0 else { throw CLIError.emptyPassword }
            password = typed
        }
        if let password { PasswordAdvice.warnIfWeak(password, typed: newPasswordFile == nil && newPasswordFD == nil) }
        let written = try KDBXWriter.prepare(vault, prefix: prefix ?? "", credentials: KDBXCredentials(password: password, keyFileKey: keyFileKey),
                                             parameters: parameters)
        // Each block goes to the file as it is made (atomically still: a temporary file beside, synced, renamed).
        try target.write { (output) throws(VaultError) in try written.write { (piece) throws(VaultError) in try output.write(piece) } }
        for loss in written.losses { Messages.warning("kdbx: \(loss.description)") }
        Messages.info("exported \(ChangeReport.entries(written.entries)) to \(path) (KDBX 4, Argon2id \(parameters.memoryKiB / 1024) MiB, "
                      + "t=\(parameters.iterations), p=\(parameters.parallelism), ChaCha20)")
        if json {
            try StandardOutput.line(JSON.object([
                ("path", .string(path)), ("format", .string("kdbx")), ("prefix", prefix.map(JSON.string) ?? .null),
                ("exported", .int(Int64(written.entries))), ("skipped", .array([])), ("not_carried", Self.notCarriedJSON(written.losses)),
            ]).text)
        }
    }
}
