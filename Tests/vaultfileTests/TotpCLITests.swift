import Foundation
import Testing

/// `vaultfile totp`, `set --totp` and `inject`'s `vf-totp://`, run as the built binary.
@Suite struct TotpCLITests {
    private static let uri = "otpauth://totp/ACME:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8"
    private static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    private func vaultWithSeed() throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        let set = try cli.run(["set", "site"] + cli.unlock(), stdin: Array("pw".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let totp = try cli.run(["set", "site", "--totp"] + cli.unlock(), stdin: Array((Self.uri + "\n").utf8))
        #expect(totp.status == 0, "\(totp.stderr)")
        return cli
    }

    // MARK: - totp

    @Test func test_totp_printsTheRFC6238CodeAtTheGivenTime() throws {
        let cli = try vaultWithSeed(); defer { cli.directory.remove() }
        let code = try cli.run(["totp", "site", "--at", "59"] + cli.unlock())
        #expect(code.status == 0, "\(code.stderr)")
        #expect(code.text == "94287082", "no newline when stdout is not a terminal")
        let json = try cli.run(["totp", "site", "--at", "59", "--json"] + cli.unlock())
        #expect(json.text == "{\"code\":\"94287082\",\"period\":30,\"seconds_left\":1}\n")
    }

    @Test func test_totp_entryWithoutASeedExitsOneWithAHint() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        _ = try cli.run(["set", "plain"] + cli.unlock(), stdin: Array("pw".utf8))
        let result = try cli.run(["totp", "plain"] + cli.unlock())
        #expect(result.status == 1)
        #expect(result.stderr.contains("holds no TOTP URI"))
        #expect(result.stderr.contains("--totp"))
        #expect(try cli.run(["totp", "missing"] + cli.unlock()).status == 1)
    }

    // MARK: - set --totp

    @Test func test_set_totpStoresTheURIInTheTotpField() throws {
        let cli = try vaultWithSeed(); defer { cli.directory.remove() }
        let stored = try cli.run(["get", "site", "--field", "totp"] + cli.unlock())
        #expect(stored.text == Self.uri, "the trailing newline of echo is dropped")
        #expect(try cli.run(["get", "site"] + cli.unlock()).text == "pw", "the value is untouched")
    }

    @Test func test_set_totpRefusesHostileURIsWithoutShowingTheSecret() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let before = try cli.read("t.vault")
        for query in ["secret=\(Self.secret)1", "secret=\(Self.secret)&period=0", "secret=\(Self.secret)&digits=100", "issuer=x"] {
            let result = try cli.run(["set", "site", "--totp"] + cli.unlock(), stdin: Array("otpauth://totp/x?\(query)".utf8))
            #expect(result.status == 2, "\(query): \(result.stderr)")
            #expect(result.stderr.contains("otpauth"), "\(result.stderr)")
            #expect(!result.stderr.contains(Self.secret))
        }
        let hotp = try cli.run(["set", "site", "--totp"] + cli.unlock(), stdin: Array("otpauth://hotp/x?secret=\(Self.secret)".utf8))
        #expect(hotp.status == 2 && hotp.stderr.contains("HOTP"))
        #expect(try cli.read("t.vault") == before, "nothing was written")
    }

    @Test func test_set_totpWithFieldIsAUsageError() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "site", "--totp", "--field", "x"] + cli.unlock(), stdin: Array(Self.uri.utf8)).status == 64)
    }

    // MARK: - inject

    @Test func test_inject_vfTotpIsTheCurrentCodeAndVfTotpFieldTheURI() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let slow = "otpauth://totp/x?secret=\(Self.secret)&period=3600"
        _ = try cli.run(["set", "site", "--totp"] + cli.unlock(), stdin: Array(slow.utf8))
        let code = try cli.run(["totp", "site"] + cli.unlock()).text
        let rendered = try cli.run(["inject"] + cli.unlock(), stdin: Array("c={{ vf-totp://site }} u={{ vf://site#totp }}".utf8))
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(rendered.text == "c=\(code) u=\(slow)")
    }

    // MARK: - totp --at

    @Test func test_totp_aNegativeTimeIsAClearUsageError() throws {
        let cli = try CLI.withVault(["otp": "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"]); defer { cli.directory.remove() }
        for arguments in [["--at", "-1"], ["--at=-1"]] {
            let result = try cli.run(["totp", "otp"] + arguments + cli.unlock())
            #expect(result.status == 64)
            #expect(result.stderr.contains("--at takes a time of 0 or more (seconds since 1970), not -1"), "\(result.stderr)")
            #expect(!result.stderr.contains("Missing value") && !result.stderr.contains("Usage:"))
        }
        #expect(try cli.run(["totp", "otp", "--at", "59"] + cli.unlock()).status == 0)
    }

    /// `--at` takes an ISO 8601 time as well as seconds: the same code for `59` and
    /// `1970-01-01T00:00:59Z` (RFC 6238's first vector), an offset and a fraction; a day the month
    /// does not have, text, and a time before 1970 are usage errors naming what it takes.
    @Test func test_totp_atTakesAnISO8601Time() throws {
        let cli = try vaultWithSeed(); defer { cli.directory.remove() }
        for time in ["59", "1970-01-01T00:00:59Z", "1970-01-01T01:00:59+01:00", "1970-01-01 00:00:59.999Z", "1970-01-01T00:00:59"] {
            let code = try cli.run(["totp", "site", "--at", time] + cli.unlock())
            #expect(code.status == 0 && code.text == "94287082", "\(time): \(code.stderr)")
        }
        let vector = try cli.run(["totp", "site", "--at", "2005-03-18T01:58:29Z"] + cli.unlock())
        #expect(vector.text == "07081804", "RFC 6238's 1111111109 vector: \(vector.stderr)")
        #expect(try cli.run(["totp", "site", "--at", "2005-03-18"] + cli.unlock()).text
                == cli.run(["totp", "site", "--at", "1111104000"] + cli.unlock()).text, "a date alone is its midnight UTC")
        for bad in ["2024-02-30T00:00:00Z", "tomorrow", "2024-13-01T00:00:00Z", "1969-12-31T23:59:59Z"] {
            let result = try cli.run(["totp", "site", "--at", bad] + cli.unlock())
            #expect(result.status == 64 && result.stderr.contains("--at takes") && result.stderr.contains(bad), "\(bad): \(result.stderr)")
        }
    }

    /// Only a day the month lacks is told so; other bad times (text, month 13) say nothing of days.
    @Test func test_totp_atSaysAMonthLacksADayOnlyWhenItDoes() throws {
        let cli = try vaultWithSeed(); defer { cli.directory.remove() }
        for (bad, why) in [("2024-02-30T00:00:00Z", "2024-02 has no day 30"), ("2023-02-29", "2023-02 has no day 29"),
                           ("2024-04-31T12:00:00Z", "2024-04 has no day 31")] {
            let result = try cli.run(["totp", "site", "--at", bad] + cli.unlock())
            #expect(result.status == 64 && result.stderr.contains("(\(why))"), "\(bad): \(result.stderr)")
        }
        #expect(try cli.run(["totp", "site", "--at", "2024-02-29"] + cli.unlock()).status == 0, "a leap year has 29 February")
        for bad in ["abc", "2024-13-01", "2024-13-01T00:00:00Z", "2024-01-00", "2024-01-32T00:00:00Z"] {
            let result = try cli.run(["totp", "site", "--at", bad] + cli.unlock())
            #expect(result.status == 64 && result.stderr.contains("--at takes"), "\(bad): \(result.stderr)")
            #expect(!result.stderr.contains("has no day") && !result.stderr.contains("does not have"), "\(bad): \(result.stderr)")
        }
    }
}
