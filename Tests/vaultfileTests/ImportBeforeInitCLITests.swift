import Foundation
import TestSupport
import Testing

/// A first import before `init` (cold63 F3): the missing vault is said, with init's hint, before
/// the source is read or decrypted, on a real run as on a dry run.
@Suite struct ImportBeforeInitCLITests {
    // MARK: - Failure

    @Test func test_import_withoutAVaultSaysSoBeforeTheStoreIsDecrypted() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        // A gpg that leaves a mark when the import runs it: it must not run.
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try cli.write("bin/gpg", Array("#!/bin/sh\ntouch '\(cli.path("gpg-ran"))'\ncat\n".utf8), mode: 0o700)
        try FileManager.default.createDirectory(atPath: cli.path("st"), withIntermediateDirectories: true)
        try cli.write("st/.gpg-id", Array("K\n".utf8))
        try cli.write("st/db.gpg", Array("secret\n".utf8))
        for dryRun in [false, true] {
            let result = try cli.run(["import", "--format", "pass", cli.path("st")] + (dryRun ? ["--dry-run"] : []) + cli.unlock(),
                                     extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("no vault at \(cli.path("t.vault"))"), "\(result.stderr)")
            #expect(result.stderr.contains("vaultfile init"), "init's hint: \(result.stderr)")
            #expect(!result.stderr.contains("lock file"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("gpg-ran")), "gpg ran before the vault was looked for")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.path("t.vault")))
    }

    @Test func test_import_ofACSVWithoutAVaultGivesTheSameMessageAsADryRun() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        try cli.write("in.csv", Array("name,value\na,1\n".utf8))
        let real = try cli.run(["import", cli.path("in.csv")] + cli.unlock())
        let dry = try cli.run(["import", "--dry-run", cli.path("in.csv")] + cli.unlock())
        #expect(real.status == dry.status && real.status != 0)
        #expect(real.stderr == dry.stderr, "\(real.stderr)\n--\n\(dry.stderr)")
    }
}
