import ArgumentParser
import VaultInterchange

// MARK: - export --format

/// What `export --format` names. Its help and completion list only the formats export writes
/// (`InterchangeFormat.canExport`); an import-only format still reads, so that `validate()` can say
/// it is one and name those export writes.
struct ExportFormatChoice: ExpressibleByArgument {
    /// The format named.
    let format: InterchangeFormat

    init?(argument: String) {
        guard let format = InterchangeFormat(rawValue: argument) else { return nil }
        self.format = format
    }

    static var allValueStrings: [String] { InterchangeFormat.allCases.filter(\.canExport).map(\.rawValue) }

    /// Shell completion offers the formats export writes.
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
