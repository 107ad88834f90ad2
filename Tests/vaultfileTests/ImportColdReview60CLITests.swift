import Foundation
import TestSupport
import Testing

/// cold60's findings on what `import` (issue 44) recognises before it reads, through the built
/// binary: an ansible-vault file without a vault value refused before any password source is
/// touched (M1); ZIP archives said as such, never sent through iconv (M3, L7); the sops and
/// ansible-vault readers' refusals in the common form (L5); an empty input said as empty (L7).
@Suite struct ImportColdReview60CLITests {
    // MARK: - M1, L5: ansible-vault and sops refusals

    @Test func test_import_ansibleVaultOfAFileThatOnlyMentionsTheHeaderRunsNoPasswordCommand() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // The header in a comment, then in a plain (untagged) string: neither is a vault value.
        try cli.write("comment.yml", bytes("# vault password in $ANSIBLE_VAULT; see docs\nkey: plain\n"))
        try cli.write("plainstr.yml", bytes("db_pass: \"$ANSIBLE_VAULT;1.1;AES256 is the header\"\n"))
        for file in ["comment.yml", "plainstr.yml"] {
            let ran = cli.path("ran." + file)
            let result = try cli.run(["import", "--dry-run", "--format", "ansible-vault", "--source-password-command", "touch \(ran); echo avpw",
                                      cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: ran), "\(file): the password command ran")
            #expect(result.stderr.contains("vaultfile: error: cannot read \(cli.path(file)) as ansible-vault: it holds no ansible-vault value"),
                    "\(file): \(result.stderr)")
            #expect(result.stderr.contains("; nothing was imported\n") && result.stderr.contains("vaultfile: hint: "), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_ansibleVaultWithAMalformedVaultValueIsRefusedBeforeThePassword() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // A `!vault` tag whose block is no vault (its header's version unknown): the reader's parse
        // refuses it, in the common form, and the password command never runs.
        try cli.write("bad.yml", bytes("db_pass: !vault |\n  $ANSIBLE_VAULT;9.9;AES256\n  6162\n"))
        let ran = cli.path("ran")
        let result = try cli.run(["import", "--format", "ansible-vault", "--source-password-command", "touch \(ran); echo avpw",
                                  cli.path("bad.yml")] + cli.unlock())
        #expect(result.status == 2, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ran), "the password command ran")
        #expect(result.stderr.contains("cannot read \(cli.path("bad.yml")) as ansible-vault: line "), "\(result.stderr)")
        #expect(result.stderr.contains("('db_pass'): ansible-vault format 9.9 is not supported (1.1 and 1.2 are); nothing was imported"), "\(result.stderr)")
        #expect(result.stderr.contains("; nothing was imported\nvaultfile: hint: an ansible-vault file is"), "\(result.stderr)")
    }

    @Test func test_import_sopsRefusalsSayTheFileTheFormatAndThatNothingWasImported() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("random.bin", [0x8F, 0x00, 0xFF, 0x13, 0xC3, 0x28, 0x01])
        try cli.write("plain.yml", bytes("key: plain\nother: 2\n"))
        let cases = [("random.bin", "not UTF-8 text"), ("plain.yml", "it has no 'sops' metadata")]
        for (file, why) in cases {
            let result = try cli.run(["import", "--format", "sops", cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: error: cannot read \(cli.path(file)) as sops: \(why)"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("; nothing was imported\nvaultfile: hint: a sops file is"), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }
}

/// ZIP archives and empty input (cold60 M3, L7), and Dashlane's headerless form kept from taking
/// any text (M3).
@Suite struct ImportColdReview60ArchiveCLITests {
    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// A ZIP archive `name` of `files` (name, text), written by Python's zipfile.
    private func writeZIP(_ cli: CLI, _ name: String, _ files: [(String, String)]) throws {
        for (file, text) in files { try cli.write(file, bytes(text)) }
        let made = try cli.run(["-c", "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                                    + "for f in sys.argv[2:]: z.write(f)\nz.close()", name] + files.map(\.0),
                               executable: "/usr/bin/python3")
        #expect(made.status == 0, "\(made.stderr)")
    }
}
