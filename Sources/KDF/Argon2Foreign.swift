import CArgon2
import SecureMemory

// MARK: - Argon2 of another tool's file (KeePass's KDBX 4)

/// Which Argon2 a KDBX 4 database names in its KDF parameters.
public enum Argon2Variant: Sendable {
    /// Argon2d (KeePass's UUID ef636ddf-…): data-dependent addressing.
    case argon2d
    /// Argon2id (KeePass's UUID 9e298b19-…), what vaultfile itself uses.
    case argon2id
}

extension Argon2id {
    /// Derives `outputLength` bytes with Argon2d or Argon2id of Argon2 `version` (0x10 or 0x13),
    /// always through libargon2, for a KeePass database's key.
    ///
    /// The caller has checked `parameters` against the caps (`KDFParameters.check(against:)`)
    /// before calling: the memory is allocated here.
    public static func deriveForeign(password: UnsafeRawBufferPointer, salt: [UInt8], parameters: Argon2idParameters,
                                     variant: Argon2Variant, version: UInt32, secret: [UInt8] = [], associatedData: [UInt8] = [],
                                     outputLength: Int = 32) throws(KDFError) -> SecureBytes {
        try parameters.validate()
        guard salt.count >= 8 else { throw .invalidSaltLength(salt.count) }
        guard version == UInt32(ARGON2_VERSION_10.rawValue) || version == UInt32(ARGON2_VERSION_13.rawValue) else {
            throw .invalidParameters("Argon2 version \(version) is neither 0x10 nor 0x13")
        }
        return try viaLibargon2(password: password, salt: salt, parameters: parameters, secret: secret, associatedData: associatedData,
                                outputLength: outputLength, type: variant == .argon2d ? Argon2_d : Argon2_id, version: version)
    }
}
