import SecureMemory
import VaultFormat
import VaultModel

// MARK: - ssh keys handed to the agent

/// How the agent may use one served ssh key (`unlock --ssh` options).
public struct SSHKeyOptions: OptionSet, Equatable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Run the vault's confirm command before each signature (`--ssh-confirm`).
    public static let confirm = SSHKeyOptions(rawValue: 1)
    /// An ssh-rsa key may sign with SHA-1 (a SIGN_REQUEST without flags; `--ssh-allow-sha1`).
    public static let allowSHA1 = SSHKeyOptions(rawValue: 2)
    /// The key signs on a connection bound as forwarded (`--ssh-allow-forwarding`).
    public static let allowForwarding = SSHKeyOptions(rawValue: 4)
    /// Every bit this version knows.
    public static let known: SSHKeyOptions = [.confirm, .allowSHA1, .allowForwarding]
}

/// One private key handed to the agent, from one entry.
public struct SSHKeyHandOver: Sendable {
    /// The entry's name (the agent serves a key per name; never shown to ssh clients).
    public var name: String
    /// The comment REQUEST_IDENTITIES answers with (the key file's own).
    public var comment: String
    /// How it may be used.
    public var options: SSHKeyOptions
    /// Seconds it is served from now; 0: as long as the vault is held.
    public var lifetimeSeconds: UInt32
    /// The unencrypted OpenSSH private key, in guarded memory.
    public var privateKey: SecureBytes

    /// A key to serve.
    public init(name: String, comment: String, options: SSHKeyOptions, lifetimeSeconds: UInt32, privateKey: SecureBytes) {
        self.name = name
        self.comment = comment
        self.options = options
        self.lifetimeSeconds = lifetimeSeconds
        self.privateKey = privateKey
    }
}

/// The ssh keys of one vault handed to the agent (`unlock --ssh`), proven by a key the agent holds.
public struct SSHKeysHandOver: Sendable {
    /// The vault they come from.
    public var vaultID: [UInt8]
    /// A file key of the vault the agent holds: the proof that the sender opened it.
    public var fileKey: SecureBytes
    /// Stop serving the vault's keys under `prefix` first (the first of a hand-over's requests).
    public var replacing: Bool
    /// The entry-name prefix the keys were chosen under (empty: every key of the vault).
    public var prefix: String
    /// The keys.
    public var keys: [SSHKeyHandOver]

    /// A hand-over of `keys`.
    public init(vaultID: [UInt8], fileKey: SecureBytes, replacing: Bool, prefix: String, keys: [SSHKeyHandOver]) {
        self.vaultID = vaultID
        self.fileKey = fileKey
        self.replacing = replacing
        self.prefix = prefix
        self.keys = keys
    }
}

/// A key the agent serves.
public struct SSHServedKey: Sendable {
    /// The entry it came from.
    public let name: String
    /// Its comment.
    public let comment: String
    /// Its options.
    public let options: SSHKeyOptions
    /// When it stops being served (on the keyring's clock); nil: with the vault.
    let expiry: Double?
    /// The key.
    public let key: SSHPrivateKey

    /// A key parsed from `handOver` at `now`.
    public init(_ handOver: SSHKeyHandOver, key: SSHPrivateKey, now: Double) {
        name = handOver.name
        comment = handOver.comment
        options = handOver.options
        expiry = handOver.lifetimeSeconds == 0 ? nil : now + Double(handOver.lifetimeSeconds)
        self.key = key
    }
}

/// A served key found for a SIGN_REQUEST, with what the server needs before it signs.
public struct SSHKeyMatch: Sendable {
    /// The vault that holds it.
    public let vaultID: [UInt8]
    /// The vault's path as last seen.
    public let path: String
    /// The key.
    public let served: SSHServedKey
    /// The vault's confirm command, when the key is served with `confirm`.
    public let confirmCommand: String?
}

extension AgentKeyring {
    /// The most ssh keys served, over every vault (`ssh-add -l` of 256 keys stays well under
    /// the 256 KiB of one answer for any key type but the largest RSA keys, which the size check bounds).
    public static let maxSSHKeys = 256

    /// Serves `keys` (parsed from `handOver`) for a vault the agent holds: `handOver.fileKey` must
    /// be one of its keys (else `unproven`; not held: `notHeld`). With `replacing`, the keys served
    /// under the prefix are dropped first. No confirm command is asked: the sender proved it holds
    /// the file key (itself handed out only past that command), with which it could read the keys.
    public mutating func serveSSHKeys(_ handOver: SSHKeysHandOver, keys: [SSHServedKey], now: Double) throws(Refusal) -> AddOutcome {
        expire(now: now)
        guard var vault = held[handOver.vaultID] else { return .notHeld }
        var proven = false
        for key in vault.keys { proven = key.constantTimeEquals(handOver.fileKey) || proven }
        guard proven else { throw .unproven }
        let kept = handOver.replacing ? vault.sshKeys.filter { !$0.name.utf8.starts(with: handOver.prefix.utf8) } : vault.sshKeys
        let merged = kept.filter { old in !keys.contains { $0.name == old.name } } + keys
        let others = held.filter { $0.key != handOver.vaultID }.values.flatMap(\.sshKeys)
        let identities = (others + merged).map { SSHAgentIdentity(publicBlob: $0.key.publicBlob, comment: $0.comment) }
        guard identities.count <= Self.maxSSHKeys,
              identities.reduce(5, { $0 + $1.encodedLength }) <= SSHAgentProtocol.maxMessageLength else { throw .tooManySSHKeys }
        vault.sshKeys = merged.sorted { $0.name < $1.name }
        vault.lastUsed = now
        held[handOver.vaultID] = vault
        return .held
    }

    /// Every key served, vaults ordered by path then id, keys by entry name; a public blob
    /// served twice (the same key in two entries or vaults) is listed once.
    public func sshIdentities(now: Double) -> [SSHAgentIdentity] {
        var seen = Set<[UInt8]>()
        return servedInOrder(now: now).compactMap { _, _, served in
            let blob = served.key.publicBlob
            guard seen.insert(blob).inserted else { return nil }
            return SSHAgentIdentity(publicBlob: blob, comment: served.comment)
        }
    }

    /// The first served key (in `sshIdentities`' order) whose public blob is `blob`, or nil.
    public func sshKey(blob: [UInt8], now: Double) -> SSHKeyMatch? {
        guard let (vaultID, vault, served) = servedInOrder(now: now).first(where: { $0.2.key.publicBlob == blob }) else { return nil }
        let confirms = served.options.contains(.confirm) && !vault.confirmCommand.isEmpty
        return SSHKeyMatch(vaultID: vaultID, path: vault.path, served: served, confirmCommand: confirms ? vault.confirmCommand : nil)
    }

    /// Signs with `match`'s key if it is still served (not locked, expired or replaced since it was
    /// found), under the caller's lock, and restarts the vault's idle clock: nil when it is gone.
    public mutating func sshSign(_ match: SSHKeyMatch, data: [UInt8], flags: UInt32, now: Double) -> [UInt8]? {
        expire(now: now)
        guard var vault = held[match.vaultID],
              let served = vault.sshKeys.first(where: { $0.name == match.served.name && $0.key.publicBlob == match.served.key.publicBlob })
        else { return nil }
        guard let signature = served.key.agentSignature(of: data, flags: flags, allowSHA1: served.options.contains(.allowSHA1)) else { return nil }
        vault.lastUsed = now
        held[match.vaultID] = vault
        return signature
    }

    /// How many ssh keys are served, over every vault.
    public var sshKeyCount: Int { held.values.reduce(0) { $0 + $1.sshKeys.count } }

    /// Drops the keys whose lifetime ended (called by `expire`).
    mutating func expireSSHKeys(now: Double) {
        for (vaultID, vault) in held where vault.sshKeys.contains(where: { $0.expiry.map { $0 <= now } ?? false }) {
            held[vaultID]?.sshKeys = vault.sshKeys.filter { $0.expiry.map { $0 > now } ?? true }
        }
    }

    /// When the next ssh key's lifetime ends, if any has one.
    var nextSSHExpiry: Double? { held.values.flatMap(\.sshKeys).compactMap(\.expiry).min() }

    private func servedInOrder(now: Double) -> [([UInt8], Held, SSHServedKey)] {
        held.filter { $0.value.expiry().map { $0 > now } ?? true }
            .sorted { $0.value.path != $1.value.path ? $0.value.path < $1.value.path : $0.key.lexicographicallyPrecedes($1.key) }
            .flatMap { vaultID, vault in
                vault.sshKeys.filter { $0.expiry.map { $0 > now } ?? true }.map { (vaultID, vault, $0) }
            }
    }
}
