import ArgumentParser
import VaultInterchange

// MARK: - export --format

/// What `export --format` names: a format of one file, or `pass`, a store folder. Its help and
/// completion list only what export writes (`InterchangeFormat.canExport`, and `pass`); an
/// import-only format still reads, so that `validate()` can say it is one and name those export writes.
struct ExportFormatChoice: ExpressibleByArgument {
    /// The format of one file named; nil for `pass`.
    let format: InterchangeFormat?

    /// The name of the pass store "format" (a folder, not an `InterchangeFormat`).
    static let passStore = "pass"

    init?(argument: String) {
        if argument == Self.passStore { format = nil; return }
        guard let format = InterchangeFormat(rawValue: argument) else { return nil }
        self.format = format
    }

    /// Whether `pass` (a store folder) was named.
    var isPassStore: Bool { format == nil }

    /// The name given.
    var name: String { format?.rawValue ?? Self.passStore }

    /// vaultfile's own formats first, then the peers'.
    static var allValueStrings: [String] {
        let order: [InterchangeFormat] = [.json, .dotenv, .csv, .kdbx, .keepassXML, .bitwardenJSON]
        return (order + InterchangeFormat.allCases.filter { $0.canExport && !order.contains($0) }).map(\.rawValue) + [passStore]
    }

    /// The list a message names.
    static var writtenList: String { allValueStrings.dropLast().joined(separator: ", ") + " or " + allValueStrings.last! }

    /// Shell completion offers the formats export writes.
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
