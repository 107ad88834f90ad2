import VaultModel

// MARK: - How far one import may grow its input

/// The most bytes an import may make out of its input by inflating compressed data and by
/// copying one stored file into every item that names it (a 1pux file referenced by many items, a
/// KeePass pool binary referenced by many entries): each reference counts the file's whole size,
/// since each becomes a copy in the vault.
///
/// The limit is `ratio` times the input's size, at least `floor` and at most `ceiling` (the
/// vault's own content limit, which the result could never pass anyway). A small hostile file
/// (4.5 KB of ZIP naming one 1 MiB file 500 times) is refused once its references pass the
/// limit, before the copies are made: the refusal is quick and its memory is the input's.
struct ExpansionBudget {
    /// How many times its own size an input may grow to.
    static let ratio = 250
    /// The least any input may grow to (a small export with a few compressible attachments).
    static let floor = 32 << 20
    /// The most any input may grow to: a vault's content limit.
    static let ceiling = VaultLimits.maxContentLength

    /// The limit for this input, in bytes.
    let limit: Int
    /// What messages call the input ("the 1pux file").
    let what: String
    /// The size of the input the limit follows (the file as read, not anything decrypted or inflated from it).
    let inputBytes: Int
    /// Bytes counted so far.
    private(set) var spent = 0

    /// The budget of an input of `inputBytes` bytes.
    init(inputBytes: Int, what: String) {
        let (scaled, overflow) = inputBytes.multipliedReportingOverflow(by: Self.ratio)
        limit = min(Self.ceiling, max(Self.floor, overflow ? Int.max : scaled))
        self.inputBytes = inputBytes
        self.what = what
    }

    /// Counts `bytes` more (`count` bytes of `name`, inflated or copied once more); throws
    /// `.limitExceeded` naming the limit when the total passes it.
    mutating func spend(_ bytes: Int, on name: String) throws(VaultError) {
        spent += bytes
        guard spent <= limit else {
            throw .limitExceeded("\(what) grows to more than \(limit) bytes (\(Self.mebibytes(limit))) once its compressed data is inflated "
                                 + "and its files are copied into every item that names them ('\(Self.shown(name))' passed it): the import "
                                 + "limit is \(Self.ratio) times the file's size (\(inputBytes) bytes), at least \(Self.mebibytes(Self.floor)) and at most "
                                 + "\(Self.mebibytes(Self.ceiling)) (docs/INTERCHANGE.md); refused before inflating or copying it")
        }
    }

    private static func mebibytes(_ bytes: Int) -> String {
        bytes >= 1 << 30 && bytes % (1 << 30) == 0 ? "\(bytes >> 30) GiB" : "\((bytes + (1 << 20) - 1) >> 20) MiB"
    }

    /// A name from the input for a message: at most 80 characters, control characters escaped.
    static func shown(_ name: String) -> String {
        String(name.prefix(80).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
    }
}
