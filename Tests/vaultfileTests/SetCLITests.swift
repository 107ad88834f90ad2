import Foundation
import TestSupport
import Testing

/// `vaultfile set`: empty values. (Pipes, value files, fields and rewrites are in CLITests.)
@Suite struct SetCLITests {

    @Test func test_set_refusesAnEmptyValueUnlessAllowed() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        let empty = try cli.run(["set", "x"] + cli.unlock(), stdin: [])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("the value read for 'x' is empty") && empty.stderr.contains("--allow-empty"), "\(empty.stderr)")
        #expect(try cli.run(["get", "x"] + cli.unlock()).status == 1, "nothing was stored")
        try cli.write("empty.txt", [])
        let fromFile = try cli.run(["set", "x", "--field", "f", "--value-file", cli.path("empty.txt")] + cli.unlock())
        #expect(fromFile.status == 2 && fromFile.stderr.contains("field 'f' of 'x'"), "\(fromFile.stderr)")
        #expect(try cli.run(["set", "x", "--allow-empty"] + cli.unlock(), stdin: []).status == 0)
        let stored = try cli.run(["get", "x"] + cli.unlock())
        #expect(stored.status == 0 && stored.stdout.isEmpty)
    }
}
