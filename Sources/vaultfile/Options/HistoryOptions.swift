import ArgumentParser
import KDF
import VaultModel

// MARK: - History settings

/// `--keep-history N` and `--history-bytes SIZE`, for `init` and `history`: how much of each
/// entry's past a vault keeps (stored in the vault, docs/FORMAT.md §7.1). 0 turns history off.
struct HistoryOptions: ParsableArguments {
    @Option(name: Table.keepHistory.long, help: ArgumentHelp(
        "Keep this many earlier versions of each entry (default 10; 0 turns history off, and older releases read the vault).", valueName: "n"))
    var keepHistory: Int?
    @Option(name: Table.historyBytes.long, help: ArgumentHelp(
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

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension HistoryOptions: QuickOptionGroup {
    /// The options of `HistoryOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case keepHistory = "keep-history", historyBytes = "history-bytes"

        var kind: OptionKind { .option }

        func read(from arguments: inout QuickArguments, into options: inout HistoryOptions) throws(QuickArguments.Declined) {
            switch self {
            case .keepHistory: options.keepHistory = try arguments.value(self)
            case .historyBytes: options.historyBytes = arguments.string(self)
            }
        }
    }
}
