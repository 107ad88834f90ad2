import SecureMemory
import VaultModel

// MARK: - Plugin names

/// The name of an age plugin, as `age1NAME1…`, `AGE-PLUGIN-NAME-1…` and the binary
/// `age-plugin-NAME` carry it (C2SP age-plugin.md).
///
/// vaultfile accepts only `[A-Za-z0-9._+-]+` (what age-plugin.md's plugins use), at most
/// `maxLength` bytes: a name is part of a file name looked up in PATH, so a `/`, a space or a
/// control character must never reach it (age's advisory GHSA-32gq-x56h-299c).
public enum AgePluginName {
    /// The longest name accepted.
    public static let maxLength = 64

    /// Whether `name` is 1 to `maxLength` characters of `[A-Za-z0-9._+-]`.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return !bytes.isEmpty && bytes.count <= maxLength && bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2B || byte == 0x2D
        }
    }

    /// The binary that serves `name`: `age-plugin-NAME`.
    public static func binary(_ name: String) -> String { "age-plugin-" + name }

    /// The longest Bech32 text of a plugin recipient or identity: plugins put more than an X25519
    /// key in them (a TPM's wrapped key), and age sets no length; this bounds a pasted line.
    static let maxEncodedLength = 2_048
}

// MARK: - Recipients

/// An age plugin recipient, `age1NAME1…`: wrapping to it runs `age-plugin-NAME` (recipient-v1).
/// Its data is the plugin's business; vaultfile checks the Bech32 checksum and the name only, and
/// hands the text to the plugin as given.
public struct AgePluginRecipient: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The plugin's name (lowercase, as the Bech32 prefix holds it).
    public let name: String
    /// The recipient as written (lowercase Bech32).
    public let encoding: String

    /// Whether `text` is shaped as a plugin recipient: `age1` and a name before Bech32's last `1`
    /// (an X25519 recipient's prefix is `age` alone; `age1pq1…` is age's own post-quantum kind).
    public static func looksLikePlugin(_ text: String) -> Bool {
        guard text.hasPrefix("age1"), let separator = text.utf8.lastIndex(of: UInt8(ascii: "1")) else { return false }
        let prefix = String(text[..<separator])
        return prefix.count > 4 && prefix.lowercased() != "age1pq"
    }

    /// Parses `age1NAME1…`: lowercase Bech32 with a valid checksum, a name of `AgePluginName`'s
    /// characters. The message never quotes the text.
    public init(parsing text: String) throws(VaultError) {
        guard Self.looksLikePlugin(text) else { throw .malformedInput("not an age plugin recipient (age1NAME1…)") }
        let prefix: String
        do {
            prefix = try Bech32.decodeValues(text, maxLength: AgePluginName.maxEncodedLength).humanReadablePart
        } catch {
            throw .malformedInput("the age plugin recipient is not valid Bech32: \(error.description)")
        }
        guard prefix == prefix.lowercased() else { throw .malformedInput("an age plugin recipient is lowercase (age1NAME1…)") }
        let name = String(prefix.dropFirst(4))
        guard AgePluginName.isValid(name) else {
            throw .malformedInput("the age plugin recipient names a plugin with characters other than A-Z, a-z, 0-9 and . _ + -")
        }
        self.name = name
        self.encoding = text
    }

    /// The recipient as written.
    public var description: String { encoding }
}

// MARK: - Recipients kept in the metadata

extension AgePluginRecipient {
    /// Whether `bytes`, a plugin keyslot's key in the metadata (docs/FORMAT.md §3.12), is a
    /// recipient as `init(parsing:)` reads one: 1 to `AgePluginName.maxEncodedLength` bytes of
    /// printable ASCII (so no byte is decoded as anything but itself), lowercase Bech32 with a valid
    /// checksum and a valid plugin name. Anything else names no program a rotation could run.
    package static func isValidStored(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= AgePluginName.maxEncodedLength, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        return (try? AgePluginRecipient(parsing: String(decoding: bytes, as: UTF8.self))) != nil
    }
}

// MARK: - Identities

/// An age plugin identity, `AGE-PLUGIN-NAME-1…`: unwrapping with it runs `age-plugin-NAME`
/// (identity-v1). It may hold key material (a TPM's sealed key): it is never printed.
public struct AgePluginIdentity: Sendable, Equatable {
    /// The plugin's name, lowercased (the binary's name).
    public let name: String
    /// The identity as written (uppercase Bech32), sent to the plugin only.
    public let encoding: String

    /// Whether `line` starts as a plugin identity does.
    public static func looksLikePlugin(_ line: String) -> Bool { line.uppercased().hasPrefix("AGE-PLUGIN-") }

    /// Parses `AGE-PLUGIN-NAME-1…`: uppercase Bech32 with a valid checksum, a name of
    /// `AgePluginName`'s characters. The message never quotes the text.
    public init(parsing text: String) throws(VaultError) {
        guard Self.looksLikePlugin(text) else { throw .malformedInput("not an age plugin identity (AGE-PLUGIN-NAME-1…)") }
        let prefix: String
        do {
            prefix = try Bech32.decodeValues(text, maxLength: AgePluginName.maxEncodedLength).humanReadablePart
        } catch {
            throw .malformedInput("the age plugin identity is not valid Bech32: \(error.description)")
        }
        guard prefix == prefix.uppercased(), prefix.hasSuffix("-"), prefix.count > "AGE-PLUGIN--".count else {
            throw .malformedInput("an age plugin identity is uppercase, AGE-PLUGIN-NAME-1…")
        }
        let name = String(prefix.dropFirst("AGE-PLUGIN-".count).dropLast()).lowercased()
        guard AgePluginName.isValid(name) else {
            throw .malformedInput("the age plugin identity names a plugin with characters other than A-Z, a-z, 0-9 and . _ + -")
        }
        self.name = name
        self.encoding = text
    }
}

// MARK: - Identity files with plugin lines

extension AgeIdentityFile {
    /// The identities in `bytes` as `parseAll` reads them (X25519 and post-quantum), and the
    /// `AGE-PLUGIN-…` lines beside them (identity files made for age plugins mix them). A file of
    /// plugin lines alone is valid. More than `limit` lines are refused before any key is made
    /// (`total`: the cap across every identity source, as `parseAll` names it).
    public static func parseWithPlugins(_ bytes: [UInt8], source: String, limit: Int = .max,
                                        total: Int = .max) throws(VaultError) -> (identities: [AgeAnyIdentity], plugins: [AgePluginIdentity]) {
        var identities: [AgeAnyIdentity] = [], plugins: [AgePluginIdentity] = []
        let lines = try meaningfulLines(bytes, what: source)
        try checkIdentityCount(lines.count, source: source, limit: limit, total: total)
        for (number, line) in lines {
            do {
                if AgePluginIdentity.looksLikePlugin(line) {
                    plugins.append(try AgePluginIdentity(parsing: line))
                } else if AgePQIdentity.looksLike(line) {
                    identities.append(.postQuantum(try AgePQIdentity(parsing: line)))
                } else {
                    identities.append(.x25519(try AgeIdentity(parsing: line)))
                }
            } catch {
                throw .malformedInput("\(source), line \(number): \(error.description)")
            }
        }
        guard !identities.isEmpty || !plugins.isEmpty else {
            throw .malformedInput("\(source) holds no identity (AGE-SECRET-KEY-1…, AGE-SECRET-KEY-PQ-1… or AGE-PLUGIN-… lines)")
        }
        return (identities, plugins)
    }
}
