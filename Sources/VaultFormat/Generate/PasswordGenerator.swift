import CSodium
import SecureMemory
import VaultModel

// MARK: - Random passwords and passphrases

/// Random passwords from libsodium's uniform generator (`randombytes_uniform`: no modulo bias).
public enum PasswordGenerator {
    /// The default length of a character password.
    public static let defaultLength = 24
    /// The default character set: letters, digits and symbols.
    public static let defaultCharset = "lower,upper,digits,symbols"

    /// The named classes a charset spec may combine.
    static let classes: [String: String] = [
        "lower": "abcdefghijklmnopqrstuvwxyz",
        "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "digits": "0123456789",
        "symbols": "!#$%&()*+,-./:;<=>?@[]^_{|}~",
        "alnum": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "hex": "0123456789abcdef",
    ]

    /// The characters a spec names: a comma-separated list of `lower`, `upper`, `digits`,
    /// `symbols`, `alnum`, `hex`, or `chars:LITERAL` (the literal characters, to the end of the spec).
    /// Duplicates are removed, so every distinct character is equally likely.
    public static func characters(forSpec spec: String) throws(VaultError) -> [Character] {
        var result: [Character] = []
        var remaining = Substring(spec)
        while !remaining.isEmpty {
            if remaining.hasPrefix("chars:") {
                result += remaining.dropFirst(6)
                break
            }
            let part = remaining.prefix { $0 != "," }
            remaining = remaining.dropFirst(part.count).drop { $0 == "," }
            guard let characters = classes[String(part)] else {
                throw .invalidName("unknown character class '\(part)'; use lower, upper, digits, symbols, alnum, hex or chars:LITERAL")
            }
            result += characters
        }
        var seen = Set<Character>()
        let unique = result.filter { seen.insert($0).inserted }
        guard unique.count >= 2 else { throw .invalidName("a character set needs at least two distinct characters") }
        return unique
    }

    /// `length` characters drawn uniformly from `characters`.
    public static func password(length: Int, characters: [Character]) throws(VaultError) -> [UInt8] {
        guard (1...4096).contains(length) else { throw .invalidName("the length must be between 1 and 4096") }
        ensureSodiumInitialised()
        var text = ""
        for _ in 0..<length {
            text.append(characters[Int(randombytes_uniform(UInt32(characters.count)))])
        }
        return Array(text.utf8)
    }

    /// `count` words drawn uniformly from the EFF Large Wordlist, joined by `separator`.
    public static func passphrase(words count: Int, separator: String) throws(VaultError) -> [UInt8] {
        guard (1...64).contains(count) else { throw .invalidName("the number of words must be between 1 and 64") }
        ensureSodiumInitialised()
        let list = EFFWordList.words
        let words = (0..<count).map { _ in list[Int(randombytes_uniform(UInt32(list.count)))] }
        return Array(words.joined(separator: separator).utf8)
    }

    /// The entropy in bits of a password of `length` from `alphabet` symbols.
    public static func entropyBits(length: Int, alphabet: Int) -> Double {
        Double(length) * log2(Double(alphabet))
    }

    /// The number of words in the shipped list.
    public static var wordListCount: Int { EFFWordList.words.count }
}

/// log2 without Foundation.
private func log2(_ value: Double) -> Double {
    var exponent = 0.0, x = value
    while x >= 2 { x /= 2; exponent += 1 }
    // ln(x)/ln(2) for x in [1, 2) by a short series around 1: precise enough for a display figure.
    let y = (x - 1) / (x + 1)
    var term = y, sum = 0.0
    for k in stride(from: 1.0, through: 39, by: 2) { sum += term / k; term *= y * y }
    return exponent + 2 * sum / 0.6931471805599453
}
