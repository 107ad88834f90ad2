#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import VaultFormat

/// The strength estimate behind the warnings of `init` and `passwd`.
@Suite struct PasswordStrengthTests {
    private func bits(_ password: String) -> Double {
        Array(password.utf8).withUnsafeBytes { PasswordStrength.estimatedBits($0) }
    }

    // MARK: - PasswordStrength.estimatedBits

    @Test func test_estimatedBits_randomPasswordsAreStrong() throws {
        for _ in 0..<50 {
            let password = try PasswordGenerator.password(length: 16, characters: PasswordGenerator.characters(forSpec: "lower,upper,digits,symbols"))
            let estimate = password.withUnsafeBytes { PasswordStrength.estimatedBits($0) }
            // Never warned about: chance can put a word or a short run in 16 random characters, so
            // the bar is the advice's own threshold, not the ~100 bits the characters could hold.
            #expect(estimate >= PasswordStrength.recommendedBits, "a random 16-character password estimated at \(estimate) bits")
        }
    }

    @Test func test_estimatedBits_longPassphrasesPassTheAdvice() throws {
        for _ in 0..<20 {
            let phrase = try PasswordGenerator.passphrase(words: 5, separator: "-")
            let estimate = phrase.withUnsafeBytes { PasswordStrength.estimatedBits($0) }
            #expect(estimate >= PasswordStrength.recommendedBits)
            // No more than the passphrase's real entropy plus the separators, read as characters.
            let ceiling: Double = 5 * 12.93 + 4 * 6 + 0.01
            #expect(estimate <= ceiling, "\(String(decoding: phrase, as: UTF8.self))")
        }
    }

    @Test func test_estimatedBits_countsClassesAndLength() {
        #expect(abs(bits("k") - log2(26)) < 0.01)
        #expect(abs(bits("kQ7%") - 4 * log2(95)) < 0.01)
        #expect(bits("x9#Lm2!Qr7@vK4$z") > bits("x9#Lm2!Q"))
    }

    @Test func test_estimatedBits_shortPasswordsAreWeak() {
        for password in ["pw", "hunter2", "Passw0rd", "letmein!"] {
            #expect(bits(password) < PasswordStrength.recommendedBits, "\(password)")
        }
    }

    @Test func test_estimatedBits_penalisesRepeatsAndSequences() {
        // 24 characters, which would be 113 bits if each counted.
        #expect(bits(String(repeating: "a", count: 24)) < 30)
        #expect(bits("abcdefghijklmnopqrstuvwx") < 30)
        #expect(bits("987654321098765432109876") < 40)
        #expect(bits("qwertyuiopasdfghjklzxcvb") < 40)
        #expect(bits("Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!") < 50)
    }

    @Test func test_estimatedBits_penalisesWordsFromTheList() {
        // "password" and "battery" are in the EFF list: two words and a digit, not 16 random characters.
        #expect(bits("passwordbattery7") < 35)
        #expect(bits("Password") < 15)
        #expect(bits("correctbatterystaple") < PasswordStrength.recommendedBits)
        #expect(bits("correctbatterystaple") > bits("correctbattery"))
    }

    // MARK: Edge cases

    @Test func test_estimatedBits_emptyIsZero() {
        #expect(bits("") == 0)
    }

    @Test func test_estimatedBits_nonASCIICountsEachCharacterOnce() {
        // Two characters beyond ASCII, four bytes: each is one character of a 100-symbol class.
        #expect(abs(bits("éü") - 2 * log2(100)) < 0.01)
    }

    @Test func test_estimatedBits_invalidUTF8IsStillEstimated() {
        let estimate = [0x80, 0x41, 0xC3].withUnsafeBytes { PasswordStrength.estimatedBits($0) }
        #expect(estimate.isFinite && estimate > 0)
    }

    @Test func test_estimatedBits_veryLongPasswordsStayFast() {
        let long = String(repeating: "Zq8#", count: 10_000)
        let estimate = bits(long)
        #expect(estimate >= 40_000 - Double(PasswordStrength.estimatedPrefix))
    }
}
