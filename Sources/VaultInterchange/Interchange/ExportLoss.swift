import VaultModel

// MARK: - What an export could not carry

/// Something of the vault that an export to another manager's format could not carry as it is:
/// a kind of field or part, how many, and the sentence the warning says. `export` prints one
/// warning per loss and lists them in `--json` (`not_carried`, docs/JSON.md); nothing is dropped
/// without one.
public struct ExportLoss: Equatable, Sendable, CustomStringConvertible {
    /// A stable name of the kind of loss, for `--json` (e.g. `attachments`, `binary_values`).
    public var kind: String
    /// How many of them (fields, values, versions or entries, as `description` says).
    public var count: Int
    /// The warning's text, which names the kind and the count.
    public var description: String

    /// A loss of `count` things of `kind`, said as `description`.
    public init(kind: String, count: Int, description: String) {
        self.kind = kind
        self.count = count
        self.description = description
    }
}

/// Counts losses by kind as an export walks the vault, then lists them in the order first met.
struct ExportLossTally {
    private var order: [String] = []
    private var counts: [String: Int] = [:]
    private var sentences: [String: (Int) -> String] = [:]

    /// Counts one more of `kind` (`count` more), said by `sentence` of the final count.
    mutating func add(_ kind: String, _ count: Int = 1, _ sentence: @escaping (Int) -> String) {
        guard count > 0 else { return }
        if counts[kind] == nil { order.append(kind); sentences[kind] = sentence }
        counts[kind, default: 0] += count
    }

    /// The losses counted, in the order their kinds were first met.
    var losses: [ExportLoss] {
        order.map { ExportLoss(kind: $0, count: counts[$0]!, description: sentences[$0]!(counts[$0]!)) }
    }

    /// "1 entry" / "3 entries" and the like.
    static func counted(_ count: Int, _ one: String, _ many: String) -> String { count == 1 ? "1 \(one)" : "\(count) \(many)" }
}

extension Vault {
    /// The entries in the trash (kept with history) whose names lie under `prefix`: no format
    /// but `export --format json --with-history` carries them.
    func trashedCount(withPrefix prefix: String) -> Int {
        guard keepsHistory, let trashed = try? trash() else { return 0 }
        return trashed.filter { $0.name.hasPrefix(prefix) }.count
    }
}

extension ExportLossTally {
    /// The trash of `vault` under `prefix`, which `format` does not carry.
    mutating func addTrash(of vault: Vault, prefix: String, format: String) {
        add("trash", vault.trashedCount(withPrefix: prefix)) {
            "\(Self.counted($0, "removed entry", "removed entries")) in the vault's trash not written: \(format) has no trash "
                + "(export --format json --with-history carries it)"
        }
    }
}
