import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Lists entry names, sorted, one per line, or as JSON.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List entry names, sorted, one per line.",
            discussion: """
                A prefix matches whole path segments: 'list prod' prints prod and the names under prod/, not \
                production/… (a prefix ending in / prints the names under it). With --json: an array of \
                {name, fields, created, modified}; times are RFC 3339 UTC. No values are printed. \
                On a terminal, bidi controls and invisible characters in names are shown as \\u{XXXX}; piped, names are \
                printed byte for byte.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Only this name and the names under it, e.g. prod or prod/.", completion: EntryCompletion.names) var prefix: String?
        @Flag(name: Table.json.long, help: "Print JSON for scripts.") var json = false

        func run() throws {
            let vault = try unlock.open(entriesOnly: true).vault
            if json {
                // Written as it is read: the array of {name, fields, created, modified}, byte for byte
                // what `JSON.text` gives, through one buffer (no tree of values, no whole text).
                let out = BufferedOutput()
                out.append(UInt8(ascii: "["))
                var first = true
                vault.forEachSummary(atOrUnder: prefix ?? "") { entry in
                    out.append(first ? "{\"name\":" : ",{\"name\":")
                    first = false
                    out.appendJSONString(entry.name)
                    out.append(",\"fields\":[")
                    for (index, field) in entry.fieldNames.sorted().enumerated() {
                        if index > 0 { out.append(UInt8(ascii: ",")) }
                        out.appendJSONString(field)
                    }
                    out.append("],\"created\":\"")
                    out.appendTimestamp(milliseconds: entry.created)
                    out.append("\",\"modified\":\"")
                    out.appendTimestamp(milliseconds: entry.modified)
                    out.append("\"}")
                }
                out.append("]\n")
                try out.finish()
            } else {
                // Names are data: piped, their bytes as they are; on a terminal, bidi controls and
                // invisible characters are shown escaped (\u{202E}) so a name cannot disguise itself.
                let escaping = StandardOutput.isTerminal
                var out = [UInt8]()
                Self.apply(to: vault, prefix: prefix, output: &out, escaping: escaping)
                try StandardOutput.write(out)
            }
        }

        /// Appends the names of `vault` at or under `prefix` (whole path segments, `Vault.names(atOrUnder:)`),
        /// one per line; the one path of `list` without --json, on the command line and in `batch`.
        static func apply(to vault: Vault, prefix: String?, output: inout [UInt8], escaping: Bool = false) {
            for name in vault.names(atOrUnder: prefix ?? "") {
                output.append(contentsOf: (escaping ? EntryName.escapingFormatCharacters(name) : name).utf8)
                output.append(0x0A)
            }
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.List {
    /// `list`'s own options (the unlock options have their own tables).
    enum Table: String, QuickOptionTable {
        case json

        var kind: OptionKind { .flag }

        func read(from arguments: inout QuickArguments, into list: inout VaultfileCommand.List) {
            switch self {
            case .json: list.json = arguments.flag(self)
            }
        }
    }

    /// What `list` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, optionalPositionals: 1).adding(UnlockOptions.quickGrammar)

    /// `list` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var list = Self()
            list.unlock = try UnlockOptions.quick(&arguments)
            list.prefix = arguments.optionalPositional()
            try arguments.read(Table.self, into: &list)
            return list
        }
    }
}
