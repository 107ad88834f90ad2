import Foundation
import TestSupport
import Testing

/// The unlock sources beside the password, as docs/FORMAT.md §9 and the man page's UNLOCK SOURCES
/// say: a source given on the command line that cannot be read stops the command before any slot
/// is tried; one from the environment is skipped with a warning (issue 39, item 10: an unreadable
/// VAULTFILE_KEYFILE stopped the command although the password opened the vault, while an
/// unreadable VAULTFILE_IDENTITY_FILE was skipped).
@Suite struct UnlockSourceCLITests {
    /// A vault `k.vault` with a password slot and a keyfile slot (`kf`), holding `a` = `v`.
    private func keyfileVault() throws -> CLI {
        let cli = try CLI()
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["keygen", "--keyfile", cli.path("kf")]).status == 0)
        let created = try cli.run(["init", "--vault", cli.path("k.vault"), "--password-file", cli.path("pw"), "--with-keyfile", cli.path("kf")] + CLI.fastKDF)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try cli.run(["set", "a", "--vault", cli.path("k.vault"), "--password-file", cli.path("pw")], stdin: Array("v".utf8)).status == 0)
        return cli
    }

    @Test func test_keyfile_unreadableFromTheEnvironmentIsSkippedAndFromTheCommandLineRefused() throws {
        let cli = try keyfileVault(); defer { cli.directory.remove() }
        let vault = ["get", "a", "--vault", cli.path("k.vault")]
        for missing in [cli.path("gone"), cli.path("short")] {
            if missing.hasSuffix("short") { try cli.write("short", [1, 2, 3]) }
            let skipped = try cli.run(vault + ["--password-file", cli.path("pw")], extra: ["VAULTFILE_KEYFILE": missing])
            #expect(skipped.status == 0 && skipped.stdout == Array("v".utf8), "\(skipped.stderr)")
            #expect(skipped.stderr.contains("warning: VAULTFILE_KEYFILE (\(missing)) skipped"), "\(skipped.stderr)")
            let refused = try cli.run(vault + ["--password-file", cli.path("pw"), "--keyfile", missing])
            #expect(refused.status == 2 && (refused.stderr.contains("the keyfile \(missing) is 3 bytes") || refused.stderr.contains("opening the keyfile \(missing)")),
                    "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }
        // A keyfile that reads opens its slot, from either place.
        #expect(try cli.run(vault + ["--keyfile", cli.path("kf")]).stdout == Array("v".utf8))
        #expect(try cli.run(vault, extra: ["VAULTFILE_KEYFILE": cli.path("kf")]).stdout == Array("v".utf8))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen"), "ssh-keygen is not installed: skipped"))
    func test_identity_anOpenSSHKeyAfterBlankLinesOpensAndAnotherPEMSaysWhatItIs() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let made = try cli.run(["-c", "ssh-keygen -q -t ed25519 -N '' -C me -f \(cli.path("id"))"], executable: "/bin/sh")
        #expect(made.status == 0, "\(made.stderr)")
        let publicLine = try String(contentsOfFile: cli.path("id.pub"), encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(try cli.run(["init", "--vault", cli.path("s.vault"), "--recipient", publicLine]).status == 0)
        try cli.write("padded", Array("\n  \n".utf8) + (try cli.read("id")))
        let opened = try cli.run(["list", "--vault", cli.path("s.vault"), "--identity", cli.path("padded")])
        #expect(opened.status == 0, "\(opened.stderr)")
        try cli.write("rsa", Array("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n".utf8))
        let rsa = try cli.run(["list", "--vault", cli.path("s.vault"), "--identity", cli.path("rsa")])
        #expect(rsa.status == 2 && rsa.stderr.contains("a PEM file of another kind (-----BEGIN RSA PRIVATE KEY-----)"), "\(rsa.stderr)")
    }
}
