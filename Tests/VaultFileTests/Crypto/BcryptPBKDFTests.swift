import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// bcrypt_pbkdf (the KDF of passphrase-protected OpenSSH keys) and its Blowfish against published
/// vectors, and against the Python `bcrypt` package when it is installed.
@Suite struct BcryptPBKDFTests {
    // MARK: - Published vectors

    /// OpenBSD's regress tests of bcrypt_pbkdf (`regress/lib/libutil/bcrypt_pbkdf`), as the RustCrypto
    /// `bcrypt-pbkdf` crate and the Python `bcrypt` package test them: password, salt, rounds, output.
    static let openBSD: [(password: [UInt8], salt: [UInt8], rounds: UInt32, output: String)] = [
        (bytes("password"), bytes("salt"), 4, "5bbf0cc293587f1c3635555c27796598d47e579071bf427e9d8fbe842aba34d9"),
        (bytes("password"), [0], 4, "c12b566235eee04c212598970a579a67"),
        ([0], bytes("salt"), 4, "6051be18c2f4f82cbf0efee5471b4bb9"),
        (bytes("password") + [0], bytes("salt") + [0], 4, "7410e44cf4fa07bfaac8a928b1727fac001375e7bf7384370f48efd121743050"),
        (bytes("pass") + [0] + bytes("wor"), bytes("sa") + [0] + bytes("l"), 4, "c2bffd9db38f6569efef4372f4de83c0"),
        (bytes("pass") + [0] + bytes("word"), bytes("sa") + [0] + bytes("lt"), 4, "4ba4ac3925c0e8d7f0cdb6bb1684a56f"),
        (bytes("password"), bytes("salt"), 8,
         "e1367ec5151a33faac4cc1c144cd23fa15d5548493ecc99b9b5d9c0d3b27bec76227ea66088b849b20ab7aa478010246e74bba51723fefa9f9474d6508845e8d"),
        (bytes("password"), bytes("salt"), 42, "833cf0dcf56db65608e8f0dc0ce882bd"),
        (bytes("Lorem ipsum dolor sit amet, consectetur adipisicing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "
               + "Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. "
               + "Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. "
               + "Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum."),
         bytes("salis") + [0], 8, "10978b07253df57f71a162eb0e8ad30a"),
    ]

    /// The shapes OpenSSH keys use (48 bytes for aes256-ctr, 44 for aes256-gcm, 16 rounds) and an
    /// odd length whose last block writes fewer bytes, computed by PyPI `bcrypt` 4.x's `kdf`.
    static let opensshShapes: [(password: [UInt8], salt: [UInt8], rounds: UInt32, output: String)] = [
        (bytes("correct horse"), Array(0..<16), 16,
         "6bd628cd9202c5d0cb3e47dc1332be0162d3d4262dac8dac9f00998434479f36930c217fd05e33a7e77e207f680659d2"),
        (bytes("correct horse"), Array(0..<16), 16, "6bd628cd9202c5d0cb3e47dc1332be0162d3d4262dac8dac9f00998434479f36930c217fd05e33a7e77e207f"),
        (bytes("x"), [UInt8](repeating: UInt8(ascii: "y"), count: 33), 1, "8f30ea07b76f406a82b91273f8dcdca4e9f239f12b093cc8c1943632f1c0575a9d"),
    ]

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func derive(_ password: [UInt8], _ salt: [UInt8], _ rounds: UInt32, _ length: Int) -> String? {
        BcryptPBKDF.deriveKey(password: SecureBytes(copying: password), salt: salt, rounds: rounds, outputLength: length)?
            .withUnsafeBytes { Hex.encode(Array($0)) }
    }

    @Test func test_deriveKey_matchesOpenBSDVectors() {
        for (index, vector) in Self.openBSD.enumerated() {
            #expect(Self.derive(vector.password, vector.salt, vector.rounds, vector.output.count / 2) == vector.output, "vector \(index + 1)")
        }
    }

    @Test func test_deriveKey_matchesTheShapesOpenSSHKeysUse() {
        for (index, vector) in Self.opensshShapes.enumerated() {
            #expect(Self.derive(vector.password, vector.salt, vector.rounds, vector.output.count / 2) == vector.output, "shape \(index + 1)")
        }
    }

    @Test func test_blowfishInitialState_isPisFractionalDigits() {
        let table = BlowfishConstants.initialState
        #expect(table.count == 18 + 4 * 256)
        // First and last words of the P-array and of each S-box, as Schneier's reference code lists them.
        #expect(table[0] == 0x243F_6A88 && table[17] == 0x8979_FB1B)
        #expect(table[18] == 0xD131_0BA6 && table[18 + 255] == 0x6E85_076A)
        #expect(table[18 + 256] == 0x4B7A_70E9 && table[18 + 511] == 0xDB83_ADF7)
        #expect(table[18 + 512] == 0xE93D_5A68 && table[18 + 767] == 0x4060_00E0)
        #expect(table[18 + 768] == 0x3A39_CE37 && table[18 + 1023] == 0x3AC3_72E6)
    }

    // MARK: - Refusals

    @Test func test_deriveKey_refusesWhatOpenSSHRefusesAndWhatTheCapsRefuse() {
        #expect(Self.derive([], Self.bytes("salt"), 4, 32) == nil, "an empty password")
        #expect(Self.derive(Self.bytes("pw"), [], 4, 32) == nil, "an empty salt")
        #expect(Self.derive(Self.bytes("pw"), Self.bytes("salt"), 0, 32) == nil, "no rounds")
        #expect(Self.derive(Self.bytes("pw"), Self.bytes("salt"), 4, 0) == nil, "no output")
        #expect(Self.derive(Self.bytes("pw"), Self.bytes("salt"), 4, 1_025) == nil, "more than 32 blocks of output")
        #expect(Self.derive(Self.bytes("pw"), Self.bytes("salt"), BcryptPBKDF.maxRounds + 1, 32) == nil, "over the rounds cap")
        #expect(Self.derive(Self.bytes("pw"), [UInt8](repeating: 1, count: BcryptPBKDF.maxSaltLength + 1), 4, 32) == nil, "over the salt cap")
    }

    // MARK: - Edge cases

    @Test func test_deriveKey_largestOutputWritesEveryByte() throws {
        let key = try #require(Self.derive(Self.bytes("pw"), Self.bytes("salt"), 1, BcryptPBKDF.maxOutputLength))
        #expect(key.count == 2 * BcryptPBKDF.maxOutputLength)
        // 32 interleaved blocks: bytes 0 and 1 come from blocks 1 and 2, so they differ from each other's block.
        let short = try #require(Self.derive(Self.bytes("pw"), Self.bytes("salt"), 1, 32))
        #expect(short != String(key.prefix(64)), "a stride of 32 interleaves the blocks")
    }

    /// The Python `bcrypt` package (pyca, Rust) as an independent implementation, on random inputs.
    @Test(.enabled(if: PythonBcrypt.available, "python3 with the 'bcrypt' package is absent: the differential check is skipped"))
    func test_deriveKey_agreesWithPythonBcryptOnRandomInputs() throws {
        var generator = SplitMix(seed: 41)
        for _ in 0..<6 {
            let password = (0..<(1 + Int(generator.nextByte() % 40))).map { _ in generator.nextByte() }
            let salt = (0..<(1 + Int(generator.nextByte() % 40))).map { _ in generator.nextByte() }
            let rounds = UInt32(1 + generator.nextByte() % 6), length = 1 + Int(generator.nextByte()) % 100
            let expected = try PythonBcrypt.kdf(password: password, salt: salt, rounds: rounds, length: length)
            #expect(Self.derive(password, salt, rounds, length) == expected, "rounds \(rounds), length \(length)")
        }
    }
}

/// PyPI `bcrypt`'s `kdf`, run through the python3 on PATH.
enum PythonBcrypt {
    static let available: Bool = (try? kdf(password: [1], salt: [2], rounds: 1, length: 1)) != nil

    static func kdf(password: [UInt8], salt: [UInt8], rounds: UInt32, length: Int) throws -> String {
        let script = "import bcrypt,sys; a=sys.argv; print(bcrypt.kdf(bytes.fromhex(a[1]), bytes.fromhex(a[2]), int(a[3]), int(a[4]), ignore_few_rounds=True).hex())"
        let output = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", script, Hex.encode(password), Hex.encode(salt),
                                                                              String(length), String(rounds)],
                                      environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"],
                                      directory: FileManager.default.currentDirectoryPath, stdin: []).finish()
        guard output.ending == .exit(0) else { throw CocoaError(.executableLoad) }
        return String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
