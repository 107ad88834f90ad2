import VaultFormat
import VaultModel

// MARK: - A TOTP as another tool holds it, as vaultfile computes it

/// Turns the TOTPs of other password managers into `otpauth://totp/` URIs that `vaultfile totp`
/// computes: a URI is kept as it is; a bare Base32 secret (Bitwarden, KeePass, 1Password CSV)
/// becomes a URI with the default parameters (SHA1, 6 digits, 30 s), as those tools compute it;
/// `steam://SECRET` (Bitwarden, KeePassXC) becomes a URI with `encoder=steam` and `digits=5`,
/// which this build computes as Steam Guard's five characters and older builds refuse (digits
/// below 6), never a wrong code.
enum ForeignTOTP {
    /// What became of an item's TOTP.
    enum Outcome: Equatable {
        /// The URI to store in the field `totp`.
        case uri(String)
        /// Text `totp` cannot compute (stored as it is in `totp`, so that nothing is lost): why.
        case unusable(text: String, why: String)
    }

    /// The URI for `text` (an item's TOTP), labelled `label` when the text has no label of its own.
    static func normalized(_ text: String, label: String) -> Outcome? {
        let trimmed = String(text.unicodeScalars.drop(while: isSpace).reversed().drop(while: isSpace).reversed().map(Character.init))
        guard !trimmed.isEmpty else { return nil }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("otpauth://") {
            return check(steamDigitsFixed(trimmed), original: trimmed)
        }
        if lower.hasPrefix("steam://") {
            let secret = compact(String(trimmed.dropFirst("steam://".count)))
            return check("otpauth://totp/\(percentEncoded("Steam:" + label))?secret=\(secret)&issuer=Steam&digits=5&encoder=steam", original: trimmed)
        }
        let secret = compact(trimmed)
        guard !secret.isEmpty, secret.utf8.allSatisfy({ isBase32Symbol($0) }) else {
            return .unusable(text: trimmed, why: "it is neither an otpauth:// URI, a steam:// secret nor a Base32 secret")
        }
        return check("otpauth://totp/\(percentEncoded(label))?secret=\(secret)", original: trimmed)
    }

    /// `uri` with `digits=5` when it says `encoder=steam` with another digits value: KeePassXC's
    /// CSV export writes Steam's TOTP as `…&digits=6&encoder=steam`, and KeePassXC (as Steam)
    /// computes five characters whatever the digits say; any other URI as it is.
    static func steamDigitsFixed(_ uri: String) -> String {
        guard let question = uri.firstIndex(of: "?") else { return uri }
        var parameters = uri[uri.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map(String.init)
        guard parameters.contains(where: { $0.lowercased() == "encoder=steam" }) else { return uri }
        for index in parameters.indices where parameters[index].lowercased().hasPrefix("digits=") { parameters[index] = "digits=5" }
        return String(uri[...question]) + parameters.joined(separator: "&")
    }

    /// `uri` when `vaultfile totp` computes it, else the original text and the reason.
    private static func check(_ uri: String, original: String) -> Outcome {
        do {
            _ = try TOTPParameters(uri: Array(uri.utf8))
            return .uri(uri)
        } catch {
            return .unusable(text: original, why: error.description)
        }
    }

    /// A secret without spaces or '=' padding, in capitals (authenticators show groups in either case).
    private static func compact(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != " " && $0 != "=" && $0 != "-" }.map { Character($0) }).uppercased()
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    private static func isBase32Symbol(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x32...0x37).contains(byte)
    }

    /// `text` with every byte outside RFC 3986's unreserved characters (and ':') %-escaped.
    static func percentEncoded(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            let kept = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
                || byte == UInt8(ascii: ":")
            if kept { output.unicodeScalars.append(Unicode.Scalar(byte)) } else {
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                output += "%"
                output.unicodeScalars.append(digits[Int(byte >> 4)])
                output.unicodeScalars.append(digits[Int(byte & 0x0F)])
            }
        }
        return output
    }
}
