import VaultFormat
import VaultModel

// MARK: - Text that is plainly no recipient

extension Recipients {
    /// Refuses, naming what it is, text given as a recipient that is plainly something else: a
    /// secret key pasted by mistake (`AGE-SECRET-KEY-1…`, `AGE-SECRET-KEY-PQ-1…`, a plugin's
    /// `AGE-PLUGIN-…` identity), never echoed; or an OpenSSH public key line of a kind vaultfile does
    /// not take (`ecdsa-sha2-nistp256`, `sk-ssh-ed25519@openssh.com`, …), named by its kind as
    /// `ssh-dss` is. Other text falls through to the parsers.
    static func refuseMisplaced(_ text: String) throws(VaultError) {
        let upper = text.uppercased()
        if upper.hasPrefix("AGE-SECRET-KEY-") || upper.hasPrefix("AGE-PLUGIN-") {
            throw .malformedInput("this is a secret key (an identity), not a recipient: give its public key instead (the '# public key:' "
                                  + "line of its file, or what 'age-keygen -y FILE' prints); keep the secret key private")
        }
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].hasPrefix("AAAA"), !parts[0].hasPrefix("ssh-"), parts[0].utf8.count <= 64,
              parts[0].utf8.allSatisfy({ isKeyTypeByte($0) }), parts[0].contains("-") else { return }
        throw .malformedInput("'\(parts[0])' keys are not supported; vaultfile takes ssh-ed25519 and ssh-rsa keys (and age1… recipients)")
    }

    /// A byte of an OpenSSH key type name: lower-case letters, digits, '-', '.', '@'.
    private static func isKeyTypeByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x2E || byte == 0x40
    }
}
