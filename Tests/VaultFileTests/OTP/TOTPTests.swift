import SecureMemory
import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// One-time passwords: RFC 4226 and RFC 6238 known answers, strict Base32, otpauth URIs
/// (hostile ones refused without echoing the secret), where an entry keeps its URI, templates,
/// and the import formats that carry TOTP seeds.
@Suite struct TOTPTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: bytes(text)) }

    // MARK: - OneTimePassword.hotp (RFC 4226 appendix D)

    @Test func test_hotp_matchesRFC4226AppendixD() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            #expect(OneTimePassword.hotp(secret: secret("12345678901234567890"), counter: UInt64(counter), digits: 6) == code)
        }
    }

    // MARK: - OneTimePassword.totp (RFC 6238 appendix B)

    @Test func test_totp_matchesEveryRFC6238AppendixBVector() throws {
        // The RFC's seeds: the ASCII digits repeated to 20, 32 and 64 bytes.
        let seeds: [OTPAlgorithm: String] = [
            .sha1: "12345678901234567890",
            .sha256: "12345678901234567890123456789012",
            .sha512: "1234567890123456789012345678901234567890123456789012345678901234",
        ]
        let vectors: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, sha1, sha256, sha512) in vectors {
            for (algorithm, code) in [(OTPAlgorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
                let uri = "otpauth://totp/RFC?secret=\(base32(bytes(seeds[algorithm]!)))&algorithm=\(algorithm.rawValue)&digits=8&period=30"
                let parameters = try TOTPParameters(uri: bytes(uri))
                #expect(try OneTimePassword.totp(parameters, at: time).code == code, "\(algorithm) at \(time)")
            }
        }
    }

    @Test func test_totp_givesTheSecondsLeftInThePeriod() throws {
        let parameters = try TOTPParameters(uri: bytes("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQ"))
        #expect(try OneTimePassword.totp(parameters, at: 60).secondsLeft == 30)
        #expect(try OneTimePassword.totp(parameters, at: 89).secondsLeft == 1)
    }

    @Test func test_totp_refusesATimeBefore1970() throws {
        let parameters = try TOTPParameters(uri: bytes("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQ"))
        #expect(throws: OTPError.invalidTime(-1)) { try OneTimePassword.totp(parameters, at: -1) }
    }

    @Test func test_totp_tenDigitsArePaddedWithZeros() throws {
        let parameters = try TOTPParameters(uri: bytes("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=10"))
        let code = try OneTimePassword.totp(parameters, at: 59).code
        #expect(code.count == 10)
        #expect(code.hasSuffix("94287082"))  // 10 digits of the same 31-bit number as the 8-digit vector
    }

    // MARK: - Base32.decode

    @Test func test_decode_acceptsCaseSpacesAndExactPadding() throws {
        for text in ["MZXW6YTBOI", "mzxw6ytboi", "MZXW 6YTB OI", "MZXW6YTBOI======"] {
            #expect(try Base32.decode(bytes(text)).withUnsafeBytes { Array($0) } == bytes("foobar"))
        }
        #expect(try Base32.decode(bytes("MY======")).withUnsafeBytes { Array($0) } == bytes("f"))
    }

    @Test func test_decode_refusesAnythingNotStrictBase32() {
        for text in ["MZXW6YTBO1", "MZXW6YTBOI=", "MZ=XW6YTBOI", "MZXW6YTBOI-", "M", "MZX", "MZ", "", "MY=====", "MZXW6YTBOI\n"] {
            #expect(throws: OTPError.self, "\(text)") { try Base32.decode(bytes(text)) }
        }
        #expect(throws: OTPError.self) { try Base32.decode(bytes("MZ")) }  // 'Z' leaves non-zero bits
    }

    // MARK: - TOTPParameters.init(uri:)

    @Test func test_init_readsEveryParameter() throws {
        let parameters = try TOTPParameters(uri: bytes("otpauth://totp/ACME%20Co:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=ACME%20Co&algorithm=sha256&digits=8&period=60&image=x\n"))
        #expect(parameters.algorithm == .sha256)
        #expect(parameters.digits == 8)
        #expect(parameters.period == 60)
        #expect(parameters.issuer == "ACME Co")
        #expect(parameters.label == "ACME Co:alice@example.com")
        #expect(parameters.secret.count == 10)
    }

    @Test func test_init_defaultsToSHA1SixDigitsThirtySeconds() throws {
        let parameters = try TOTPParameters(uri: bytes("OTPAUTH://TOTP/Example:bob?secret=JBSWY3DPEHPK3PXP"))
        #expect(parameters.algorithm == .sha1 && parameters.digits == 6 && parameters.period == 30)
        #expect(parameters.issuer == "Example")
    }

    @Test func test_init_refusesHostileURIsWithoutShowingTheSecret() {
        let secretText = "JBSWY3DPEHPK3PXP"
        let hostile = [
            "otpauth://totp/x?secret=JBSWY3DPEHPK3PX1",                     // bad Base32
            "otpauth://totp/x?secret=\(secretText)&period=0",               // zero period
            "otpauth://totp/x?secret=\(secretText)&period=3601",
            "otpauth://totp/x?secret=\(secretText)&digits=100",             // 100 digits
            "otpauth://totp/x?secret=\(secretText)&digits=5",
            "otpauth://totp/x?secret=\(secretText)&digits=-6",
            "otpauth://hotp/x?secret=\(secretText)&counter=1",               // HOTP
            "otpauth://totp/x?issuer=nobody",                                // missing secret
            "otpauth://totp/x?secret=",
            "otpauth://totp/x?secret=\(String(repeating: "A", count: 216))", // 135 bytes > 128
            "otpauth://totp/x?secret=\(secretText)&algorithm=MD5",
            "otpauth://totp/x?secret=\(secretText)&secret=\(secretText)",
            "otpauth://totp/x?secret=\(secretText)%ZZ",
            "https://example.com/?secret=\(secretText)",
            "otpauth://totp",
            "otpauth://totp/x?secret=" + String(repeating: "A", count: 5000),
        ]
        for uri in hostile {
            do {
                _ = try TOTPParameters(uri: bytes(uri))
                Issue.record("accepted \(uri)")
            } catch {
                #expect(!error.description.contains(secretText), "\(error)")
                #expect(!error.description.contains("AAAAAAAA"), "\(error)")
            }
        }
    }

    @Test func test_init_acceptsA128ByteSecret() throws {
        let parameters = try TOTPParameters(uri: bytes("otpauth://totp/x?secret=\(base32([UInt8](repeating: 7, count: 128)))"))
        #expect(parameters.secret.count == 128)
    }

    // MARK: - Vault.totpParameters(of:)

    @Test func test_totpParameters_readsTotpThenOtpThenTheValue() throws {
        let uri1 = "otpauth://totp/a?secret=GEZDGNBVGY3TQOJQ", uri2 = "otpauth://totp/b?secret=JBSWY3DPEHPK3PXP"
        var vault = Vault()
        try vault.setValue(bytes("pw"), for: "both", part: .value)
        try vault.setValue(bytes(uri1), for: "both", part: .field("totp"))
        try vault.setValue(bytes(uri2), for: "both", part: .field("otp"))
        try vault.setValue(bytes("pw"), for: "otp-only", part: .value)
        try vault.setValue(bytes(uri2), for: "otp-only", part: .field("otp"))
        try vault.setValue(bytes(uri1), for: "value", part: .value)
        try vault.setValue(bytes("pw"), for: "none", part: .value)
        #expect(try vault.totpParameters(of: "both").label == "a")
        #expect(try vault.totpParameters(of: "otp-only").label == "b")
        #expect(try vault.totpParameters(of: "value").label == "a")
        #expect(throws: OTPError.noTOTP("none")) { try vault.totpParameters(of: "none") }
        #expect(throws: VaultError.entryNotFound("missing")) { try vault.totpParameters(of: "missing") }
    }

    // MARK: - Template.render: vf-totp://

    @Test func test_render_replacesTotpReferencesWithTheCode() throws {
        var vault = Vault()
        try vault.setValue(bytes("pw"), for: "site", part: .value)
        try vault.setValue(bytes("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8"), for: "site", part: .field("totp"))
        let output = try Template.render(bytes("c={{ vf-totp://site }} u={{ vf://site#totp }}"), from: vault, time: 59)
        #expect(String(decoding: output, as: UTF8.self) == "c=94287082 u=otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8")
        #expect(throws: VaultError.referenceNotFound("nope", line: 2)) { try Template.render(bytes("\n{{ vf-totp://nope }}"), from: vault) }
        #expect(throws: VaultError.self) { try Template.render(bytes("{{ vf-totp://other }}"), from: try Self.vault(with: "other", value: "plain")) }
    }

    // MARK: - Import of TOTP seeds

    @Test func test_read_mapsKeePassXCAndBitwardenTOTPToTheTotpField() throws {
        let uri = "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"
        let keepass = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n\"Root\",\"site\",\"u\",\"p\",\"\",\"\",\"\(uri)\"\n"
        let fromKeePass = try Interchange.parse(bytes(keepass), format: .keepassxcCSV, now: 0)
        #expect(fromKeePass.first?.entry.fields["totp"] == bytes(uri))
        let bitwarden = #"{"encrypted":false,"items":[{"type":1,"name":"site","login":{"username":"u","password":"p","totp":"\#(uri)"}}]}"#
        let fromBitwarden = try Interchange.parse(bytes(bitwarden), format: .bitwardenJSON, now: 0)
        #expect(fromBitwarden.first?.entry.fields["totp"] == bytes(uri))
    }

    // MARK: - Helpers

    private static func vault(with name: String, value: String) throws -> Vault {
        var vault = Vault()
        try vault.setValue(Array(value.utf8), for: name, part: .value)
        return vault
    }

    /// RFC 4648 Base32 without padding, to build URIs from the RFCs' ASCII seeds.
    private func base32(_ data: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var output = "", buffer = 0, bits = 0
        for byte in data {
            buffer = (buffer << 8) | Int(byte); bits += 8
            while bits >= 5 { bits -= 5; output.append(alphabet[(buffer >> bits) & 31]) }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { output.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return output
    }
}

// MARK: - Steam Guard (encoder=steam)

extension TOTPTests {
    /// Known answers from an independent implementation (Python's hmac) of Steam Guard's published
    /// algorithm: HOTP-SHA1, period 30, five characters of `23456789BCDFGHJKMNPQRTVWXY`.
    @Test func test_totp_computesSteamGuardCodes() throws {
        let parameters = try TOTPParameters(uri: Array("otpauth://totp/Steam:me?secret=JBSWY3DPEHPK3PXP&issuer=Steam&encoder=steam".utf8))
        #expect(parameters.encoder == .steam && parameters.digits == 5)
        for (time, code) in [(0, "VH8YJ"), (59, "2YXGV"), (1_111_111_109, "CWDGV"), (1_700_000_000, "2KM2P")] as [(Int64, String)] {
            #expect(try OneTimePassword.totp(parameters, at: time).code == code, "at \(time)")
        }
    }

    @Test func test_init_refusesAnUnknownEncoderAndSteamWithOtherDigits() {
        for uri in ["otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&encoder=yandex", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&encoder=steam&digits=6"] {
            #expect(throws: OTPError.self, "\(uri)") { try TOTPParameters(uri: Array(uri.utf8)) }
        }
    }
}
