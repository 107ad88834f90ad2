import ArgumentParser
import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Changes the password and rotates the file key.
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd",
            abstract: "Change the password (and optionally the KDF settings); rotates the file key.",
            discussion: """
                Everything is re-encrypted under a new file key: an old copy of the vault (in git history, \
                say) still opens with the old password, but never yields the new key. Without KDF options \
                the current settings are kept.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions
        @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file.", valueName: "file"), completion: .file())
        var newPasswordFile: String?
        @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("Read the new password from this descriptor.", valueName: "n"))
        var newPasswordFD: Int32?

        func validate() throws {
            if newPasswordFile != nil && newPasswordFD != nil {
                throw ValidationError("give at most one of --new-password-file and --new-password-fd")
            }
        }

        func run() throws {
            let store = unlock.location.store
            let rollback = try unlock.rollbackCheck()
            // Without KDF options the vault keeps its current settings.
            let requested = kdf.isSpecified ? try kdf.parameters() : nil
            let old = try unlock.password()
            let new: SecureBytes
            if let newPasswordFile {
                new = try PasswordSource.file(newPasswordFile).read(prompt: "")
            } else if let newPasswordFD {
                new = try PasswordSource.descriptor(newPasswordFD).read(prompt: "")
            } else {
                new = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the new password: ")
            }
            guard new.count > 0 else { throw CLIError.emptyPassword }
            defer { UnlockOptions.report(rollback) }
            PasswordAdvice.warnIfWeak(new, typed: newPasswordFile == nil && newPasswordFD == nil)
            let parameters = try store.changePassword(from: old, to: new, kdf: requested, limits: try unlock.limits(),
                                                      willDeriveKey: UnlockOptions.announce, rollback: rollback)
            Messages.info("password changed for \(store.path) (\(parameters)); the file key was rotated")
        }
    }
}
