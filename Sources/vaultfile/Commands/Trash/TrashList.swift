import ArgumentParser
import VaultModel

/// `vaultfile trash list`: the removed entries, most recently removed first.
struct TrashList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the removed entries, most recently removed first, with when and how many versions are kept.")

    @OptionGroup var unlock: UnlockOptions
    @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

    func run() throws {
        let trashed = try unlock.open().vault.trash()
        if json {
            try StandardOutput.line(JSON.array(trashed.map { item in
                .object([("name", .string(item.name)), ("removed", .string(timestamp(milliseconds: item.removed))),
                         ("versions", .int(Int64(item.versions.count)))])
            }).text)
            return
        }
        for item in trashed {
            let versions = item.versions.count == 1 ? "1 version" : "\(item.versions.count) versions"
            try StandardOutput.line("\(item.name)  removed \(timestamp(milliseconds: item.removed))  \(versions)")
        }
    }
}
