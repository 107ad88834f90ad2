import ArgumentParser
import VaultModel

// MARK: - Names a command creates

extension Vault {
    /// Throws unless `name` may name an entry this command creates: a name the vault holds already
    /// passes; a new one must follow `EntryName.validateNew(_:)`, whose format characters
    /// (docs/FORMAT.md §7) `--allow-format-characters` lets through.
    func checkNewName(_ name: String, allowingFormatCharacters: Bool) throws {
        _ = try EntryName.validate(name)  // the rules of every name, reported as everywhere else
        guard !allowingFormatCharacters else { return }
        do {
            try checkNewName(name)
        } catch {
            throw CLIError.refused(error.description, hint: "pass --allow-format-characters to create it all the same")
        }
    }
}

/// The flag that lets a new name hold format characters, shared by set, mv, cp and import.
struct FormatCharacterOption: ParsableArguments {
    @Flag(name: Table.allowFormatCharacters.long,
          help: "Let a new name hold bidi controls or invisible format characters (refused otherwise).")
    var allowFormatCharacters = false
}

extension FormatCharacterOption: QuickOptionGroup {
    /// The option of `FormatCharacterOption`: named by its declaration and by the quick reading.
    enum Table: String, QuickOptionTable {
        case allowFormatCharacters = "allow-format-characters"

        var kind: OptionKind { .flag }

        func read(from arguments: inout QuickArguments, into option: inout FormatCharacterOption) {
            switch self {
            case .allowFormatCharacters: option.allowFormatCharacters = arguments.flag(self)
            }
        }
    }
}
