// MARK: - Why a copy is not taken for the vault this machine knows

/// Why this machine does not take a copy of a vault for one written by its members (docs/SECURITY.md,
/// "A removed member's planted copy"): the rules of `KeyLineage` in the state folder. Declared
/// here, beside `VaultError`, whose `refusedCopy` carries it. A copy refused so is read with a
/// warning, written never (exit 7), and records nothing on this machine. Fingerprints are the
/// `x25519:` ones of `vaultfile slot list` (docs/FORMAT.md), computed from the copy's own metadata
/// (or, for the keys a copy lacks, kept in the record); nil or empty when none is known.
public enum LineageRefusal: Equatable, Sendable {
    /// Sealed under a file key that a newer copy under another key superseded here, on `since`
    /// (seconds since 1970): the vault's file key was rotated since.
    case supersededFileKey(since: Int64)
    /// Opened through keyslot `slot` (fingerprint `fingerprint`), whose public key was retired here
    /// on `retired` (a removal, a re-salt or a password change replaced it): whoever knew that key
    /// can write a copy it opens.
    case retiredSlotKey(slot: Int, retired: Int64, fingerprint: String?)
    /// Holds keyslots `slots` (fingerprints `fingerprints`) whose public keys were retired here, the
    /// first on `retired`, though another slot opened it: a copy of the members' holds none.
    case holdsRetiredSlotKey(slots: [Int], retired: Int64, fingerprints: [String])
    /// A write whose result would still hold keyslots `slots` (fingerprints `fingerprints`), whose
    /// keys were retired here, the first on `retired`: a rotation would re-wrap the new file key to them.
    case wouldKeepRetiredSlotKey(slots: [Int], retired: Int64, fingerprints: [String])
    /// A rotation out of an old file key (retired or superseded here) whose result would give the new
    /// file key to keyslots `slots` of the copy, which the copy taken here last does not hold: whoever
    /// still held the old key, a removed member among them, can have added them to the copy.
    case wouldKeepUnseenSlots(slots: [NamedSlot])
    /// Sealed under a file key this machine has not seen, with no keyslot holding one of the keys of
    /// this machine's lineage (`expected`: their fingerprints), the newest from `rotated`: not a
    /// descendant of the rotation run here.
    case unknownLineage(rotated: Int64, expected: [String])

    /// Whether `--accept-rotation` takes the copy (and adopts it): a rotation made elsewhere by a
    /// member is the innocent reason for these, and only a person who checked the slots can tell.
    public var canBeAccepted: Bool {
        switch self {
        case .supersededFileKey: return false
        case .retiredSlotKey, .holdsRetiredSlotKey, .wouldKeepRetiredSlotKey, .wouldKeepUnseenSlots, .unknownLineage: return true
        }
    }

    /// Whether a rotation of the copy (a fresh file key) is let through: the way out of an old key,
    /// as for a file key retired here. A copy that may not be the members' is never rotated into theirs.
    public var letsARotationThrough: Bool {
        switch self {
        case .supersededFileKey: return true
        case .retiredSlotKey, .holdsRetiredSlotKey, .wouldKeepRetiredSlotKey, .wouldKeepUnseenSlots, .unknownLineage: return false
        }
    }

    /// What it says of the copy at `path`, as the rest of a sentence that starts with the path.
    public func describing(_ path: String) -> String {
        let planted = "may have been written by someone who no longer holds a slot"
        switch self {
        case .supersededFileKey(let since):
            return "\(path) is sealed under a file key that a newer copy under another key replaced (seen here on \(utcText(seconds: since))): "
                + "the copy \(planted), and new secrets written there would be readable by them"
        case .retiredSlotKey(let slot, let retired, let fingerprint):
            return "\(path) was opened through keyslot \(slot)\(Self.named(fingerprint.map { [$0] } ?? [])), whose public key was retired "
                + "here on \(utcText(seconds: retired)) ('slot rm', 'rekey' or 'passwd' replaced or removed it): whoever knew that key, a "
                + "removed member among them, can write a copy it opens, so this copy \(planted)"
        case .holdsRetiredSlotKey(let slots, let retired, let fingerprints):
            return "\(path) holds \(Self.keyslots(slots))\(Self.named(fingerprints)), whose public key was retired here (first on "
                + "\(utcText(seconds: retired)): 'slot rm', 'rekey' or 'passwd' replaced or removed it), which no copy of the members "
                + "holds: whoever knew that key, a removed member among them, can write a copy like this one, so this copy \(planted)"
        case .wouldKeepRetiredSlotKey(let slots, let retired, let fingerprints):
            return "writing \(path) would keep \(Self.keyslots(slots))\(Self.named(fingerprints)), whose public key was retired here (first "
                + "on \(utcText(seconds: retired))): the new version would still open for whoever knew that key, a removed member among them"
        case .wouldKeepUnseenSlots(let slots):
            let many = slots.count > 1
            let named = many ? slots.map { "\($0.index): \($0)" }.joined(separator: "; ") : slots.map(\.description).joined()
            return "writing \(path) would give the new file key to \(Self.keyslots(slots.map(\.index))) (\(named)), "
                + "which the copy taken here last does not hold: \(path) is sealed under an old file key, and whoever still held that key, "
                + "a removed member among them, can have added \(many ? "them" : "it") to the copy, so the new version would open for them"
        case .unknownLineage(let rotated, let expected):
            let keys = expected.isEmpty ? "the key" : "a key (\(expected.joined(separator: ", ")))"
            return "\(path) is sealed under a file key this machine has not seen, and none of its keyslots holds \(keys) of the lineage "
                + "taken here since the rotation run here on \(utcText(seconds: rotated)): it does not descend from that rotation, and "
                + "\(planted)"
        }
    }

    /// A keyslot of a copy as a refusal names it: its id (position), kind, label and fingerprint.
    public struct NamedSlot: Equatable, Sendable, CustomStringConvertible {
        /// The slot's id in the copy as found (what `slot rm` takes).
        public let index: Int
        /// `password`, `keyfile`, `recovery`, `recipient`, … (`slot list`'s KIND).
        public let kind: String
        /// Its label, empty when none.
        public let label: String
        /// Its fingerprint as `slot list` shows it (`x25519:…` for a secret-derived slot), nil when none.
        public let fingerprint: String?

        /// A slot named so.
        public init(index: Int, kind: String, label: String, fingerprint: String?) {
            self.index = index
            self.kind = kind
            self.label = label
            self.fingerprint = fingerprint
        }

        /// "keyfile 'laptop', x25519:…".
        public var description: String {
            kind + (label.isEmpty ? "" : " '\(label)'") + (fingerprint.map { ", \($0)" } ?? "")
        }
    }

    /// " (x25519:…)" for the fingerprints `fingerprints`, or nothing.
    private static func named(_ fingerprints: [String]) -> String {
        fingerprints.isEmpty ? "" : " (" + fingerprints.joined(separator: ", ") + ")"
    }

    /// "keyslot 2", "keyslots 0 and 3", "keyslots 0, 1 and 3".
    private static func keyslots(_ slots: [Int]) -> String {
        let numbers = slots.map(String.init)
        guard let last = numbers.last else { return "a keyslot" }
        return numbers.count == 1 ? "keyslot \(last)" : "keyslots \(numbers.dropLast().joined(separator: ", ")) and \(last)"
    }
}
