import VaultFormat
import VaultModel

// MARK: - Reading and writing a `.members` record

extension MemberTrust.Record {
    /// Why bytes are not a record this build wrote.
    struct Damage: Error {
        /// What is wrong, for the problem's message.
        let why: String
    }

    private static let firstLine = "vaultfile-members 1"

    /// The record in `bytes`; anything this build would not have written is `Damage`.
    init(parsing bytes: [UInt8]) throws(Damage) {
        self.init()
        guard bytes.count <= MemberTrust.maxLength else { throw Damage(why: "longer than \(MemberTrust.maxLength) bytes") }
        guard let text = String(validating: bytes, as: UTF8.self), text.hasSuffix("\n") else { throw Damage(why: "not text ending in a newline") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(Self.firstLine) else {
            throw Damage(why: lines.first?.hasPrefix("vaultfile-members ") == true ? "written by a newer vaultfile" : "not a members record")
        }
        for (number, line) in lines.enumerated().dropFirst() {
            guard read(line) else { throw Damage(why: "line \(number + 1) is malformed") }
        }
        guard pinned.count <= MemberTrust.Caps.pinned, removed.count <= MemberTrust.Caps.removed, retired.count <= MemberTrust.Caps.retired,
              headers.count <= MemberTrust.Caps.headers, paths.count <= MemberTrust.Caps.paths else { throw Damage(why: "a list is longer than this build keeps") }
    }

    /// Reads one line into the record; false when it is not one this build writes.
    private mutating func read(_ line: Substring) -> Bool {
        if line.hasPrefix("path ") {
            let path = String(line.dropFirst(5))
            guard !path.isEmpty, path.utf8.count <= MemberTrust.Caps.pathLength, !paths.contains(path) else { return false }
            paths.append(path)
            return true
        }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("signed", 2):
            guard firstSigned == nil, let generation = Self.number(parts[1]) else { return false }
            firstSigned = generation
        case ("m", 5):
            guard let position = Self.number(parts[1]), position < VaultHeader.maxKeyslots, let type = Self.number(parts[2]), type <= 255,
                  let key = Self.bytes(parts[3]), !key.isEmpty, key.count <= MemberTrust.Caps.keyLength,
                  let label = parts[4] == "-" ? [] : Self.bytes(parts[4]), label.count <= 255,
                  let text = String(validating: label, as: UTF8.self) else { return false }
            pinned.append(MemberTrust.PinnedMember(position: Int(position), key: MemberKey(type: UInt8(type), bytes: key), label: text))
        case ("r", 4):
            guard let id = Self.id(parts[1]), let remover = Self.id(parts[2]), let generation = Self.number(parts[3]) else { return false }
            removed.append(MemberTrust.LeftMember(id: id, remover: remover, generation: generation))
        case ("t", 3):
            guard let id = Self.id(parts[1]), let generation = Self.number(parts[2]) else { return false }
            retired.append(MemberTrust.LeftMember(id: id, remover: nil, generation: generation))
        case ("h", 3):
            guard let generation = Self.number(parts[1]), let hash = Self.id(parts[2]) else { return false }
            headers.append(SealAncestor(generation: generation, headerHash: hash))
        default:
            return false
        }
        return true
    }

    /// The record as a file.
    func encoded() -> [UInt8] {
        let hex = SeenGenerations.Record.hex
        var text = Self.firstLine + "\n"
        if let firstSigned { text += "signed \(firstSigned)\n" }
        for member in pinned {
            let label = member.label.isEmpty ? "-" : hex(Array(member.label.utf8))
            text += "m \(member.position) \(member.key.type) \(hex(member.key.bytes)) \(label)\n"
        }
        for member in removed { text += "r \(hex(member.id)) \(hex(member.remover ?? [])) \(member.generation)\n" }
        for member in retired { text += "t \(hex(member.id)) \(member.generation)\n" }
        for header in headers { text += "h \(header.generation) \(hex(header.headerHash))\n" }
        // A path holding a newline cannot be one line: it is left out (the vault id at that path is then not compared).
        for path in paths where !path.isEmpty && !path.contains("\n") { text += "path \(path)\n" }
        return Array(text.utf8)
    }

    /// Decimal digits only (no sign, no spaces), as this build writes a number.
    private static func number(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(text)
    }

    /// Lowercase hex digits.
    private static func bytes(_ text: Substring) -> [UInt8]? {
        SeenGenerations.Record.bytes(hex: String(text))
    }

    /// 32 lowercase hex digits (a member key id or a header hash).
    private static func id(_ text: Substring) -> [UInt8]? {
        bytes(text).flatMap { $0.count == 16 ? $0 : nil }
    }
}
