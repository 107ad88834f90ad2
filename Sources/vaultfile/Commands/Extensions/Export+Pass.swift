import ArgumentParser
import SecureMemory
import VaultInterchange

// MARK: - export --format pass

extension VaultfileCommand.Export {
    /// The options `--format pass` takes: `--out DIR` (a folder, not `-`), `--gpg-id`, `--prefix`,
    /// `--overwrite`, `--json`; none of the file formats' own.
    func validatePassStore() throws {
        guard let output, output != "-", !output.isEmpty else {
            throw ValidationError("--format pass writes a store folder: give --out DIR (a new or empty folder)")
        }
        let fileOnly = newPasswordFile != nil || newPasswordFD != nil || newKeyFile != nil || noNewPassword || kdf.isSpecified
        if fileOnly { throw ValidationError("--new-password-file, --new-password-fd, --new-keyfile, --no-new-password and the --kdf options go with --format kdbx") }
        if withHistory { throw ValidationError("--with-history goes with --format json, the one format that carries history") }
        if force { throw ValidationError("--force goes with an export to the terminal; --format pass writes a folder") }
        for id in gpgIDs where !GPGEncryption.isKeyID(id) {
            throw ValidationError("--gpg-id '\(Messages.escaped(id))' is not a gpg key id (an id, fingerprint or email, not starting with '-', no control characters)")
        }
    }

    /// Writes the entries under `--prefix` as a pass store at `directory`, each file encrypted by
    /// the user's gpg to the key ids (`--gpg-id`, else the store's `.gpg-id`), the whole store
    /// renamed into place at the end (`PassStoreFolder`).
    func exportPassStore(to directory: String) throws {
        let folder = try PassStoreFolder(directory)
        let existing = try folder.existing()
        var recipients = gpgIDs
        var replacing = false
        switch existing {
        case .nothing, .emptyFolder: break
        case .otherFolder:
            throw CLIError.refused("\(directory) holds files and is not a pass store (no .gpg-id); refusing to replace it",
                                   hint: "name a new or empty folder")
        case .store(let ids):
            guard overwrite else {
                throw CLIError.refused("\(directory) is a pass store already; refusing to replace it",
                                       hint: "pass --overwrite to replace it whole (its .git folder is kept), or name a new folder")
            }
            replacing = true
            if recipients.isEmpty { recipients = ids.filter(GPGEncryption.isKeyID) }
        }
        guard !recipients.isEmpty else {
            throw CLIError.refused("no gpg key to encrypt the store to", hint: "name your key with --gpg-id ID (repeatable), as 'pass init ID' takes it")
        }
        let vault = try unlock.open().vault
        var export = PassStoreExport(vault, prefix: prefix ?? "")
        // An entry under .git/ or .extensions/ would be written among the store's own files (att57, H1).
        let reserved = PassStoreFolder.entriesTakingReservedNames(export.names)
        guard reserved.isEmpty else {
            let shown = reserved.prefix(5).map { "'\(Messages.escaped($0))'" }.joined(separator: ", ") + (reserved.count > 5 ? ", …" : "")
            throw CLIError.refused(
                "\(ChangeReport.entries(reserved.count)) would be written among the pass store's own files "
                    + "(a folder named \(PassStoreFolder.reservedAtTop.joined(separator: ", ")) at the top, or .gpg-id anywhere): \(shown); nothing was written",
                hint: "rename them (vaultfile mv OLD NEW), or leave them out with --prefix")
        }
        try folder.begin()
        for name in export.names {
            guard var plaintext = export.contents(of: name) else { continue }
            defer { wipe(&plaintext) }
            let ciphertext = try GPGEncryption.encrypt(plaintext, to: recipients, entry: name)
            try folder.write(ciphertext, at: PassStoreExport.path(of: name))
        }
        try folder.write(Array(recipients.map { $0 + "\n" }.joined().utf8), at: [".gpg-id"])
        try folder.commit(replacing: replacing)
        for loss in export.losses { Messages.warning("pass: \(loss.description)") }
        Messages.info("exported \(ChangeReport.entries(export.names.count)) to the pass store \(directory) (encrypted to \(recipients.joined(separator: ", ")))")
        if json {
            try StandardOutput.line(JSON.object([
                ("path", .string(directory)), ("format", .string("pass")), ("prefix", prefix.map(JSON.string) ?? .null),
                ("exported", .int(Int64(export.names.count))), ("skipped", .array([])), ("not_carried", Self.notCarriedJSON(export.losses)),
            ]).text)
        }
    }
}
