import Foundation
import TestSupport
import Testing

/// `-` names standard input wherever a file is read (values, passwords, imports, templates, batch
/// scripts), and standard input carries one thing.
@Suite struct StandardInputCLITests {

    @Test func test_dash_readsStandardInputWhereverAFileIsRead() throws {
        let cli = try CLI.withEntriesSet(["db/pw": "hunter2"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "a", "--value-file", "-"] + cli.unlock(), stdin: Array("from stdin".utf8)).status == 0)
        #expect(try cli.run(["get", "a"] + cli.unlock()).text == "from stdin")
        let password = try cli.run(["list", "--vault", cli.path("t.vault"), "--password-file", "-"], stdin: Array("pw\n".utf8))
        #expect(password.status == 0 && password.text.contains("db/pw"), "\(password.stderr)")
        let imported = try cli.run(["import", "--format", "dotenv", "-"] + cli.unlock(), stdin: Array("B_KEY=b\n".utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        let injected = try cli.run(["inject", "--in", "-"] + cli.unlock(), stdin: Array("p={{ vf://db/pw }}".utf8))
        #expect(injected.text == "p=hunter2", "\(injected.stderr)")
        let batch = try cli.run(["batch", "--script", "-"] + cli.unlock(), stdin: Array("get db/pw\n".utf8))
        #expect(batch.text == "hunter2", "\(batch.stderr)")
    }

    @Test func test_dash_standardInputCannotCarryBothThePasswordAndTheValue() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        let both = try cli.run(["set", "a", "--vault", cli.path("t.vault"), "--password-file", "-"], stdin: Array("pw".utf8))
        #expect(both.status == 64)
        #expect(both.stderr.contains("standard input holds one thing: it was read for the value, so the password cannot come from it too"), "\(both.stderr)")
    }
}
