import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFile
import VaultFormat
import VaultModel

/// The vault payload's keystream as the binary makes it (the release build: OpenSSL's ChaCha20
/// core without EVP, `BulkChaCha`; docs/PERFORMANCE.md, "ChaCha20 without EVP") against the
/// library's own (this test process: EVP, or libsodium), both ways: what the binary seals opens
/// here byte for byte, and what the library seals opens through the binary. The golden fixtures
/// opening through the binary (`KeyslotCLITests`) check its reading against vaults made before.
@Suite struct KeystreamCLITests {
    /// A folder with `t.vault` (password `pw`), made in-process.
    private func vault() throws -> CLI {
        let cli = try CLI()
        try cli.write("pw", Array("pw".utf8))
        try cli.initVault()
        return cli
    }

    private func opened(_ cli: CLI) throws -> UnlockedVault {
        let credential = UnlockCredential(.password(SecureBytes(copying: Array("pw".utf8))), source: "the test")
        return try VaultStore(path: cli.path("t.vault")).read(with: Unlocker(credentials: [credential], limits: .defaults))
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    // MARK: - Success

    @Test func test_set_payloadTheBinarySealsOpensInTheLibraryByteForByte() throws {
        let cli = try vault(); defer { cli.directory.remove() }
        // Values of several secretstream chunks, one of an odd length, and many small ones: the
        // keystream at block counters past the first and across messages of every length.
        let large = Self.randomBytes(3 * 1024 * 1024 + 77)
        let odd = Self.randomBytes(65_537)
        try cli.write("large", large)
        try cli.write("odd", odd)
        for (name, file) in [("bulk/large", "large"), ("bulk/odd", "odd")] {
            let set = try cli.run(["set", name, "--value-file", cli.path(file)] + cli.unlock())
            #expect(set.status == 0, "\(set.stderr)")
        }
        let lines = (0..<2_000).map { "SMALL_\($0)=value \($0) " + String(repeating: "x", count: $0 % 97) }
        try cli.write("small.env", Array((lines.joined(separator: "\n") + "\n").utf8))
        let imported = try cli.run(["import", "--format", "dotenv", cli.path("small.env")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")

        let vault = try opened(cli).vault
        #expect(try vault.value(of: "bulk/large") == large)
        #expect(try vault.value(of: "bulk/odd") == odd)
        #expect(try vault.value(of: "SMALL_1999") == Array(("value 1999 " + String(repeating: "x", count: 1999 % 97)).utf8))
        #expect(vault.names.count == 2_002)
    }

    @Test func test_get_payloadTheLibrarySealsOpensThroughTheBinary() throws {
        let cli = try vault(); defer { cli.directory.remove() }
        let large = Self.randomBytes(2 * 1024 * 1024 + 5)
        try cli.write("large", large)
        // Sealed in-process (the library's keystream); then the binary reads it, seals it again
        // with another entry, and reads both back.
        try VaultStore(path: cli.path("t.vault")).update(password: SecureBytes(copying: Array("pw".utf8)), limits: .defaults) { unlocked in
            try unlocked.vault.setValue(large, for: "bulk/large")
        }
        let set = try cli.run(["set", "other", "--value-file", cli.path("large")] + cli.unlock())
        #expect(set.status == 0, "\(set.stderr)")
        for name in ["bulk/large", "other"] {
            let get = try cli.run(["get", name] + cli.unlock())
            #expect(get.status == 0 && get.stdout == large, "\(get.stderr)")
        }
    }
}
