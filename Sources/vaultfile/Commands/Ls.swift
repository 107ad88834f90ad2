import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Shows entry names as a tree of their folders on a terminal (as `pass ls` does), plain names when piped.
    struct Ls: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "Show entry names as a tree on a terminal (like pass ls); one per line when piped.",
            discussion: """
                On a terminal, or with --tree, the names are drawn as a tree of their '/' folders under the \
                vault's file name (or the folder asked for). Otherwise they are printed one per line, full \
                names, as 'list' prints them. With FOLDER, only the entries under FOLDER/.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "Only the entries under this folder, e.g. prod.") var folder: String?
        @Flag(name: Table.tree.long, help: "Draw the tree even when stdout is not a terminal.") var tree = false

        func run() throws {
            let vault = try unlock.open(entriesOnly: true).vault
            var names = vault.names
            var root = Self.fileName(unlock.location.path)
            if let folder {
                let prefix = Vault.folder(folder)
                names = vault.names(under: prefix)
                if names.isEmpty {
                    // A plain entry is shown as itself, as `ls FILE` shows a file.
                    guard let entry = vault.existingName(for: folder) else { throw CLIError.noEntryOrFolder(folder) }
                    try StandardOutput.line(entry)
                    return
                }
                root = String(prefix.dropLast())
            }
            if tree || StandardOutput.isTerminal {
                let dropped = folder.map { Vault.folder($0).utf8.count } ?? 0
                let relative = names.map { String(decoding: $0.utf8.dropFirst(dropped), as: UTF8.self) }
                try StandardOutput.write(Array(Self.tree(root: root, names: relative).utf8))
            } else {
                var out: [UInt8] = []
                for name in names {
                    out.append(contentsOf: name.utf8)
                    out.append(0x0A)
                }
                try StandardOutput.write(out)
            }
        }

        // MARK: The tree

        /// One line of the tree and what hangs below it, by name component (an entry `a` beside
        /// `a/b` is one line, as a folder).
        private struct Node {
            var children: [String: Node] = [:]
        }

        /// `root` and the `/`-separated `names` below it drawn as a tree, `├──`, `└──` and `│` as
        /// tree(1) and `pass ls` draw them; components sorted byte-wise, one line each.
        static func tree(root: String, names: [String]) -> String {
            var top = Node()
            for name in names {
                let components = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                insert(components[...], into: &top)
            }
            var lines = [root]
            draw(top, indent: "", into: &lines)
            return lines.joined(separator: "\n") + "\n"
        }

        private static func insert(_ components: ArraySlice<String>, into node: inout Node) {
            guard let first = components.first else { return }
            insert(components.dropFirst(), into: &node.children[first, default: Node()])
        }

        private static func draw(_ node: Node, indent: String, into lines: inout [String]) {
            let sorted = node.children.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (position, (name, child)) in sorted.enumerated() {
                let isLast = position == sorted.count - 1
                lines.append(indent + (isLast ? "└── " : "├── ") + name)
                draw(child, indent: indent + (isLast ? "    " : "│   "), into: &lines)
            }
        }

        /// The last component of `path`: the tree's root when no folder is asked for.
        private static func fileName(_ path: String) -> String {
            path.split(separator: "/").last.map(String.init) ?? path
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Ls {
    /// `ls`'s own options (the unlock options have their own tables).
    enum Table: String, QuickOptionTable {
        case tree

        var kind: OptionKind { .flag }

        func read(from arguments: inout QuickArguments, into ls: inout VaultfileCommand.Ls) {
            switch self {
            case .tree: ls.tree = arguments.flag(self)
            }
        }
    }

    /// What `ls` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, optionalPositionals: 1).adding(UnlockOptions.quickGrammar)

    /// `ls` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var ls = Self()
            ls.unlock = try UnlockOptions.quick(&arguments)
            ls.folder = arguments.optionalPositional()
            try arguments.read(Table.self, into: &ls)
            return ls
        }
    }
}
