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
/// `.gitattributes` of every folder from the work tree's root down to the path's folder,
/// then `.git/info/attributes`. It follows gitattributes(5) as far as vaultfile needs: patterns
/// as in gitignore(5) (`fnmatch(3)`, a `**` matching across folders), later lines and deeper
/// files win, `-attr`, `!attr`, `attr` and `attr=other` take `vaultfile` away, and macros
/// (`binary`, `[attr]` lines) expand. Unreadable, odd or huge files are skipped.
enum GitAttributes {
    /// The attributes that make git hand a file to vaultfile.
    private static let vaultAttributes = ["diff", "merge", "filter"]
    /// Larger attributes files are not read.
    private static let maxFileLength = 1 << 20

    /// What marks `path` as a vault: the attributes file and the attribute (`diff=vaultfile`), or nil.
    static func vaultMarking(of path: String) -> (file: String, attribute: String)? {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let folderPart = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard !name.isEmpty, let folder = realPath(folderPart), let root = workTreeRoot(containing: folder) else { return nil }
        // From the root down: a deeper file overrides a higher one, and .git/info/attributes overrides all.
        var bases = [root]
        if folder != root {
            var current = root
            for part in folder.dropFirst(root == "/" ? 1 : root.count + 1).split(separator: "/") {
                current += (current == "/" ? "" : "/") + part
                bases.append(current)
            }
        }
        var sources = bases.map { (file: $0 + "/.gitattributes", base: $0) }
        if isDirectory(root + "/.git") { sources.append((root + "/.git/info/attributes", root)) }

        var state: [String: (isVault: Bool, file: String)] = [:]
        var macros: [String: [Substring]] = ["binary": ["-diff", "-merge", "-text"]]
        for (file, base) in sources {
            guard let text = readSmallFile(file) else { continue }
            let inBase = folder == base ? "" : String(folder.dropFirst(base == "/" ? 1 : base.count + 1)) + "/"
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
                guard let (pattern, attributes) = split(line) else { continue }
                if pattern.hasPrefix("[attr]") {
                    macros[String(pattern.dropFirst(6))] = attributes
                    continue
                }
                guard matches(pattern, relative: inBase + name, name: name) else { continue }
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

    /// Applies one line's attributes (macros expanded) to `state`.
    private static func apply(
        _ attributes: [Substring], macros: [String: [Substring]], file: String, to state: inout [String: (isVault: Bool, file: String)]
    ) {
        for attribute in attributes {
            if let expansion = macros[String(attribute)] {
                apply(expansion, macros: [:], file: file, to: &state)
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
