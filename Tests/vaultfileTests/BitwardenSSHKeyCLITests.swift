import Foundation
import TestSupport
import Testing

/// `export --format bitwarden-json` of ssh key entries and notes-only entries, imported again by
/// `import --format bitwarden-json` (issue 45): the same entries, and the imported key served by
/// `unlock --ssh` to the real `ssh-add -L`; the exported private key read by the real ssh-keygen.
/// Every client runs under `timeout`; the agent is stopped on the way out.
extension ExternalTools {
    @Suite struct BitwardenSSHKeyCLITests {
        static func get(_ cli: CLI, _ name: String, _ field: String? = nil) throws -> CLI.Result {
            try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock())
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_exportBitwardenJSON_anSSHKeyComesBackAsTheSameKeyTheAgentServes() throws {
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            let line = try cli.storeKeygenSSHKey("ssh/deploy", file: "id_deploy", comment: "deploy@ci")
            #expect(try cli.run(["set", "ssh/deploy", "--field", "notes"] + cli.unlock(), stdin: Array("for the CI".utf8)).status == 0)
            #expect(try cli.run(["set", "door", "--field", "notes"] + cli.unlock(), stdin: Array("code 4711".utf8)).status == 0)
            let out = try cli.run(["export", "--format", "bitwarden-json", "--out", cli.path("bw.json"), "--json"] + cli.unlock())
            #expect(out.status == 0 && out.text.contains("\"not_carried\":[]"), "\(out.stderr) \(out.text)")

            // The item is Bitwarden's SSH key (type 5); its private key is one ssh-keygen reads.
            let document = try #require(try JSONSerialization.jsonObject(with: Data(try cli.read("bw.json"))) as? [String: Any])
            let item = try #require((document["items"] as? [[String: Any]])?.first { $0["name"] as? String == "deploy" })
            let sshKey = try #require(item["sshKey"] as? [String: Any])
            #expect(item["type"] as? Int == 5 && sshKey["publicKey"] as? String == line)
            try cli.write("exported_key", Array(try #require(sshKey["privateKey"] as? String).utf8))
            let derived = try cli.run(["-y", "-f", cli.path("exported_key")], executable: SSHKeygen.path!)
            #expect(derived.status == 0 && derived.text.hasPrefix(line.split(separator: " ").prefix(2).joined(separator: " ")), "\(derived.stderr)")

            let again = try CLI.withVault([:]); defer { again.stopAgent(); again.directory.remove() }
            let imported = try again.run(["import", "--format", "bitwarden-json", cli.path("bw.json")] + again.unlock())
            #expect(imported.status == 0 && !imported.stderr.contains("not served") && !imported.stderr.contains("not kept"), "\(imported.stderr)")
            for field in [nil, "ssh-key", "public", "comment", "fingerprint", "notes"] {
                #expect(try Self.get(again, "ssh/deploy", field).stdout == Self.get(cli, "ssh/deploy", field).stdout, "\(field ?? "value")")
            }
            #expect(try Self.get(again, "door").stdout.isEmpty && Self.get(again, "door", "notes").text == "code 4711", "a note's text stays its notes")
            let unlocked = try again.unlockSSH()
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(try again.withAgent(["/usr/bin/ssh-add", "-L"]).text == line + "\n")
        }
    }
}
