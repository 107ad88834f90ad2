import Foundation
import TestSupport
import Testing

/// `vaultfile init` and the folders it makes: missing folders created private, the path checked
/// before a password is asked for. (Its basics, and the KDF floor, are in CLITests.)
@Suite struct InitCLITests {
    private func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    @Test func test_init_createsMissingFoldersPrivatelyAndSaysSo() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let vault = cli.path("secrets/team/team.vault")
        let created = try cli.run(["init", "--password-file", cli.path("pw")] + CLI.fastKDF, extra: ["VAULTFILE_PATH": vault])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try mode(cli.path("secrets")) == 0o700 && mode(cli.path("secrets/team")) == 0o700)
        #expect(created.stderr.contains("created the folder \(cli.path("secrets")) (mode 0700)"), "\(created.stderr)")
        #expect(created.stderr.contains("created the folder \(cli.path("secrets/team")) (mode 0700)"))
        #expect(try cli.run(["list", "--password-file", cli.path("pw")], extra: ["VAULTFILE_PATH": vault]).status == 0)
    }

    @Test func test_init_checksTheFolderBeforeAskingForThePassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        try cli.write("afile", Array("not a folder".utf8))
        let result = try cli.run(["init", "--vault", cli.path("afile/sub/team.vault"), "--password-command", "touch asked; cat pw"] + CLI.fastKDF)
        #expect(result.status == 2)
        #expect(result.stderr.contains(cli.path("afile")) && result.stderr.contains("Not a directory"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("asked")), "the password was asked for before the folder was checked")
    }
}
