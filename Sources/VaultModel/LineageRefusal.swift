// MARK: - Why a copy is not taken for the vault this machine knows

/// Why this machine does not take a copy of a vault for one written by its members (docs/SECURITY.md,
/// "A removed member's planted copy"): the rules of `KeyLineage` in the state folder. Declared
/// here, beside `VaultError`, whose `refusedCopy` carries it. A copy refused so is read with a
/// warning, written never (exit 7), and records nothing on this machine.
public enum LineageRefusal: Equatable, Sendable {
    /// Sealed under a file key that a newer copy under another key superseded here, on `since`
    /// (seconds since 1970): the vault's file key was rotated since.
    case supersededFileKey(since: Int64)
    /// Opened through keyslot `slot`, whose public key was retired here on `retired` (a removal, a
    /// re-salt or a password change replaced it): whoever knew that key can write a copy it opens.
    case retiredSlotKey(slot: Int, retired: Int64)
    /// Sealed under a file key this machine has not seen, with no keyslot holding the key that the
    /// rotation run here on `rotated` minted for the slot it re-salted: not a descendant of it.
    case unknownLineage(rotated: Int64)

    /// Whether `--accept-rotation` takes the copy (and adopts it): a rotation made elsewhere by a
    /// member is the innocent reason for both, and only a person who checked the slots can tell.
    public var canBeAccepted: Bool {
        switch self {
        case .supersededFileKey: return false
        case .retiredSlotKey, .unknownLineage: return true
        }
    }

    /// Whether a rotation of the copy (a fresh file key) is let through: the way out of an old key,
    /// as for a file key retired here. A copy that may not be the members' is never rotated into theirs.
    public var letsARotationThrough: Bool {
        switch self {
        case .supersededFileKey: return true
        case .retiredSlotKey, .unknownLineage: return false
        }
    }

    /// What it says of the copy at `path`, as the rest of a sentence that starts with the path.
    public func describing(_ path: String) -> String {
        switch self {
        case .supersededFileKey(let since):
            return "\(path) is sealed under a file key that a newer copy under another key replaced (seen here on \(utcText(seconds: since))): "
                + "the copy may have been written by someone who no longer holds a slot, and new secrets written there would be readable by them"
        case .retiredSlotKey(let slot, let retired):
            return "\(path) was opened through keyslot \(slot), whose public key was retired here on \(utcText(seconds: retired)) "
                + "('slot rm', 'rekey' or 'passwd' replaced or removed it): whoever knew that key, a removed member among them, can write a "
                + "copy it opens, so this copy may have been written by someone who no longer holds a slot"
        case .unknownLineage(let rotated):
            return "\(path) is sealed under a file key this machine has not seen, and none of its keyslots holds the key that the rotation "
                + "run here on \(utcText(seconds: rotated)) gave the slot it re-salted: it does not descend from that rotation, and may have "
                + "been written by someone who no longer holds a slot"
        }
    }
}
