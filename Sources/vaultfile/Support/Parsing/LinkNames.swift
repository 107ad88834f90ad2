// MARK: - The names the binary answers to

/// The names under which the binary runs a verb of its own, through a link of that name installed
/// beside `vaultfile` (`make install`, the .deb): the one table of them. A program started as one
/// of these names runs `vaultfile VERB… ARGUMENTS…`.
enum LinkNames {
    /// Each link name and the verb it stands for.
    static let verbs: [(name: String, verb: [String])] = [
        ("git-credential-vaultfile", ["git", "credential"]),  // git's credential.helper = vaultfile
    ]

    /// The arguments to run for a program started as `program` (argv[0], a path or a name) with
    /// `arguments`: the verb of its link name first, or `arguments` as they are.
    static func arguments(program: String, _ arguments: [String]) -> [String] {
        let base = program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? program
        guard let link = verbs.first(where: { $0.name == base }) else { return arguments }
        return link.verb + arguments
    }
}
