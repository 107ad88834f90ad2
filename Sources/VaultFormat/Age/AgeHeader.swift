import SecureMemory

// MARK: - Stanzas

/// The kind of a recipient stanza, by its first argument: the seam where new kinds slot in.
///
/// Kinds this build reads have a case; every other stanza (age 1.3's `mlkem768x25519`, a
/// plugin's own type, grease) is `.other` and is skipped by
/// identities, as the age spec requires of unrecognised stanzas.
public enum AgeStanzaKind: Hashable, Sendable, CustomStringConvertible {
    /// `X25519`: an age1… recipient.
    case x25519
    /// `ssh-ed25519`: an OpenSSH ed25519 key.
    case sshEd25519
    /// `ssh-rsa`: an OpenSSH RSA key.
    case sshRSA
    /// `scrypt`: a passphrase; the only stanza of its file.
    case scrypt
    /// Any other type, by its exact (case-sensitive) name.
    case other(String)

    /// The kind named by a stanza's first argument; names are compared exactly, so `x25519` is not `X25519`.
    public init(type: String) {
        switch type {
        case "X25519": self = .x25519
        case "ssh-ed25519": self = .sshEd25519
        case "ssh-rsa": self = .sshRSA
        case "scrypt": self = .scrypt
        default: self = .other(type)
        }
    }

    /// The type as written in a stanza.
    public var description: String {
        switch self {
        case .x25519: return "X25519"
        case .sshEd25519: return "ssh-ed25519"
        case .sshRSA: return "ssh-rsa"
        case .scrypt: return "scrypt"
        case .other(let type): return type
        }
    }
}

/// One recipient stanza of an age header: `-> TYPE ARG…`, then a base64 body.
public struct AgeStanza: Equatable, Sendable {
    /// The first argument, which names the kind.
    public let type: String
    /// The arguments after the type.
    public let arguments: [String]
    /// The decoded body.
    public let body: [UInt8]

    /// A stanza; `type` and each argument must be non-empty printable ASCII without spaces (the
    /// caller's duty when writing: `AgeHeader.encode` checks it again).
    public init(type: String, arguments: [String], body: [UInt8]) {
        self.type = type
        self.arguments = arguments
        self.body = body
    }

    /// The kind named by `type`.
    public var kind: AgeStanzaKind { AgeStanzaKind(type: type) }

    /// Whether `text` is a valid stanza argument: 1 or more VCHARs (0x21…0x7E).
    static func isValidArgument(_ text: some Collection<UInt8>) -> Bool {
        !text.isEmpty && text.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The stanza as header text: the argument line, then the body in lines of 64 columns, the
    /// last one shorter (empty when the body fills whole lines).
    func encoded() -> [UInt8] {
        var out = Array("->".utf8)
        for argument in [type] + arguments {
            out.append(0x20)
            out += Array(argument.utf8)
        }
        out.append(0x0A)
        let text = AgeBase64.encodeUnpadded(body)
        var start = 0
        while true {
            let end = min(start + AgeHeader.columns, text.count)
            out += text[start..<end]
            out.append(0x0A)
            if end - start < AgeHeader.columns { break }
            start = end
        }
        return out
    }
}

// MARK: - The header

/// The textual header of an age v1 file: the version line, the stanzas and the MAC.
///
/// Parsed exactly by the grammar of the C2SP age spec: lines end in LF only; `-> ` and
/// arguments of printable ASCII separated by one space; body lines of 64 base64 columns ended by
/// a shorter line (possibly empty); `--- ` and the 43-column MAC. Bounded: at most `maxLength`
/// bytes and `maxStanzas` stanzas, looked at before anything else is done.
public struct AgeHeader: Sendable {
    /// The version line, without its line feed.
    public static let versionLine = "age-encryption.org/v1"
    /// The prefix every age version line starts with.
    static let versionPrefix = Array("age-encryption.org/".utf8)
    /// The longest header read: 1 MiB (a thousand post-quantum stanzas take 1.6 MiB; real files hold a few).
    public static let maxLength = 1 << 20
    /// The most stanzas read: each is tried against each identity.
    public static let maxStanzas = 512
    /// Base64 columns of a full body line.
    static let columns = 64

    /// The stanzas, in file order.
    public let stanzas: [AgeStanza]
    /// The 32-byte MAC.
    let mac: [UInt8]
    /// The bytes the MAC covers: the header up to and including `---`.
    let authenticated: [UInt8]
    /// The header's length in bytes, MAC line included: the payload starts there.
    public let length: Int

    /// Parses the header at the start of `bytes`.
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(AgeFileError) -> AgeHeader {
        guard bytes.starts(with: versionPrefix) else {
            throw bytes.isEmpty || versionPrefix.starts(with: bytes) ? .headerMalformed(line: 1, why: "the file ends inside its version line")
                : .notAnAgeFile
        }
        var reader = LineReader(bytes: bytes)
        guard let first = try reader.next() else { throw .headerMalformed(line: 1, why: "the file ends inside its version line") }
        guard first.elementsEqual(versionLine.utf8) else {
            throw .unsupportedVersion(String(decoding: first.dropFirst(versionPrefix.count).prefix(32).filter { (0x21...0x7E).contains($0) }, as: UTF8.self))
        }
        var stanzas: [AgeStanza] = []
        while true {
            let number = reader.lineNumber + 1
            guard let line = try reader.next() else {
                throw .headerMalformed(line: number, why: "the header ends before its MAC line (--- …)")
            }
            if line.starts(with: "---".utf8) {
                return try finish(line, number: number, stanzas: stanzas, bytes: bytes, end: reader.offset)
            }
            guard line.starts(with: "->".utf8) else {
                throw .headerMalformed(line: number, why: "a line starts neither a stanza (-> ) nor the MAC (--- )")
            }
            guard stanzas.count < maxStanzas else { throw .headerTooLarge(limit: maxLength) }
            stanzas.append(try stanza(line, number: number, reader: &reader))
        }
    }

    /// The argument line `line` and its body lines from `reader`.
    private static func stanza(_ line: ArraySlice<UInt8>, number: Int, reader: inout LineReader) throws(AgeFileError) -> AgeStanza {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].elementsEqual("->".utf8) else {
            throw .headerMalformed(line: number, why: "a stanza line is '-> ' and at least one argument")
        }
        guard parts.dropFirst().allSatisfy({ AgeStanza.isValidArgument($0) }) else {
            throw .headerMalformed(line: number, why: "a stanza argument is empty or holds a character other than printable ASCII")
        }
        let texts = parts.dropFirst().map { String(decoding: $0, as: UTF8.self) }
        var body: [UInt8] = []
        while true {
            let bodyNumber = reader.lineNumber + 1
            guard let bodyLine = try reader.next() else {
                throw .headerMalformed(line: bodyNumber, why: "the stanza ends before its last (short) body line")
            }
            guard bodyLine.count <= columns else {
                throw .headerMalformed(line: bodyNumber, why: "a stanza body line is longer than \(columns) columns")
            }
            guard let decoded = AgeBase64.decodeUnpadded(bodyLine) else {
                throw .headerMalformed(line: bodyNumber, why: "a stanza body line is not canonical unpadded base64")
            }
            body += decoded
            // A line shorter than 64 columns ends the body; a full line says more follows.
            if bodyLine.count < columns { break }
        }
        return AgeStanza(type: texts[0], arguments: Array(texts.dropFirst()), body: body)
    }

    /// The MAC line and the finished header.
    private static func finish(_ line: ArraySlice<UInt8>, number: Int, stanzas: [AgeStanza], bytes: ArraySlice<UInt8>,
                               end: Int) throws(AgeFileError) -> AgeHeader {
        guard !stanzas.isEmpty else { throw .headerMalformed(line: number, why: "the header holds no stanza") }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].elementsEqual("---".utf8) else {
            throw .headerMalformed(line: number, why: "the MAC line is '--- ' and the MAC, with nothing else")
        }
        guard parts[1].count == 43, let mac = AgeBase64.decodeUnpadded(parts[1]), mac.count == 32 else {
            throw .headerMalformed(line: number, why: "the MAC is not 32 bytes of canonical unpadded base64")
        }
        let authenticatedEnd = parts[0].endIndex
        return AgeHeader(stanzas: stanzas, mac: mac, authenticated: Array(bytes[bytes.startIndex..<authenticatedEnd]),
                         length: end - bytes.startIndex)
    }

    /// Checks the MAC under `fileKey`, in constant time.
    func verifyMAC(fileKey: SecureBytes) throws(AgeFileError) {
        guard constantTimeEqual(mac, AgeCrypto.headerMAC(authenticated, fileKey: fileKey)) else { throw .headerMACFailed }
    }

    /// The header as its one encoding: the version line, the stanzas, `--- ` and the MAC. A header
    /// that parses is exactly these bytes (the fuzz target checks it).
    public func encoded() -> [UInt8] {
        var header = Array(Self.versionLine.utf8) + [0x0A]
        for stanza in stanzas { header += stanza.encoded() }
        return header + Array("--- ".utf8) + AgeBase64.encodeUnpadded(mac) + [0x0A]
    }

    /// The header of `stanzas` with its MAC under `fileKey`.
    static func encode(stanzas: [AgeStanza], fileKey: SecureBytes) -> [UInt8] {
        var header = Array(versionLine.utf8) + [0x0A]
        for stanza in stanzas { header += stanza.encoded() }
        header += Array("---".utf8)
        let mac = AgeCrypto.headerMAC(header, fileKey: fileKey)
        header.append(0x20)
        header += AgeBase64.encodeUnpadded(mac)
        header.append(0x0A)
        return header
    }
}

// MARK: - Lines

/// Reads LF-ended lines from a header, never past `AgeHeader.maxLength` bytes; a line without
/// its LF is not a line.
struct LineReader {
    let bytes: ArraySlice<UInt8>
    /// Where the next line starts.
    private(set) var offset: Int
    /// How many lines were read.
    private(set) var lineNumber = 0

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    /// The next line without its LF, or nil at the end or before an LF; throws when the header
    /// would pass `AgeHeader.maxLength` bytes.
    mutating func next() throws(AgeFileError) -> ArraySlice<UInt8>? {
        let limit = min(bytes.endIndex, bytes.startIndex + AgeHeader.maxLength)
        guard offset < limit, let newline = bytes[offset..<limit].firstIndex(of: 0x0A) else {
            if bytes.endIndex > limit { throw .headerTooLarge(limit: AgeHeader.maxLength) }
            return nil
        }
        let line = bytes[offset..<newline]
        offset = newline + 1
        lineNumber += 1
        return line
    }
}
