import Foundation
import TestSupport
import Testing

/// `vaultfile generate` in pipes and on a terminal. (Its options and character sets are in ScriptingCLITests.)
@Suite struct GenerateCLITests {

    @Test func test_generate_pipedIntoSetStoresExactlyThePassword() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        let piped = try cli.shell("\"$VF\" generate | \"$VF\" set x --vault t.vault --password-file pw && \"$VF\" get x --vault t.vault --password-file pw | wc -c")
        #expect(piped.text.trimmingCharacters(in: .whitespacesAndNewlines) == "24", "\(piped.text) \(piped.stderr)")
        let alone = try cli.run(["generate", "--length", "10"])
        #expect(alone.stdout.count == 10 && !alone.stdout.contains(0x0A), "nothing but the password when piped")
        let newline = try cli.run(["generate", "--length", "10", "--newline"])
        #expect(newline.stdout.count == 11 && newline.stdout.last == 0x0A)
        let printed = try cli.run(["set", "y", "--generate", "--print"] + cli.unlock())
        #expect(printed.stdout == (try cli.run(["get", "y"] + cli.unlock())).stdout, "set --generate --print prints the stored bytes")
    }

    @Test func test_generate_endsWithANewlineOnATerminal() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let session = try cli.interactive(["generate", "--length", "12", "--charset", "chars:qz"], answers: [])
        #expect(session.status == 0, "\(session.screen)")
        #expect(session.screen.contains(/(^|\n)[qz]{12}\r\n/), "\(session.screen)")
    }
}
