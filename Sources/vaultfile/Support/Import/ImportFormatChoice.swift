import ArgumentParser
import VaultInterchange

// MARK: - import --format

/// What `import --format` names: a format, or `auto` (also the default): told from the content.
enum ImportFormatChoice: Equatable, ExpressibleByArgument {
    case format(InterchangeFormat)
    /// Detected from the content (`FormatSniffer`), or from a store folder's marker file.
    case auto
    /// A folder format no `InterchangeFormat` names (a directory reader's, `DirectoryImportReaders`).
    case directory(String)

    init?(argument: String) {
        if argument == "auto" { self = .auto; return }
        if let format = InterchangeFormat(rawValue: argument) { self = .format(format); return }
        guard DirectoryImportReaders.reader(for: argument) != nil else { return nil }
        self = .directory(argument)
    }

    static var allValueStrings: [String] {
        InterchangeFormat.allCases.map(\.rawValue) + DirectoryImportReaders.all.flatMap { $0.formats }.filter { InterchangeFormat(rawValue: $0) == nil } + ["auto"]
    }

    /// Shell completion offers every name `allValueStrings` gives.
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }

    /// The `--format` name.
    var name: String {
        switch self {
        case .format(let format): return format.rawValue
        case .auto: return "auto"
        case .directory(let name): return name
        }
    }
}
