import ArgumentParser
import KDF
import VaultModel

// MARK: - History settings

/// `--keep-history N` and `--history-bytes SIZE`, for `init` and `history`: how much of each
/// entry's past a vault keeps (stored in the vault, docs/FORMAT.md §7.1). 0 turns history off.
struct HistoryOptions: ParsableArguments {
    @Option(name: .customLong("keep-history"), help: ArgumentHelp(
        "Keep this many earlier versions of each entry (default 10; 0 turns history off, and older releases read the vault).", valueName: "n"))
    var keepHistory: Int?
    @Option(name: .customLong("history-bytes"), help: ArgumentHelp(
        "Keep at most this many bytes of earlier versions per entry, e.g. 1M (default; 0 turns history off).", valueName: "size"))
    var historyBytes: String?

    func validate() throws {
        if let keepHistory, !(0...HistoryPolicy.versionsRange.upperBound).contains(keepHistory) {
            throw ValidationError("--keep-history takes 0 to \(HistoryPolicy.versionsRange.upperBound), not \(keepHistory)")
        }
        if let historyBytes {
            guard let bytes = ByteSize.parse(historyBytes), bytes <= UInt64(HistoryPolicy.byteBudgetRange.upperBound) else {
                throw ValidationError("--history-bytes takes a size such as 1M, at most 4G - 1, not '\(historyBytes)'")
            }
        }
    }
}

// MARK: - The quick reading (QuickArguments.swift)

extension HistoryOptions {
    /// What these options add to a verb's quick grammar.
    static let quickGrammar = QuickArguments.Grammar(options: ["keep-history", "history-bytes"])

    /// These options read from a plain command line, as ArgumentParser reads them; declines when
    /// a value does not read or `validate()` fails.
    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        options.keepHistory = try arguments.value("keep-history")
        options.historyBytes = arguments.string("history-bytes")
        try QuickArguments.validate(options)
        return options
    }
}
