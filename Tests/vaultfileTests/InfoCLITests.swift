import Foundation
import TestSupport
import Testing
import VaultFile
import VaultModel

/// `vaultfile info`: paths printed escaped, and only the header read, even of the largest vault.
@Suite struct InfoCLITests {

    @Test func test_info_escapesThePathsItPrints() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let hostile = "v\u{1B}]0;owned\u{07}\u{1B}[2J.vault"
        try cli.initVault(hostile)
        let older = try cli.read(hostile)
        #expect(try cli.run(["set", "k"] + cli.unlock(hostile), stdin: [1]).status == 0)  // recorded at the hostile path
        try cli.write("old.vault", older)
        let info = try cli.run(["info", "--vault", cli.path("old.vault")])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.text.contains("OLDER COPY"), "\(info.text)")
        #expect(!info.stdout.contains(0x1B) && !info.stdout.contains(0x07), "\(info.text)")
        #expect(info.text.contains("v\\x1B]0;owned\\x07\\x1B[2J.vault"), "\(info.text)")
        let own = try cli.run(["info", "--vault", cli.path(hostile)])
        #expect(own.status == 0 && !own.stdout.contains(0x1B), "\(own.text)")
    }

    /// The finding: `info` on a 1,056 MiB file (the largest a vault may be) with a valid header
    /// read the file whole, 1.1 GB. It reads the header alone: 256 MiB of address space suffice.
    @Test(.disabled(if: HardeningCLITests.underAddressSanitizer, "AddressSanitizer's shadow memory does not fit in 256 MiB of address space"),
          .disabled(if: HardeningCLITests.underThreadSanitizer, "ThreadSanitizer's shadow memory does not fit in 256 MiB of address space"))
    func test_info_readsOnlyTheHeaderOfTheLargestVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let bytes = try cli.read("t.vault")
        let headerLength = Int(bytes[10]) | Int(bytes[11]) << 8
        try cli.write("large.vault", Array(bytes.prefix(headerLength)))
        #expect(truncate(cli.path("large.vault"), off_t(VaultLimits.maxFileLength)) == 0)
        let result = try cli.shell("ulimit -v 262144 && \"$VF\" info --vault large.vault")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("size:        \(VaultLimits.maxFileLength) bytes"), "\(result.text)")
    }
}
