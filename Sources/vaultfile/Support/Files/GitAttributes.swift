#if canImport(Glibc)
import Glibc
#endif

// MARK: - Paths git treats as vaults

/// Tells whether git's attributes give a path `diff=vaultfile`, `merge=vaultfile` or
/// `filter=vaultfile` (what `vaultfile git setup` writes), so that plain text is never
/// written where git would take it for an encrypted vault.
///
/// Reads the files itself and never runs git, so it costs a few `stat(2)` calls and works
/// where git is absent. Only inside a work tree (a parent folder holds `.git`): the
/// `.gitattributes` of every folder from the work tree's root down to the path's folder, then
/// `info/attributes` of the repository (for a linked work tree, of its common folder). It
/// follows gitattributes(5) as far as vaultfile needs: patterns as in gitignore(5)
/// (`fnmatch(3)`, a `**` matching across folders), later lines and deeper files win, `-attr`,
/// `!attr`, `attr` and `attr=other` take `vaultfile` away, and macros (`binary`, `[attr]` lines
/// of the top-level files) expand, macros within macros too. Unreadable, odd or huge files are skipped.
enum GitAttributes {
    /// The attributes that make git hand a file to vaultfile.
    private static let vaultAttributes = ["diff", "merge", "filter"]
    /// Larger attributes files are not read.
    private static let maxFileLength = 1 << 20
    /// How deep macros within macros are expanded.
    private static let maxMacroDepth = 32

    /// What marks `path` as a vault: the attributes file and the attribute (`diff=vaultfile`), or nil.
    static func vaultMarking(of path: String) -> (file: String, attribute: String)? {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let folderPart = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard !name.isEmpty, let folder = realPath(folderPart), let root = workTreeRoot(containing: folder) else { return nil }
        // From the root down: a deeper file overrides a higher one, and info/attributes overrides all.
        var bases = [root]
        if folder != root {
            var current = root
            for part in folder.dropFirst(root == "/" ? 1 : root.count + 1).split(separator: "/") {
                current += (current == "/" ? "" : "/") + part
                bases.append(current)
            }
        }
        var sources = bases.map { (file: $0 + "/.gitattributes", base: $0) }
        if let info = infoAttributes(root: root) { sources.append((info, root)) }
        let texts = sources.map { (file: $0.file, base: $0.base, text: readSmallFile($0.file)) }

        // Macros first, as git collects them before it applies any line: only the top-level
        // .gitattributes and info/attributes may define them (git ignores `[attr]` lines elsewhere),
        // and a later definition wins.
        var macros: [String: [Substring]] = ["binary": ["-diff", "-merge", "-text"]]
        for (_, base, text) in texts where base == root {
            for line in text?.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) ?? [] {
                guard let (pattern, attributes) = split(line), pattern.hasPrefix("[attr]") else { continue }
                macros[String(pattern.dropFirst(6))] = attributes
            }
        }
        var state: [String: (isVault: Bool, file: String)] = [:]
        for (file, base, text) in texts {
            guard let text else { continue }
            let inBase = folder == base ? "" : String(folder.dropFirst(base == "/" ? 1 : base.count + 1)) + "/"
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
                guard let (pattern, attributes) = split(line), !pattern.hasPrefix("[attr]"),
                      matches(pattern, relative: inBase + name, name: name) else { continue }
                apply(attributes, macros: macros, file: file, to: &state)
            }
        }
        for attribute in vaultAttributes {
            if let found = state[attribute], found.isVault { return (found.file, "\(attribute)=vaultfile") }
        }
        return nil
    }

    // MARK: Lines

    /// A line's pattern and attributes, or nil for blank lines, comments and negative patterns (which git ignores).
    private static func split(_ line: Substring) -> (pattern: String, attributes: [Substring])? {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        guard let first = trimmed.first, first != "#" else { return nil }
        var pattern = ""
        var rest = trimmed[...]
        if first == "\"" {
            // A C-style quoted pattern: only \" and \\ matter for vaultfile's patterns.
            var escaped = false
            rest = rest.dropFirst()
            while let char = rest.first {
                rest = rest.dropFirst()
                if escaped { pattern.append(char); escaped = false } else if char == "\\" { escaped = true } else if char == "\"" { break } else { pattern.append(char) }
            }
        } else {
            pattern = String(rest.prefix { $0 != " " && $0 != "\t" })
            rest = rest.drop { $0 != " " && $0 != "\t" }
        }
        guard !pattern.isEmpty, !pattern.hasPrefix("!") else { return nil }
        return (pattern, rest.split(whereSeparator: { $0 == " " || $0 == "\t" }))
    }

    /// Whether `pattern`, from a file in a folder where the path is `relative`, matches it.
    private static func matches(_ pattern: String, relative: String, name: String) -> Bool {
        // A pattern ending in '/' matches folders only.
        guard !pattern.hasSuffix("/") else { return false }
        guard pattern.contains("/") else { return fnmatch(pattern, name, 0) == 0 }
        let anchored = pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern
        guard anchored.contains("**") else { return fnmatch(anchored, relative, FNM_PATHNAME) == 0 }
        // '**' crosses folders: matched without FNM_PATHNAME, also with '**/' standing for no folder at all.
        let variants = [anchored, anchored.replacing("/**/", with: "/"), anchored.hasPrefix("**/") ? String(anchored.dropFirst(3)) : anchored]
        return variants.contains { fnmatch($0, relative, 0) == 0 }
    }

    /// Applies one line's attributes to `state`, each set macro replaced by what it stands for, and
    /// a macro within a macro too (git expands them all; `depth` stops a macro that names itself).
    private static func apply(
        _ attributes: [Substring], macros: [String: [Substring]], file: String, to state: inout [String: (isVault: Bool, file: String)],
        depth: Int = 0
    ) {
        for attribute in attributes {
            if let expansion = macros[String(attribute)] {
                if depth < maxMacroDepth { apply(expansion, macros: macros, file: file, to: &state, depth: depth + 1) }
                continue
            }
            let name = attribute.drop { $0 == "-" || $0 == "!" }.prefix { $0 != "=" }
            guard vaultAttributes.contains(String(name)) else { continue }
            state[String(name)] = (attribute == "\(name)=vaultfile", file)
        }
    }

    // MARK: Files

    /// The nearest folder from `folder` up that holds `.git` (a folder, or a file in a linked work tree).
    private static func workTreeRoot(containing folder: String) -> String? {
        var current = folder
        while true {
            var info = stat()
            if lstat(current + (current == "/" ? ".git" : "/.git"), &info) == 0 { return current }
            guard current != "/", let slash = current.lastIndex(of: "/") else { return nil }
            current = slash == current.startIndex ? "/" : String(current[..<slash])
        }
    }

    /// The `info/attributes` file of the repository whose work tree is `root`: in the folder `.git`,
    /// or for a linked work tree (`git worktree add`; `.git` is then a file `gitdir: PATH`) in the
    /// repository's common folder, which that folder's `commondir` file names, as git reads it.
    private static func infoAttributes(root: String) -> String? {
        let dotGit = root + (root == "/" ? ".git" : "/.git")
        if isDirectory(dotGit) { return dotGit + "/info/attributes" }
        guard let link = readSmallFile(dotGit), link.hasPrefix("gitdir:") else { return nil }
        let gitDir = resolve(firstLine(link.dropFirst(7)), from: root)
        guard let common = readSmallFile(gitDir + "/commondir") else { return gitDir + "/info/attributes" }
        let commonDir = resolve(firstLine(Substring(common)), from: gitDir)
        return (realPath(commonDir) ?? commonDir) + "/info/attributes"
    }

    /// The first line of `text`, without surrounding spaces.
    private static func firstLine(_ text: Substring) -> String {
        let line = text.prefix { $0 != "\n" && $0 != "\r" }
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(line.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }

    /// `path` as it stands, when absolute, or relative to the folder `base`.
    private static func resolve(_ path: String, from base: String) -> String {
        path.hasPrefix("/") ? path : base + (base.hasSuffix("/") ? "" : "/") + path
    }

    /// A regular file's text, or nil; never blocks on a FIFO or follows a link at the last component.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maxFileLength else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return String(decoding: bytes[0..<filled], as: UTF8.self)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
