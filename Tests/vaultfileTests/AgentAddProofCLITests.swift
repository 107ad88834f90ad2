import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultAgent
@testable import VaultFormat

/// An `add` for a vault the agent holds must carry one of its keys (docs/AGENT.md, issue 39 item 2):
/// a forged header is no proof, and a change that weakens what is held runs the confirm command
/// first. Through the real agent and a hand-made client. Each test stops the agent it starts.
@Suite struct AgentAddProofCLITests {
    /// The vault's header as the file holds it.
    private func header(_ cli: CLI, _ name: String = "t.vault") throws -> VaultHeader {
        try VaultHeader.parse(try cli.read(name), path: name).header
    }

    /// Sends `request` on a connection of its own and returns the agent's last answer.
    private func send(_ request: AgentRequest, to cli: CLI) throws -> AgentResponse {
        let connection = try RawAgentConnection(path: cli.path("agent.sock"))
        connection.send(request.frame().withUnsafeBytes { Array($0) })
        guard case .answered(var bytes) = connection.wait(10) else { throw CLI.AgentStatusFailed(description: "no answer") }
        // Skip an interim `confirming`: the answer is the last frame.
        while bytes.count > 4 + (Int(bytes[0]) | Int(bytes[1]) << 8) { bytes.removeFirst(4 + (Int(bytes[0]) | Int(bytes[1]) << 8)) }
        return try Array(bytes.dropFirst(4)).withUnsafeBytes { try AgentResponse.decode(body: $0) }
    }

    @Test func test_agentAdd_ofAForgedHeaderForAHeldVaultIsRefusedAndChangesNothing() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        // The owner's confirm command refuses every hand-out (and notes what it was asked).
        let confirm = "echo \"${VAULTFILE_CONFIRM_ACTION:-}\" >> \(cli.path("asked")); exit 1"
        #expect(try cli.run(["unlock", "--timeout", "15m", "--confirm-command", confirm] + cli.unlock()).status == 0)
        // Another process of the user forges a header: the held vault's id, a MAC under a key it chose.
        let chosen = SecureBytes(copying: (0..<32).map { _ in UInt8.random(in: 0...255) })
        var forged = try header(cli)
        forged.mac = VaultCodec.headerMAC(forged, fileKey: chosen)
        #expect(VaultCodec.verifies(forged, fileKey: chosen), "a header anyone can make for any id")
        let add = AgentKeyHandOver(vaultID: forged.vaultID, fileKey: chosen, timeoutSeconds: 0, onlyIfHeld: false,
                                   path: cli.path("forged.vault"), confirmCommand: "")
        guard case .unproven = try send(.add(add), to: cli) else { Issue.record("the agent took a key it does not hold for a vault it holds"); return }
        // Nothing changed: one key, the timeout and the confirm command as the owner set them.
        let vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.count == 1 && vaults[0]["keys"] as? Int == 1 && vaults[0]["timeout_seconds"] as? Int == 900, "\(vaults)")
        #expect(vaults[0]["path"] as? String == cli.path("t.vault"))
        if case .key = try send(.key(path: "/forged", header: forged.encoded()), to: cli) { Issue.record("the chosen key is held") }
        let get = try cli.run(["get", "a", "--vault", cli.path("t.vault")])
        #expect(get.status == 2 && get.stderr.contains("confirm command refused"), "the confirm command still decides: \(get.stderr)")
        #expect(String(decoding: try cli.read("asked"), as: UTF8.self) == "hand-out\n", "the refused add asked nothing")
    }

    @Test func test_unlock_thatWeakensAHeldVaultRunsItsConfirmCommandFirst() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        let confirm = "echo \"$VAULTFILE_CONFIRM_ACTION $VAULTFILE_CONFIRM_PATH\" >> \(cli.path("asked")); test -e \(cli.path("allow"))"
        #expect(try cli.run(["unlock", "--timeout", "15m", "--confirm-command", confirm] + cli.unlock()).status == 0)
        let asked = { String(decoding: (try? cli.read("asked")) ?? [], as: UTF8.self) }
        // Dropping the confirm command and keeping the key until lock: the command refuses, nothing changes.
        let refused = try cli.run(["unlock", "--timeout", "0"] + cli.unlock())
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("the confirm command of \(cli.path("t.vault")) refused to let this unlock change its settings")
                && refused.stderr.contains("nothing changed"), "\(refused.stderr)")
        // The password file is checked against the vault itself (issue 47), so the agent hands out no key: only the change is asked.
        #expect(asked() == "change-settings \(cli.path("t.vault"))\n", "\(asked())")
        var vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.first?["timeout_seconds"] as? Int == 900)
        // A stricter unlock (a shorter timeout, the same command) asks nothing beyond the hand-out.
        try cli.write("allow", [])
        #expect(try cli.run(["unlock", "--timeout", "10m", "--confirm-command", confirm] + cli.unlock()).status == 0)
        #expect(asked().components(separatedBy: "change-settings").count == 2, "\(asked())")
        // passwd hands the new key over beside the old one: one more key, so the command is asked.
        try cli.write("pw2", Array("new-password".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock()).status == 0)
        #expect(asked().hasSuffix("change-settings \(cli.path("t.vault"))\n"), "\(asked())")
        vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.first?["keys"] as? Int == 2 && vaults.first?["timeout_seconds"] as? Int == 600, "\(vaults)")
        // Approved, the weaker settings apply: no command, no timeout.
        #expect(try cli.run(["unlock", "--timeout", "0", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]).status == 0)
        let count = asked().count
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1")
        #expect(asked().count == count, "no confirm command any more")
    }

    @Test func test_unlock_forAVaultHeldUnderOtherKeysIsRefusedWithAClearMessage() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        // The key rotated where the agent did not hear of it (another machine, then a pull).
        try cli.write("pw2", Array("new-password".utf8))
        let noAgent = ["VAULTFILE_NO_AGENT": "1"]
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("pw2")] + cli.unlock(), extra: noAgent).status == 0)
        let vault = ["--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]
        let unlock = try cli.run(["unlock"] + vault)
        #expect(unlock.status == 2, "\(unlock.stderr)")
        #expect(unlock.stderr.contains("error: the agent holds \(cli.path("t.vault")) under other keys than the one this unlock opened; "
                                       + "nothing changed in the agent"), "\(unlock.stderr)")
        #expect(unlock.stderr.contains("hint: its file key changed since it was unlocked")
                && unlock.stderr.contains("forget the old keys, then unlock again: vaultfile lock --vault \(cli.path("t.vault"))"), "\(unlock.stderr)")
        // passwd here opens under a key the agent does not hold: it rotates, warns, and the agent keeps what it had.
        try cli.write("pw3", Array("third-password".utf8))
        let passwd = try cli.run(["passwd", "--new-password-file", cli.path("pw3")] + vault)
        #expect(passwd.status == 0 && passwd.stderr.contains("the agent holds this vault under other keys than the one this command opened"),
                "\(passwd.stderr)")
        var vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.first?["keys"] as? Int == 1)
        // The way out the hint names.
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        #expect(CLI.waitFor(5) { !CLI.socketExists(cli.path("agent.sock")) })
        #expect(try cli.run(["unlock", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw3")]).status == 0)
        vaults = try #require(try cli.agentStatus()["vaults"] as? [[String: Any]])
        #expect(vaults.first?["keys"] as? Int == 1)
        #expect(try cli.run(["get", "a", "--vault", cli.path("t.vault")]).text == "1")
    }
}
