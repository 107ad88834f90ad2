import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Lists entry names, sorted, one per line, or as JSON.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List entry names, sorted, one per line.",
            discussion: """
                A prefix matches whole path segments: 'list prod' prints prod and the names under prod/, not \
                production/… (a prefix ending in / prints the names under it). With --json: an array of \
                {name, fields, created, modified}; times are RFC 3339 UTC. No values are printed.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Only this name and the names under it, e.g. prod or prod/.") var prefix: String?
        @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

        func run() throws {
            let vault = try unlock.open().vault
            if json {
                let items: [JSON] = vault.names(under: prefix ?? "").map { name in
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
                Self.apply(to: vault, prefix: prefix, output: &out)
                try StandardOutput.write(out)
            }
        }

        /// Appends the names of `vault` at or under `prefix` (whole path segments, `Vault.names(under:)`),
        /// one per line; the one path of `list` without --json, on the command line and in `batch`.
        static func apply(to vault: Vault, prefix: String?, output: inout [UInt8]) {
            for name in vault.names(under: prefix ?? "") {
                output.append(contentsOf: name.utf8)
                output.append(0x0A)
            }
        }
    }
}
