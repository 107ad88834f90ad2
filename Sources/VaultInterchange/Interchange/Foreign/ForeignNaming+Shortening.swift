import VaultModel

// MARK: - Names too long to be names

extension ForeignNaming {
    /// The most bytes of an item's name: the name limit (`VaultLimits.maxNameLength`). A name is
    /// cut only when it is longer (`shortened`); a numbered one (`TITLE (n)`) only when it and its
    /// number are (`numberedFitting`), on every build path — a title of 1,012 to 1,024 bytes was cut
    /// though it fit, room kept for a number it never got (att62 F8, cold62 L1).
    static let maxBaseLength = VaultLimits.maxNameLength

    /// The most bytes ` (n)` takes, n a `UInt32`: the room a prefix leaves for numbered names.
    static let maxNumberBytes = 13

    /// The bytes a shortened title keeps at least when its folders must be shortened too.
    static let minShortenedTitle = 64

    /// `name` (a cleaned name in NFC: prefix, folders and title joined with '/') cut to at most
    /// `room` bytes at character boundaries (never inside a UTF-8 sequence): the title
    /// first, then, when the folders alone leave it less than `minShortenedTitle` bytes, the
    /// folders, never the first `prefixBytes` (the user's `--prefix`). `folders` says the folders
    /// were cut. Nil when the prefix leaves no room: the name is then refused as it is.
    static func shortened(_ name: String, prefixBytes: Int, room: Int = maxBaseLength) -> (name: String, folders: Bool)? {
        guard let slash = name.lastIndex(of: "/") else { return finished(cut(name, to: room), room: room).map { ($0, false) } }
        var folders = String(name[..<slash])
        var title = String(name[name.index(after: slash)...])
        let foldersCut = folders.utf8.count + 1 + min(title.utf8.count, minShortenedTitle) > room
        if foldersCut {
            title = cut(title, to: minShortenedTitle)
            let left = room - 1 - title.utf8.count
            guard left >= prefixBytes, left > 0 else { return nil }
            folders = trimmedFolders(cut(folders, to: left), keeping: prefixBytes)
            guard !folders.isEmpty || prefixBytes == 0 else { return nil }
        } else {
            title = cut(title, to: room - folders.utf8.count - 1)
        }
        let joined = folders.isEmpty ? title : folders + "/" + title
        return finished(joined, room: room).map { ($0, foldersCut) }
    }

    /// `TITLE (n)`: the numbered name of an item named `base` before numbering, `number` its
    /// number, cut (`shortened`: the title first, never the prefix's `prefixBytes`) only when the
    /// name and its number pass the name limit, and only as much as they pass it. `base` is what
    /// the number follows (the cut name, or `base` itself); `cut` says what was cut, nil for nothing.
    static func numberedFitting(_ base: String, _ number: UInt32, prefixBytes: Int)
        -> (base: String, name: String, cut: (title: Bool, folders: Bool)?) {
        let suffix = 3 + String(number).utf8.count
        guard base.utf8.count + suffix > VaultLimits.maxNameLength,
              let short = shortened(base, prefixBytes: prefixBytes, room: VaultLimits.maxNameLength - suffix) else {
            return (base, numberedName(base, number), nil)
        }
        let title = !sameUTF8(String(leaf(of: short.name)), String(leaf(of: base)))
        return (short.name, numberedName(short.name, number), (title, short.folders))
    }

    /// `text` cut to at most `limit` bytes: at a grapheme boundary, else (one grapheme longer than
    /// the limit: a letter under hundreds of marks) at a scalar boundary; spaces and tabs at the
    /// end dropped (cleaning leaves none at a part's end).
    static func cut(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = EntryName.prefix(of: text, fittingIn: limit)
        if kept.isEmpty {
            var scalars = String.UnicodeScalarView()
            var used = 0
            for scalar in text.unicodeScalars {
                guard used + UTF8.width(scalar) <= limit else { break }
                used += UTF8.width(scalar)
                scalars.append(scalar)
            }
            kept = Substring(String(scalars))
        }
        while let last = kept.unicodeScalars.last, last == " " || last == "\t" { kept = Substring(kept.unicodeScalars.dropLast()) }
        return String(kept)
    }

    /// Cut folders made whole again: no '/', space or tab at the end, no `.` or `..` last part
    /// (dropped), never shorter than the prefix's `prefixBytes`.
    private static func trimmedFolders(_ folders: String, keeping prefixBytes: Int) -> String {
        // Bytes against bytes: a scalar count against the prefix's bytes stopped early under a
        // non-ASCII prefix, leaving a `/` at the end and failing the import (att62 F3).
        var scalars = Substring(folders).unicodeScalars
        var bytes = folders.utf8.count
        while bytes > prefixBytes {
            if let last = scalars.last, last == "/" || last == " " || last == "\t" {
                scalars = scalars.dropLast()
                bytes -= 1
                continue
            }
            let part = scalars.split(separator: "/", omittingEmptySubsequences: false).last.map { String(String.UnicodeScalarView($0)) } ?? ""
            guard part == "." || part == ".." else { break }
            scalars = scalars.dropLast(part.unicodeScalars.count)
            bytes -= part.utf8.count
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// `name` in NFC and at most `room` bytes (a cut of an NFC text is NFC but for rare
    /// compositions across the cut: cut again), when it is a valid name; nil otherwise.
    private static func finished(_ name: String, room: Int) -> String? {
        var name = EntryName.normalized(name)
        var tries = 0
        while name.utf8.count > room, tries < 4 {
            name = EntryName.normalized(cut(name, to: room - 4 * (tries + 1)))
            tries += 1
        }
        return name.utf8.count <= room && EntryName.isValid(name) ? name : nil
    }

    /// The bytes the prefix takes in a name (its parts cleaned and joined, in NFC); 0 without one.
    static func prefixBytes(_ prefix: [String]) -> Int {
        prefix.isEmpty ? 0 : EntryName.normalized(ImportedNameCleaner.entryName(fromParts: prefix)).utf8.count
    }

    /// Whether `leaf`, an entry's last part without its number, may be a title's cleaned form
    /// `base` shortened (`shortened(_:prefixBytes:)`, with its folders or alone): at least half
    /// `minShortenedTitle` bytes, shorter than `base` and its first bytes (an export then gives
    /// the whole title back).
    static func isShortened(_ base: String, to leaf: Substring) -> Bool {
        leaf.utf8.count >= minShortenedTitle / 2 && leaf.utf8.count < base.utf8.count && base.utf8.starts(with: leaf.utf8)
    }

    /// The last part of `name` (after its last '/', found by bytes: a part may begin with a
    /// combining mark), the whole name without one.
    static func leaf(of name: String) -> Substring {
        let bytes = name.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return Substring(name) }
        return name[bytes.index(after: slash)...]
    }

    /// FNV-1a, 64 bits: a fixed hash (never seeded per process), so the order is the same in every run.
    static func fnv1a(_ bytes: some Sequence<UInt8>, from start: UInt64 = 0xCBF2_9CE4_8422_2325) -> UInt64 {
        var hash = start
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    // MARK: Numbered names

    /// `base` named `candidate`, its numbered name (`TITLE (n)`, `numberedFitting`), of `item`; the
    /// item's `title` kept when the name was its title (KeePass and Bitwarden allow a title twice:
    /// exports give it back). `cut`: what the number's room cut (said `shortened`, cut folders kept
    /// in `folder` and said `folders_cut`). `reason`: why it is numbered (`numberingReason(first:_:)`:
    /// what decided, which the renaming says).
    static func numbered(_ base: inout Base, _ candidate: String, cut: (title: Bool, folders: Bool)? = nil, item: ForeignItem,
                         reason: ImportRenaming.Reason = .numberedByAccount) {
        base.named.name = candidate
        base.reasons.append(reason)
        if let cut {
            if !base.reasons.contains(.shortened) { base.reasons.append(.shortened) }
            if cut.folders {
                if !base.reasons.contains(.foldersCut) { base.reasons.append(.foldersCut) }
                if base.named.folders == nil { base.named.folders = item.folders.joined(separator: "/") }
            }
        }
        if !base.derived, base.named.title == nil {
            base.named.title = item.title
            base.reasons.append(.titleKept)
        }
    }

    /// `"\(base) (\(number))"`, made from the bytes (an export whose titles repeat numbers most of its items).
    static func numberedName(_ base: String, _ number: UInt32) -> String {
        var base = base
        return base.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count + 13) { out in
                var count = bytes.count
                if count > 0 { UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: bytes.baseAddress!, byteCount: count) }
                out[count] = 0x20
                out[count + 1] = UInt8(ascii: "(")
                count += 2
                var digits = 1, rest = number / 10
                while rest > 0 { digits += 1; rest /= 10 }
                var value = number
                for position in stride(from: count + digits - 1, through: count, by: -1) {
                    out[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                count += digits
                out[count] = UInt8(ascii: ")")
                return count + 1
            }
        }
    }
}
