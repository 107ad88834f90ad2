import ArgumentParser
import VaultFormat
import VaultInterchange
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
                help: ArgumentHelp("The code at this time (seconds since 1970, or ISO 8601: 2026-11-27T08:00:00Z) instead of now.",
                                   valueName: "time"))
        var time: String?
        @Flag(name: .customLong("json"), help: "Print {\"code\":…,\"period\":…,\"seconds_left\":…} and a newline.") var json = false
        @OptionGroup var clipboard: ClipboardOptions

        func validate() throws {
            try validateEntryArguments(name: name, field: nil)
        }

        func run() throws {
            let seconds = try time.map(Self.seconds(at:)) ?? currentTimeMilliseconds() / 1000
            let parameters = try unlock.open(entriesOnly: true).vault.totpParameters(of: name)
            let (code, secondsLeft) = try OneTimePassword.totp(parameters, at: seconds)
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

        /// The seconds since 1970 `--at` names: digits, or an ISO 8601 / RFC 3339 time
        /// (`2026-11-27T08:00:00Z`, `2026-11-27 09:00:00+01:00`, a fraction dropped; no zone is UTC)
        /// or a date alone (its midnight, UTC). Before 1970, or a day the month does not have, is refused.
        static func seconds(at text: String) throws(CLIError) -> Int64 {
            let example = "seconds since 1970 or an ISO 8601 time such as 2026-11-27T08:00:00Z"
            if let seconds = Int64(text) {
                guard seconds >= 0 else { throw .invalidArgument("--at takes a time of 0 or more (seconds since 1970), not \(seconds)") }
                return seconds
            }
            let dateOnly = text.utf8.count == 10 && text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) }
            guard let milliseconds = Timestamps.parse(dateOnly ? text + "T00:00:00Z" : text) else {
                let why = dayTheMonthLacks(text).map { " (\($0) has no day \($1))" } ?? ""
                throw .invalidArgument("--at takes \(example), not '\(Messages.escaped(text))'\(why)")
            }
            guard milliseconds >= 0 else { throw .invalidArgument("--at takes a time from 1970 on, not '\(Messages.escaped(text))'") }
            return milliseconds / 1000
        }

        /// The month ("2023-02") and the day of a text starting with a date whose month is real
        /// but lacks that day (2023-02-29, 2024-04-31); nil for any other text.
        static func dayTheMonthLacks(_ text: String) -> (month: String, day: Int)? {
            let head = Array(text.utf8.prefix(10))
            guard head.count == 10, head[4] == UInt8(ascii: "-"), head[7] == UInt8(ascii: "-") else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                let digits = head[range]
                guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
                return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
                  (1...12).contains(month), (1...31).contains(day) else { return nil }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            return day > days ? (String(decoding: head[0..<7], as: UTF8.self), day) : nil
        }
    }
}
