import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Bech32 against BIP 173, and age's key encodings against age's spec and the real age-keygen.
@Suite struct AgeKeyTests {
    // MARK: - Bech32.decode

    /// BIP 173's valid Bech32 strings.
    static let validBech32 = [
        "A12UEL5L",
        "a12uel5l",
        "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
        "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
        "11" + String(repeating: "q", count: 82) + "c8247j",
        "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
        "?1ezyfcl",
    ]

    /// BIP 173's invalid Bech32 strings and why each is invalid.
    static let invalidBech32: [(String, Bech32.Failure)] = [
        ("\u{20}1nwldj5", .invalidCharacter),
        ("\u{7F}1axkwrx", .invalidCharacter),
        ("\u{80}1eym55h", .invalidCharacter),
        ("an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx", .tooLong),
        ("pzry9x0s0muk", .noSeparator),
        ("1pzry9x0s0muk", .emptyHumanReadablePart),
        ("x1b4n0q5v", .invalidCharacter),
        ("li1dgmt3", .checksumTooShort),
        ("de1lg7wt\u{FF}", .invalidCharacter),
        ("A1G7SGD8", .invalidChecksum),
        ("10a06t8", .emptyHumanReadablePart),
        ("1qzzfhee", .emptyHumanReadablePart),
    ]

    @Test func test_decode_acceptsEveryValidBIP173String() throws {
        for text in Self.validBech32 {
            let (hrp, values) = try Bech32.decodeValues(text, maxLength: 90)
            #expect(hrp.count == text.utf8.lastIndex(of: UInt8(ascii: "1")).map { text.utf8.distance(from: text.utf8.startIndex, to: $0) }, "\(text)")
            #expect(values.allSatisfy { $0 < 32 })
        }
        // Segwit addresses from BIP 173 are Bech32 strings too (witness program aside).
        _ = try Bech32.decodeValues("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4")
    }

    @Test func test_decode_refusesEveryInvalidBIP173String() {
        for (text, failure) in Self.invalidBech32 {
            #expect(throws: failure, "\(text.debugDescription)") { _ = try Bech32.decodeValues(text) }
        }
    }

    @Test func test_decode_refusesMixedCaseAndBadPadding() {
        #expect(throws: Bech32.Failure.mixedCase) { _ = try Bech32.decodeValues("A12uEL5L") }
        // "a1" + one data value + checksum: 5 bits cannot form a byte.
        let oneValue = Bech32.encode(humanReadablePart: "a", values: [1])
        #expect(throws: Bech32.Failure.invalidPadding) { _ = try Bech32.decode(oneValue) }
    }

    // MARK: - Bech32.encode

    @Test func test_encode_roundTripsBytes() throws {
        for length in [0, 1, 5, 31, 32, 33] {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Bech32.encode(humanReadablePart: "test", data: data)
            let decoded = try Bech32.decode(text)
            #expect(decoded.humanReadablePart == "test" && decoded.data == data)
            #expect(try Bech32.decode(Bech32.encode(humanReadablePart: "test", data: data, upperCase: true)).data == data)
        }
    }

    @Test func test_decode_catchesEverySingleCharacterChange() throws {
        let text = Array(AgeKeyTests.specRecipient.utf8)
        for index in 4..<text.count {
            for replacement in Bech32.alphabet where replacement != text[index] {
                var changed = text
                changed[index] = replacement
                #expect(throws: Bech32.Failure.invalidChecksum) { _ = try Bech32.decode(String(decoding: changed, as: UTF8.self)) }
            }
        }
    }

    // MARK: - AgeIdentity and AgeRecipient

    /// The identity and recipient of C2SP's age specification (c2sp.org/age, "The X25519 recipient type").
    static let specIdentity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
    static let specRecipient = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"

    @Test func test_identity_matchesTheAgeSpecification() throws {
        let identity = try AgeIdentity(parsing: Self.specIdentity)
        #expect(identity.recipient.description == Self.specRecipient)
        #expect(identity.encodedSecretKey() == Self.specIdentity)
        #expect(try AgeRecipient(parsing: Self.specRecipient) == identity.recipient)
    }

    @Test func test_identity_refusesWhatAgeRefuses() {
        #expect(throws: VaultError.self) { _ = try AgeIdentity(parsing: Self.specIdentity.lowercased()) }
        #expect(throws: VaultError.self) { _ = try AgeIdentity(parsing: Self.specRecipient) }
        #expect(throws: VaultError.self) { _ = try AgeRecipient(parsing: Self.specRecipient.uppercased()) }
        #expect(throws: VaultError.self) { _ = try AgeRecipient(parsing: Self.specIdentity) }
        // A 31-byte key under the right prefix.
        #expect(throws: VaultError.self) { _ = try AgeRecipient(parsing: Bech32.encode(humanReadablePart: "age", data: [UInt8](repeating: 1, count: 31))) }
    }

    /// The review's finding: a low-order `age1…` key came back as `Error: lowOrderPoint` (exit 1)
    /// from the wrap; the parser now refuses it, naming the key and why.
    @Test func test_recipientParse_refusesEveryLowOrderPointNamingItAndWhy() {
        for point in CryptoBuildingBlockTests.lowOrderPoints {
            let text = Bech32.encode(humanReadablePart: "age", data: Hex.decode(point))
            #expect(throws: VaultError.malformedInput("the age recipient \(text) is a low-order X25519 point, no one's real key: "
                                                      + "a slot wrapped to it would open for anyone")) { _ = try AgeRecipient(parsing: text) }
        }
        #expect(throws: Never.self) { _ = try AgeRecipient(parsing: Self.specRecipient) }
    }

    @Test func test_identityError_neverQuotesTheKey() {
        var broken = Array(Self.specIdentity.utf8)
        broken[30] = broken[30] == UInt8(ascii: "Q") ? UInt8(ascii: "P") : UInt8(ascii: "Q")
        let text = String(decoding: broken, as: UTF8.self)
        do {
            _ = try AgeIdentityFile.parse(Array(("# comment\n" + text + "\n").utf8), source: "key.txt")
            Issue.record("a broken identity parsed")
        } catch {
            #expect(error.description.contains("key.txt, line 2"))
            #expect(!error.description.contains("GFPYYSJZ"))
        }
    }

    // MARK: - AgeIdentityFile.parse

    @Test func test_parse_readsCommentsBlankLinesAndCRLF() throws {
        let text = "# created: 2025-01-01T00:00:00Z\r\n# public key: \(Self.specRecipient)\r\n\r\n\(Self.specIdentity)\r\n   \n"
        let identities = try AgeIdentityFile.parse(Array(text.utf8), source: "f")
        #expect(identities.map(\.recipient.description) == [Self.specRecipient])
    }

    @Test func test_parse_refusesEmptyFilesPluginsAndBinary() {
        #expect(throws: VaultError.self) { _ = try AgeIdentityFile.parse(Array("# nothing\n\n".utf8), source: "f") }
        #expect(throws: VaultError.self) { _ = try AgeIdentityFile.parse(Array("AGE-PLUGIN-YUBIKEY-1QQQQQQ\n".utf8), source: "f") }
        #expect(throws: VaultError.self) { _ = try AgeIdentityFile.parse([0xFF, 0xFE, 0x00], source: "f") }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: AgeTool.keygen), "age-keygen is not installed (apt-get install age): real age keys skipped"))
    func test_parse_readsRealAgeKeygenFiles() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        for index in 0..<3 {
            let path = folder.path("key\(index).txt")
            try AgeTool.run(AgeTool.keygen, ["-o", path])
            let identities = try AgeIdentityFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
            let expected = try AgeTool.run(AgeTool.keygen, ["-y", path]).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(identities.count == 1)
            #expect(identities.first?.recipient.description == expected)
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: AgeTool.keygen), "age-keygen is not installed (apt-get install age): real age keys skipped"))
    func test_generate_ageKeygenDerivesTheSameRecipient() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let identity = AgeIdentity.generate()
        let path = folder.path("ours.txt")
        try Data((identity.encodedSecretKey() + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let theirs = try AgeTool.run(AgeTool.keygen, ["-y", path]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(theirs == identity.recipient.description)
    }
}

// MARK: - Helpers

/// The age tools, when installed (Debian's `age` package).
enum AgeTool {
    static let keygen = "/usr/bin/age-keygen"
    static let age = "/usr/bin/age"

    /// Runs `tool arguments…`, returns its stdout; throws when it exits non-zero.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], stdin: [UInt8] = []) throws -> String {
        let output = try ChildProcess(executable: tool, arguments: arguments, environment: ["PATH": "/usr/bin:/bin"],
                                      directory: FileManager.default.currentDirectoryPath, stdin: stdin).finish()
        guard output.ending == .exit(0) else { throw CocoaError(.executableLoad) }
        return String(decoding: output.stdout, as: UTF8.self)
    }
}
