#if canImport(Glibc)
import Glibc
#endif

// MARK: - The names the binary answers to

/// The programs the vaultfile binary also is, by the name it was started as (a link of that name
/// to it, installed by `make install` and the .deb): the one table of them. Each runs with the
/// arguments after its name and returns the exit status; any other name is vaultfile itself.
enum LinkedNames {
    /// The name (the last component of `argv[0]`) and what runs.
    static let table: [(name: String, run: @Sendable ([String]) -> Int32)] = [
        ("age-plugin-vaultfile", AgePlugin.main),
    ]

    /// What runs for a process started as `program`, or nil for vaultfile itself.
    static func handler(for program: String) -> (@Sendable ([String]) -> Int32)? {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        return table.first { $0.name == name }?.run
    }
}
