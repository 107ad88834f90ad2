import ArgumentParser
import VaultFormat
import VaultModel

extension VaultfileCommand {
    /// Prints the current TOTP code (RFC 6238) of an entry's `otpauth://totp/` URI.
    struct Totp: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "totp",
            abstract: "Print the current TOTP code of an entry.",
            discussion: """
                The URI is read from the entry's 'totp' field, else its 'otp' field, else its value if that \
                is an otpauth://totp/ URI (store one with 'set NAME --totp'). Nothing is added when stdout \
                is not a terminal; on a terminal a newline follows the code.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.") var name: String
        // Unconditional: '--at -1' reaches the check in run() instead of reading as an unknown option -1.
        @Option(name: .customLong("at"), parsing: .unconditional,
                help: ArgumentHelp("The code at this time (seconds since 1970) instead of now.", valueName: "unix-time"))
        var time: Int64?
        @Flag(name: .customLong("json"), help: "Print {\"code\":…,\"period\":…,\"seconds_left\":…} and a newline.") var json = false
        @OptionGroup var clipboard: ClipboardOptions

        func validate() throws {
            try validateEntryArguments(name: name, field: nil)
        }

        func run() throws {
            if let time, time < 0 { throw CLIError.invalidArgument("--at takes a time of 0 or more (seconds since 1970), not \(time)") }
            let parameters = try unlock.open(entriesOnly: true).vault.totpParameters(of: name)
            let (code, secondsLeft) = try OneTimePassword.totp(parameters, at: time ?? currentTimeMilliseconds() / 1000)
            if clipboard.clip {
                let clearAfter = try Clipboard.clearAfter(clipboard.clearAfter)
                Messages.info(try Array(code.utf8).withUnsafeBytes { try Clipboard.copy($0, clearAfter: clearAfter) })
                return
            }
            if json {
                let object = JSON.object([("code", .string(code)), ("period", .int(Int64(parameters.period))),
                                          ("seconds_left", .int(Int64(secondsLeft)))])
                try StandardOutput.line(object.text)
                return
            }
            try StandardOutput.write(Array(code.utf8))
            if StandardOutput.isTerminal { try StandardOutput.write([0x0A]) }
        }
    }
}
