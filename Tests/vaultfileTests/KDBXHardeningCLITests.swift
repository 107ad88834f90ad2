import Foundation
import TestSupport
import Testing

/// What an attacker's review of `import --format kdbx` found, each rule tested through the binary:
/// the growth limit follows the KDBX file's bytes (not its decrypted XML's) and counts every copy a
/// `Ref` makes; KDBX 3.1's Meta/HeaderHash authenticates its header.
@Suite struct KDBXHardeningCLITests {
    static let fixtures = ProjectPaths.fixtures.appendingPathComponent("kdbx").path
    static let tiny = ExternalTools.KDBXExportCLITests.tiny

    private func importKDBX(_ cli: CLI, _ file: String, extra: [String] = []) throws -> CLI.Result {
        try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw")] + extra + [file] + cli.unlock())
    }

    // MARK: - Success

    /// vaultfile's own export of one 33 MiB attachment (more than the 32 MiB floor, far less than
    /// 250 times the file) imports back: the limit follows the file, not the XML that names it.
    @Test func test_import_kdbxOwnExportOfALargeAttachmentReimports() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        var generator = SystemRandomNumberGenerator()
        let big = (0..<(33 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        try cli.write("big", big)
        try cli.write("fpw", Array("kp-pw".utf8))
        #expect(try cli.run(["set", "Big"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        #expect(try cli.run(["set", "Big", "--field", "attachment.big.bin", "--value-file", cli.path("big")] + cli.unlock()).status == 0)
        let exported = try cli.run(["export", "--format", "kdbx", "--out", cli.path("big.kdbx"), "--new-password-file", cli.path("fpw")]
                                   + Self.tiny + cli.unlock())
        #expect(exported.status == 0, "\(exported.stderr)")
        let result = try importKDBX(cli, cli.path("big.kdbx"), extra: ["--prefix", "back"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "back/Big", "--field", "attachment.big.bin"] + cli.unlock()).stdout == big)
    }

    /// KDBX 3.1 with Meta/HeaderHash (the header's SHA-256, as KeePass 2.20+ and KeePassXC write it) imports, without a warning.
    @Test func test_import_kdbx31WithItsHeaderHashImports() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let result = try importKDBX(cli, "\(Self.fixtures)/kdbx31-header-hash.kdbx")
        #expect(result.status == 0 && !result.stderr.contains("HeaderHash"), "\(result.stderr)")
        #expect(try cli.run(["get", "Work/Mail"] + cli.unlock()).text == "pässword")
    }

    // MARK: - Failure

    /// 30 KB whose payload is 512 KiB of XML whitespace and a 4 MiB zero-filled inner binary that ten
    /// entries name: 40 MiB of copies, more than 250 times the file (the 32 MiB floor). Refused with
    /// exit 6, the file, its size and the limit named; nothing imported.
    @Test func test_import_kdbxRefCopiesPastTheFilesLimitAreRefused() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let file = "\(Self.fixtures)/hostile/ref-amplification.kdbx"
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        let before = try cli.read("t.vault")
        let result = try importKDBX(cli, file)
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("ref-amplification.kdbx grows to more than 33554432 bytes"), "\(result.stderr)")
        #expect(result.stderr.contains("250 times the file's size (\(size) bytes)"), "\(result.stderr)")
        #expect(result.stderr.contains("'zeros.bin' passed it") && result.stderr.contains("refused before inflating or copying it"), "\(result.stderr)")
        #expect(try cli.read("t.vault") == before, "nothing was imported")
    }

    /// A 3.1 file whose Meta/HeaderHash is the hash of another header (one byte changed): exit 4,
    /// "damaged or was modified", as KeePassXC's "Header doesn't match hash"; nothing imported.
    @Test func test_import_kdbx31HeaderThatDisagreesWithItsHashIsDamaged() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let before = try cli.read("t.vault")
        let result = try importKDBX(cli, "\(Self.fixtures)/hostile/kdbx31-header-hash-wrong.kdbx")
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("kdbx31-header-hash-wrong.kdbx is damaged or was modified")
                && result.stderr.contains("Meta/HeaderHash does not match"), "\(result.stderr)")
        #expect(try cli.read("t.vault") == before, "nothing was imported")
    }

    // MARK: - Edge

    /// A 3.1 file without Meta/HeaderHash (KeePass before 2.20) imports, as KeePass and KeePassXC
    /// open it, with a warning that its header was not checked (kind header_not_authenticated).
    @Test func test_import_kdbx31WithoutHeaderHashImportsWithAWarning() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kdbx-fixture".utf8))
        let result = try importKDBX(cli, "\(Self.fixtures)/kdbx31-aeskdf-salsa20.kdbx")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("kdbx31-aeskdf-salsa20.kdbx is KDBX 3.1 without Meta/HeaderHash"), "\(result.stderr)")
        #expect(try cli.run(["get", "Work/Mail"] + cli.unlock()).text == "pässword")
    }

    /// One attachment that three entries share is one binary of the written pool and three `Ref`s:
    /// each copy is counted, and a small shared file imports back into every entry.
    @Test func test_import_kdbxSharedAttachmentIsCopiedIntoEveryEntry() throws {
        let cli = try CLI.withEntriesSet(["a": "1", "b": "2", "c": "3"]); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kp-pw".utf8))
        try cli.write("att", Array("shared bytes\n".utf8))
        for name in ["a", "b", "c"] {
            #expect(try cli.run(["set", name, "--field", "attachment.s.txt", "--value-file", cli.path("att")] + cli.unlock()).status == 0)
        }
        let exported = try cli.run(["export", "--format", "kdbx", "--out", cli.path("s.kdbx"), "--new-password-file", cli.path("fpw")]
                                   + Self.tiny + cli.unlock())
        #expect(exported.status == 0, "\(exported.stderr)")
        let result = try importKDBX(cli, cli.path("s.kdbx"), extra: ["--prefix", "back"])
        #expect(result.status == 0, "\(result.stderr)")
        for name in ["a", "b", "c"] {
            #expect(try cli.run(["get", "back/\(name)", "--field", "attachment.s.txt"] + cli.unlock()).text == "shared bytes\n", "\(name)")
        }
    }
}
