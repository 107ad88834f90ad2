import ArgumentParser
import KDF
import SecureMemory
import VaultFormat
import VaultModel
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

                In a vault of format 1.1 (several keyslots) only the password slot that opened the vault \
                changes; every other slot is re-wrapped to the new file key. A slot that cannot be \
                re-wrapped without its own secret (a v1 password slot that did not open the vault, a kind \
                this vaultfile does not know) stops the command (exit 2, naming it) unless dropped with \
                --drop-slot ID. In a vault of format 1.0 the new password replaces every keyslot, as before.
                """)

        @OptionGroup var unlock: UnlockOptions
        @OptionGroup var kdf: KDFOptions
        @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file.", valueName: "file"), completion: .file())
        var newPasswordFile: String?
        @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("Read the new password from this descriptor.", valueName: "n"))
        var newPasswordFD: Int32?
        @Option(name: .customLong("drop-slot"), help: ArgumentHelp(
            "In a format 1.1 vault, drop this slot if it cannot be re-wrapped (repeatable); its holder loses access.", valueName: "id"))
        var dropSlots: [Int] = []

        func validate() throws {
            if newPasswordFile != nil && newPasswordFD != nil {
                throw ValidationError("give at most one of --new-password-file and --new-password-fd")
            }
        }

        func run() throws {
            let path = unlock.location.path
            var requested: KDFParameters?
            var given: SecureBytes?
            // Even while an agent holds the file key, changing who can open the vault takes a
            // slot's secret (`replaceKeys` never asks the agent); the agent gets the new key after.
            try unlock.replaceKeys(beforeUnlock: {
                // Without KDF options the vault keeps its current settings.
                requested = kdf.isSpecified ? try kdf.parameters(within: unlock.limits()) : nil
                // A new password from a file or descriptor is read first (a missing file fails before
                // the KDF runs); one typed at the terminal is asked for only once the old credentials
                // have opened the vault (under the lock), so a wrong old password fails before anyone
                // types a new one twice.
                given = try givenNewPassword()
                if let given, given.count == 0 { throw CLIError.emptyPassword }
            }, { unlocked -> (vault: UnlockedVault, result: KDFParameters) in
                let new: SecureBytes
                if let given {
                    new = given
                } else {
                    new = try Terminal.readNewSecret(prompt: "New password for \(path): ", confirm: "Repeat the new password: ")
                    guard new.count > 0 else { throw CLIError.emptyPassword }
                }
                PasswordAdvice.warnIfWeak(new, typed: given == nil)
                let opened = unlocked.openedSlot.flatMap { unlocked.slots[$0.index].kdf }
                let parameters = requested ?? opened ?? unlocked.passwordKDF ?? .defaults
                guard unlocked.header.usesKeyslots11 else {
                    // Format 1.0: one new v1 password slot in place of all of them, as 0.1.0 does.
                    return (try unlocked.changePassword(to: new, kdf: parameters), parameters)
                }
                let next = try unlocked.rotated(dropping: Swift.Set(dropSlots), newPassword: (new, parameters), now: currentTimeMilliseconds())
                return (next.vault, parameters)
            }, then: { parameters in
                Messages.info("password changed for \(path) (\(parameters)); the file key was rotated")
            })
        }

        /// The new password from --new-password-file or --new-password-fd; nil when it is to be typed.
        private func givenNewPassword() throws -> SecureBytes? {
            if let newPasswordFile { return try PasswordSource.file(newPasswordFile).read(prompt: "") }
            if let newPasswordFD { return try PasswordSource.descriptor(newPasswordFD).read(prompt: "") }
            return nil
        }
    }
}
