#if canImport(Glibc)
import Glibc
#endif

// MARK: - The names the binary answers to

/// The names the vaultfile binary also answers to, by the name it was started as (a link of that
/// name to it, installed beside `vaultfile` by `make install` and the .deb, scripts/install.sh's
/// `links`): the one table of them. A name either is another program (the age plugin speaks its own
/// protocol and returns its exit status) or stands for a verb of vaultfile's
/// (`git-credential-vaultfile ARGUMENTS…` runs `vaultfile git credential ARGUMENTS…`).
///
/// `firstArgument`: a prefix of the first argument that selects the row under any name, for clients
/// that resolve the link before starting it (rage and pyrage start the link's target, so `argv[0]`
/// says `vaultfile`): `vaultfile --age-plugin=identity-v1` is the age plugin.
enum LinkedNames {
    /// What a name stands for.
    enum Action: Sendable {
        /// A program of its own: runs with the arguments after its name, returns the exit status.
        case program(@Sendable ([String]) -> Int32)
        /// A verb of vaultfile's, put before the arguments.
        case verb([String])
    }

    /// The name (the last component of `argv[0]`), the first argument's prefix, and what it stands for.
    static let table: [(name: String, firstArgument: String?, action: Action)] = [
        ("age-plugin-vaultfile", "--age-plugin=", .program(AgePlugin.main)),
        ("git-credential-vaultfile", nil, .verb(["git", "credential"])),  // git's credential.helper = vaultfile
    ]

    /// The program that runs for a process started as `program` with `arguments`, or nil for
    /// vaultfile itself (a verb's link included: `arguments(program:_:)` names its verb).
    static func handler(for program: String, arguments: ArraySlice<String>) -> (@Sendable ([String]) -> Int32)? {
        guard case .program(let run)? = row(for: program, arguments: arguments)?.action else { return nil }
        return run
    }

    /// The arguments vaultfile parses for a process started as `program` with `arguments`: the verb
    /// of its link name first, or `arguments` as they are.
    static func arguments(program: String, _ arguments: [String]) -> [String] {
        guard case .verb(let verb)? = row(for: program, arguments: arguments[...])?.action else { return arguments }
        return verb + arguments
    }

    private static func row(for program: String, arguments: ArraySlice<String>) -> (name: String, firstArgument: String?, action: Action)? {
        let name = program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? program
        return table.first { row in
            row.name == name || row.firstArgument.map { prefix in arguments.first?.hasPrefix(prefix) == true } == true
        }
    }
}
