import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Lists entry names, sorted, one per line, or as JSON.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List entry names, sorted, one per line.",
            discussion: "With --json: an array of {name, fields, created, modified}; times are RFC 3339 UTC. No values are printed.")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Only names that start with this prefix, e.g. prod/.", completion: EntryCompletion.names) var prefix: String?
        @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

        func run() throws {
            let vault = try unlock.open().vault
            let names = vault.names(withPrefix: prefix ?? "")
            if json {
                let items: [JSON] = names.map { name in
                    let entry = vault.entry(name)!
                    return .object([
                        ("name", .string(name)),
                        ("fields", .array(entry.fields.keys.sorted().map { .string($0) })),
                        ("created", .string(timestamp(milliseconds: entry.created))),
                        ("modified", .string(timestamp(milliseconds: entry.modified))),
                    ])
                }
                try StandardOutput.line(JSON.array(items).text)
            } else {
                var out = [UInt8]()
                for name in names {
                    out.append(contentsOf: name.utf8)
                    out.append(0x0A)
                }
                try StandardOutput.write(out)
            }
        }
    }
}
