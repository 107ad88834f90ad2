import Foundation
import TestSupport
import Testing

/// Settings that the caps on open refuse are never suggested (calibrate) nor sealed (init,
/// passwd, slot add): a vault every later open refuses with exit 6 is never made by accident.
@Suite struct KDFOpenCapsCLITests {

    // MARK: - calibrate

    @Test func test_calibrate_capsTheIterationsAtTheWorkLimitAndNamesTheOption() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        // 2 MiB of work at 1 MiB a pass: at most 2 passes, far below what 300 ms takes.
        let result = try cli.run(["calibrate", "--kdf-memory", "1M", "--kdf-parallelism", "1", "--kdf-time", "300ms", "--json"],
                                 extra: ["VAULTFILE_KDF_MAX_WORK": "2M"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let memory = try #require(json["memory_kib"] as? Int), iterations = try #require(json["iterations"] as? Int)
        #expect(memory * iterations <= 2048, "\(json)")
        #expect(json["capped"] as? Bool == true, "\(json)")
        // On a quiet machine 1 MiB and 2 iterations; under load calibration may settle on other
        // memory within the same work cap, and the message names whatever it chose.
        #expect(result.stderr.contains("capped at ") && result.stderr.contains(" and \(iterations) iteration")
                && result.stderr.contains("every open would then need --kdf-max-work"), "\(result.stderr)")
        let initCommand = try #require(json["init"] as? String)
        #expect(initCommand.contains("--kdf-iterations \(iterations) "), "\(initCommand)")
    }

    @Test func test_calibrate_withinTheCapsSaysNothingOfThem() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let result = try cli.run(["calibrate", "--kdf-memory", "1M", "--kdf-parallelism", "1", "--kdf-time", "100ms", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        #expect(json["capped"] as? Bool == false, "\(json)")
        #expect(!result.stderr.contains("capped"), "\(result.stderr)")
    }

    // MARK: - init, passwd, slot add

    @Test func test_init_refusesSettingsTheDefaultCapsOnOpenRefuse() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("a long enough password".utf8))
        // The reviewer's: 64 MiB × 822 = 51 GiB of work, over the default 32 GiB.
        let refused = try cli.run(["init", "--kdf-memory", "64M", "--kdf-iterations", "822"] + cli.unlock())
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("Argon2id work limit") && refused.stderr.contains("--kdf-max-work"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("t.vault")), "nothing written")
        let pbkdf2 = try cli.run(["init", "--kdf", "pbkdf2", "--kdf-iterations", "60000000"] + cli.unlock())
        #expect(pbkdf2.status == 64 && pbkdf2.stderr.contains("--kdf-max-iterations"), "\(pbkdf2.stderr)")
    }

    @Test func test_init_overTheCapsOnlyWithTheSameMaxOptionEveryOpenNeeds() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("a long enough password".utf8))
        let settings = ["--kdf-memory", "1M", "--kdf-iterations", "3", "--kdf-parallelism", "1", "--allow-weak-kdf"]
        let capped = ["VAULTFILE_KDF_MAX_WORK": "2M"]
        let refused = try cli.run(["init"] + settings + cli.unlock(), extra: capped)
        #expect(refused.status == 64 && refused.stderr.contains("--kdf-max-work 3M"), "\(refused.stderr)")
        let made = try cli.run(["init", "--kdf-max-work", "3M"] + settings + cli.unlock(), extra: capped)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try cli.run(["list"] + cli.unlock(), extra: capped).status == 6)
        #expect(try cli.run(["list", "--kdf-max-work", "3M"] + cli.unlock(), extra: capped).status == 0)
    }

    @Test func test_passwd_refusesSettingsOverTheCapsAndLeavesTheVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let before = try cli.read("t.vault")
        try cli.write("new", Array("a new password for the test".utf8))
        let refused = try cli.run(["passwd", "--new-password-file", cli.path("new"), "--kdf-memory", "1M", "--kdf-iterations", "3",
                                   "--kdf-parallelism", "1", "--allow-weak-kdf"] + cli.unlock(), extra: ["VAULTFILE_KDF_MAX_WORK": "2M"])
        #expect(refused.status == 64 && refused.stderr.contains("--kdf-max-work"), "\(refused.stderr)")
        #expect(try cli.read("t.vault") == before)
    }
}
