#if canImport(Glibc)
import Glibc
#endif

// MARK: - The names the binary answers to

/// The programs the vaultfile binary also is, by the name it was started as (a link of that name
/// to it, installed by `make install` and the .deb): the one table of them. Each runs with the
/// arguments after its name and returns the exit status; any other name is vaultfile itself.
///
/// `firstArgument`: a prefix of the first argument that selects the program under any name, for
/// clients that resolve the link before starting it (rage and pyrage start the link's target, so
/// `argv[0]` says `vaultfile`): `vaultfile --age-plugin=identity-v1` is the age plugin.
enum LinkedNames {
    /// The name (the last component of `argv[0]`), the first argument's prefix, and what runs.
    static let table: [(name: String, firstArgument: String?, run: @Sendable ([String]) -> Int32)] = [
        ("age-plugin-vaultfile", "--age-plugin=", AgePlugin.main),
    ]

    /// What runs for a process started as `program` with `arguments`, or nil for vaultfile itself.
    static func handler(for program: String, arguments: ArraySlice<String>) -> (@Sendable ([String]) -> Int32)? {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        return table.first { row in
            row.name == name || row.firstArgument.map { prefix in arguments.first?.hasPrefix(prefix) == true } == true
        }?.run
    }
}
