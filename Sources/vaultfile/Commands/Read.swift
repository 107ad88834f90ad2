import ArgumentParser
import VaultFormat
import VaultInterchange
import VaultModel

extension VaultfileCommand {
    /// Prints the one value a `vf://NAME#FIELD` reference names, as `op read` does for `op://`.
    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Print the value a reference names: vf://NAME, vf://NAME#FIELD or vf-totp://NAME.",
            discussion: """
                The reference grammar of inject's templates: the name runs to the first '#', the field follows \
                it. '##' in a name stands for one '#' (vf://a##b#user is the field user of 'a#b'), and a '#' \
                with nothing after it ends the name (vf://name #  keeps the trailing blank of 'name '). \
                vf-totp://NAME prints the current code. The bytes are written as get writes them: exactly, \
                to a pipe or file; on a terminal only text, with a final newline. A reference to a missing \
                entry or field exits 1, naming the reference.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: ArgumentHelp("The reference, e.g. 'vf://db/prod#username' (quote it in a shell).", valueName: "reference"),
                  completion: EntryCompletion.references)
        var reference: String
        @Flag(name: .customLong("force"), help: "Write a binary value to a terminal all the same.") var force = false

        func validate() throws {
            guard SecretReference.parse(reference) != nil else {
                throw ValidationError("'\(reference)' is not a reference: write vf://NAME, vf://NAME#FIELD or vf-totp://NAME")
            }
        }

        func run() throws {
            guard let parsed = SecretReference.parse(reference) else { return }
            let vault = try unlock.open(entriesOnly: true).vault
            do {
                if parsed.isTOTP {
                    let code = try OneTimePassword.totp(vault.totpParameters(of: parsed.name), at: currentTimeMilliseconds() / 1000).code
                    try StandardOutput.write(Array((code + (StandardOutput.isTerminal ? "\n" : "")).utf8))
                    return
                }
                try vault.withValue(of: parsed.name, part: parsed.part, write)
            } catch let error as VaultError {
                switch error {
                case .entryNotFound, .fieldNotFound:
                    throw CLIError.referenceNotFound(reference: parsed.text, why: error.description, place: nil)
                default: throw error
                }
            }
        }

        /// Writes `bytes` as `get` does: as they are to a pipe or file; on a terminal only text, with a final newline.
        private func write(_ bytes: UnsafeRawBufferPointer) throws {
            guard StandardOutput.isTerminal else { return try StandardOutput.write(bytes) }
            let parsed = SecretReference.parse(reference)
            guard force || Get.isText(bytes) else { throw CLIError.binaryOnTerminal(name: parsed?.name ?? reference, field: parsed?.field) }
            try StandardOutput.write(bytes)
            if bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
        }
    }
}
