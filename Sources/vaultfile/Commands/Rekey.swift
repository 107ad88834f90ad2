import ArgumentParser
import VaultModel

extension VaultfileCommand {
    /// `vaultfile rekey`: a new file key for every keyslot.
    struct Rekey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rekey",
            abstract: "Rotate the file key: re-encrypt everything and re-wrap every keyslot (the one that opened the vault gets a fresh salt).",
            discussion: """
                For after a member left or a secret may have leaked: whoever kept the old file key (or a \
                public key of the slot that opens the vault now) cannot use it on the new file. Copies of \
                the old file still open as before. A slot that cannot be re-wrapped without its own secret \
                (a v1 password slot that did not open the vault, a kind this vaultfile does not know) stops \
                the command (exit 2) unless dropped with --drop-slot ID. A vault of format 1.0 stays 1.0.

                --sign makes the vault signed from then on (format 1.3): it converts a v1 password slot \
                that opened it, rotates the key, and has the slot that opened it attest every slot. \
                vaultfile 0.2.0 and older then refuse the vault. Only a slot's secret can do this (a \
                password, --identity, --keyfile or --recovery), not the agent's key.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("drop-slot"), help: ArgumentHelp(
            "Drop this slot if it cannot be re-wrapped (repeatable); its holder loses access.", valueName: "id"))
        var dropSlots: [Int] = []
        @Flag(name: .customLong("sign"), help: "Make the vault signed from then on (format 1.3); vaultfile 0.2.0 and older then refuse it.")
        var sign = false

        func run() throws {
            try Rotation.run(unlock, dropping: dropSlots, removing: [], sign: sign)
        }
    }
}
