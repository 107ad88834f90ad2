import Foundation
import TestSupport
import Testing
@testable import VaultFormat

/// The zxcvbn-style readings of the estimate: dictionaries, look-alikes, keyboard walks, dates.
@Suite struct PasswordStrengthPatternsTests {
    private func estimate(_ password: String) -> StrengthEstimate {
        Array(password.utf8).withUnsafeBytes { PasswordStrength.estimate($0) }
    }

    // MARK: - estimate

    @Test func test_estimate_commonPasswordsAreWeakestAndNamedSo() {
        for password in ["password", "123456", "qwerty", "letmein", "dragon", "trustno1"] {
            let found = estimate(password)
            #expect(found.bits < 14, "\(password): \(found.bits)")
            #expect(found.patterns.contains(.commonPassword) || found.patterns.contains(.keyboard) || found.patterns.contains(.sequence), "\(password)")
        }
        // A more common password is cheaper: rank 2 against rank ~1000.
        #expect(estimate("password").bits < estimate("snowball").bits)
    }

    @Test func test_estimate_seesThroughLookAlikesCapitalsAndReversal() {
        for password in ["P@ssw0rd", "p4$$w0rd", "PASSWORD", "drowssap", "Dr@g0n"] {
            #expect(estimate(password).bits < 16, "\(password): \(estimate(password).bits)")
        }
        // Each substitution and the reversal still cost something.
        #expect(estimate("P@ssw0rd").bits > estimate("password").bits)
        #expect(estimate("drowssap").bits > estimate("password").bits)
    }

    @Test func test_estimate_recognisesKeyboardAndKeypadWalks() {
        for password in ["zse4rfv", "147852369", "1qaz2wsx", "mju7yhn"] {
            let found = estimate(password)
            #expect(found.bits < 30, "\(password): \(found.bits)")
            #expect(found.patterns.contains(.keyboard) || found.patterns.contains(.commonPassword), "\(password)")
        }
        // A walk with turns costs more than one straight along a row.
        #expect(estimate("zse4rfvbgt5").bits > estimate("zxcvbnm,./").bits)
    }

    @Test func test_estimate_recognisesDatesAndYears() {
        for password in ["12.05.1984", "1984-05-12", "19840512", "120584", "5/12/84"] {
            let found = estimate(password)
            #expect(found.bits < 25, "\(password): \(found.bits)")
            #expect(found.patterns == [.date], "\(password): \(found.patterns)")
        }
        #expect(estimate("1984").bits < 8)
        // A date near now is guessed before one long ago.
        #expect(estimate("1850").bits > estimate("2020").bits)
        // Not a date: month 13, day 32.
        #expect(!estimate("32131999x").patterns.isEmpty || estimate("32131999x").bits > 20)
    }

    @Test func test_estimate_wordsAmongRandomCharactersStayCostly() {
        // "dog" in random characters: a piece costs at least log2(50) bits, so little is saved.
        let plain = estimate("x9#Lm2!Qr7@vK4$z").bits
        let withWord = estimate("x9#Ldog!Qr7@vK4$z").bits
        #expect(withWord >= PasswordStrength.recommendedBits && plain >= PasswordStrength.recommendedBits)
    }

    @Test func test_estimate_bitsAreEstimatedBits() {
        for password in ["Summer2024!", "kQ7%", "correct-horse-battery-staple", ""] {
            let bits = Array(password.utf8).withUnsafeBytes { PasswordStrength.estimatedBits($0) }
            #expect(estimate(password).bits == bits)
        }
        #expect(estimate("kQ7%").patterns.isEmpty)
        #expect(abs(estimate("password").guessesLog10 - estimate("password").bits * log10(2.0)) < 1e-9)
    }

    // MARK: The dictionaries

    @Test func test_dictionary_isTheShippedDataFile() throws {
        // scripts/common-passwords.sh writes CommonPasswordWordLists.swift from data/common-passwords.txt.
        let text = try String(contentsOf: ProjectPaths.root.appendingPathComponent("data/common-passwords.txt"), encoding: .utf8)
        var lists: [String: [Substring]] = [:], current = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# list ") { current = String(line.dropFirst(7)) } else { lists[current, default: []].append(line) }
        }
        #expect(lists["passwords"] == CommonPasswords.passwords.split(separator: "\n"))
        #expect(lists["english"] == CommonPasswords.english.split(separator: "\n"))
        #expect(lists["names"] == CommonPasswords.names.split(separator: "\n"))
        #expect(lists["passwords"]?.count == 10_000 && lists["english"]?.count == 5_000 && lists["names"]?.count == 2_000)
    }

    // MARK: Against zxcvbn itself

    static let zxcvbn = FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/zxcvbn/__init__.py")

    @Test(.enabled(if: zxcvbn, "python3-zxcvbn is absent: the comparison with zxcvbn is skipped"))
    func test_estimate_agreesWithZxcvbnOnHumanPasswords() throws {
        // Human-made passwords of every kind: what zxcvbn finds crackable (under 2^30 guesses), this
        // estimate calls weak (under 50 bits); and it never calls weak what zxcvbn finds strong (2^60).
        let passwords = ["password1", "iloveyou2", "Summer2024!", "qwertyuiop", "monkey123", "P@ssw0rd!", "dragon1984",
                         "1qaz2wsx3edc", "letmein!!", "abc123abc123", "michael1", "Jennifer88", "zaq12wsx", "baseball7",
                         "correcthorse", "12/05/1984", "trustno1", "asdfghjkl;", "Welcome1", "football!", "ncc1701",
                         "L0ndon2012", "hello1234", "sunshine99", "Xk8#pQ2$mZ7!vR4w", "quilt-ranger-oyster-pamphlet-gravy"]
        let script = """
            import sys; sys.path.insert(0, "/usr/lib/python3/dist-packages")
            from zxcvbn import zxcvbn
            for line in sys.stdin.read().split("\\n"):
                if line: print(zxcvbn(line)["guesses_log10"] * 3.321928)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(passwords.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let theirs = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").compactMap { Double($0) }
        process.waitUntilExit()
        try #require(theirs.count == passwords.count)
        for (password, zxcvbnBits) in zip(passwords, theirs) {
            let ours = estimate(password).bits
            if zxcvbnBits < 30 { #expect(ours < PasswordStrength.recommendedBits, "\(password): zxcvbn \(zxcvbnBits), ours \(ours)") }
            if zxcvbnBits > 60 { #expect(ours >= PasswordStrength.recommendedBits, "\(password): zxcvbn \(zxcvbnBits), ours \(ours)") }
        }
    }
}
