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
        @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file.", valueName: "file"))
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
            // Without KDF options the vault keeps its current settings.
            let requested = kdf.isSpecified ? try kdf.parameters() : nil
            // A new password from a file or descriptor is read first (a missing file fails before
            // the KDF runs); one typed at the terminal is asked for only once the old password has
            // opened the vault, so a wrong old password fails before anyone types a new one twice.
            let given = try givenNewPassword()
            if let given, given.count == 0 { throw CLIError.emptyPassword }
            let old = try unlock.password()
            let parameters = try store.changePassword(from: old, kdf: requested, limits: try unlock.limits(),
                                                      willDeriveKey: UnlockOptions.announce) {
                if let given { return given }
                let typed = try Terminal.readNewSecret(prompt: "New password for \(store.path): ", confirm: "Repeat the new password: ")
                guard typed.count > 0 else { throw CLIError.emptyPassword }
                return typed
            }
            Messages.info("password changed for \(store.path) (\(parameters)); the file key was rotated")
        }

        /// The new password from --new-password-file or --new-password-fd; nil when it is to be typed.
        private func givenNewPassword() throws -> SecureBytes? {
            if let newPasswordFile { return try PasswordSource.file(newPasswordFile).read(prompt: "") }
            if let newPasswordFD { return try PasswordSource.descriptor(newPasswordFD).read(prompt: "") }
            return nil
        }
    }
}
