import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The ssh socket against what real servers and vaults hold (issue 42's review): a host
/// certificate and a 1,024-bit RSA host key bound and logged in to through a real sshd; a damaged
/// ssh key entry among good ones; a comment edited after the key was stored; `--ssh-lifetime 0`;
/// the `public` field as a line; `agent status` listing the ssh socket's keys. Every client runs
/// under `timeout`; every agent and sshd is killed by pid on the way out.
extension ExternalTools {
    @Suite struct SSHAgentServeTests {
        // MARK: - Host certificates and old RSA host keys

        @Test(.enabled(if: ThrowawaySSHD.available, "sshd (openssh-server) is absent or the tests do not run as root: ssh login tests skipped"))
        func test_ssh_logsInToAServerWithAHostCertificateThroughTheAgent() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            try SSHKeygen.make("ed25519", comment: "throwaway-ca", at: cli.path("ca"))
            let sshd = try ThrowawaySSHD(cli: cli, authorizedKeys: [line], certificateAuthority: cli.path("ca")); defer { sshd.stop() }
            let ca = String(decoding: try cli.read("ca.pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            try cli.write("known_hosts", Array("@cert-authority [127.0.0.1]:\(sshd.port) \(ca)\n".utf8))
            #expect(try cli.unlockSSH().status == 0)
            // The client checks the certificate against the CA and binds the agent connection to it;
            // a key kept from forwarded connections signs only when that binding was taken.
            let login = try sshd.ssh(["echo", "logged-in"], socket: cli.sshSocket,
                                     options: ["-v", "-o", "HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com"], knownHosts: cli.path("known_hosts"))
            #expect(login.status == 0 && login.text == "logged-in\n", "\(login.status) \(login.stderr)")
            #expect(login.stderr.contains("Server host certificate: ssh-ed25519-cert-v01@openssh.com"), "\(login.stderr)")
        }

        @Test(.enabled(if: ThrowawaySSHD.available, "sshd (openssh-server) is absent or the tests do not run as root: ssh login tests skipped"))
        func test_ssh_logsInToAServerWithA1024BitRSAHostKey() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            let sshd = try ThrowawaySSHD(cli: cli, authorizedKeys: [line], hostKeyType: "rsa", hostKeyBits: 1024); defer { sshd.stop() }
            try cli.write("known_hosts", Array("[127.0.0.1]:\(sshd.port) \(sshd.hostKeyLine)\n".utf8))
            #expect(try cli.unlockSSH().status == 0)
            let login = try sshd.ssh(["echo", "logged-in"], socket: cli.sshSocket, options: ["-o", "HostKeyAlgorithms=rsa-sha2-512"],
                                     knownHosts: cli.path("known_hosts"))
            #expect(login.status == 0 && login.text == "logged-in\n", "\(login.status) \(login.stderr)")
        }

        // MARK: - What unlock --ssh serves

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_aDamagedEntryIsNamedAndSkippedAndTheOthersServedWithStatus4() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let lines = try cli.storeGeneratedSSHKeys(2)
            // A plain `set` replaces the value and keeps the fields: the marker says ssh key, the key is damaged.
            let damaged = "-----BEGIN OPENSSH PRIVATE KEY-----\nU0VDUkVUU0VDUkVUU0VDUkVU\n-----END OPENSSH PRIVATE KEY-----\n"
            #expect(try cli.run(["set", "ssh/key000"] + cli.unlock(), stdin: Array(damaged.utf8)).status == 0)
            let unlocked = try cli.unlockSSH()
            #expect(unlocked.status == 4, "\(unlocked.status) \(unlocked.stderr)")
            #expect(unlocked.text == "SSH_AUTH_SOCK=\(cli.sshSocket); export SSH_AUTH_SOCK;\n", "the line is printed for eval all the same")
            #expect(unlocked.stderr.contains("the ssh key entry 'ssh/key000' is not served"), "\(unlocked.stderr)")
            #expect(unlocked.stderr.contains("'ssh/key000' is damaged and not served (the other keys are)"), "\(unlocked.stderr)")
            #expect(!unlocked.stderr.contains("U0VDUkVU"), "never a byte of the entry")
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-L"]).text == lines[1] + "\n")
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_listsTheStoredCommentAfterItIsEdited() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            #expect(try cli.run(["set", "ssh/key000", "--field", "comment"] + cli.unlock(), stdin: Array("work laptop".utf8)).status == 0)
            let unlocked = try cli.unlockSSH()
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(unlocked.stderr.contains("serving \(try cli.fingerprint(ofPublicLine: line)) work laptop (ssh/key000)"), "\(unlocked.stderr)")
            let base64 = line.split(separator: " ")[1]
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-L"]).text == "ssh-ed25519 \(base64) work laptop\n")
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-l"]).text.contains(" work laptop (ED25519)"))
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_lifetimeZeroMeansNoLifetimeAsSSHAddReadsIt() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            let unlocked = try cli.unlockSSH(["--ssh-lifetime", "0"])
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-L"]).text == line + "\n")
            let bad = try cli.unlockSSH(["--ssh-lifetime", "1w"])
            #expect(bad.status == 64 && bad.stderr.contains("0: no lifetime"), "\(bad.status) \(bad.stderr)")
        }

        // MARK: - The public key line, and agent status

        @Test func test_getFieldPublic_endsWithANewlineSoTwoAppendsMakeTwoLines() throws {
            let cli = try CLI.withVault(["plain": "value"]); defer { cli.directory.remove() }
            let lines = try cli.storeGeneratedSSHKeys(2)
            let appended = try cli.shell("for n in ssh/key000 ssh/key001; do \"$VF\" get \"$n\" --field public --vault t.vault --password-file pw >> authorized_keys; done")
            #expect(appended.status == 0, "\(appended.stderr)")
            #expect(String(decoding: try cli.read("authorized_keys"), as: UTF8.self) == lines[0] + "\n" + lines[1] + "\n")
            // Every other field and value stays byte for byte.
            let fingerprint = try cli.run(["get", "ssh/key000", "--field", "fingerprint"] + cli.unlock())
            #expect(fingerprint.status == 0 && fingerprint.text.hasPrefix("SHA256:") && !fingerprint.text.hasSuffix("\n"))
            #expect(try cli.run(["get", "plain"] + cli.unlock()).text == "value")
            let json = try jsonObject(try cli.run(["get", "ssh/key000", "--json"] + cli.unlock()).stdout)
            let field = (json["fields"] as? [String: Any])?["public"] as? [String: Any]
            #expect(field?["value"] as? String == lines[0], "JSON keeps the stored field: \(json)")
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_agentStatus_showsTheSSHSocketAndTheKeysItServes() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let lines = try cli.storeGeneratedSSHKeys(2)
            #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
            let before = try cli.run(["agent", "status"])
            #expect(before.text.contains("ssh socket \(cli.sshSocket): not listening ('vaultfile unlock --ssh' starts it)"), "\(before.text)")
            #expect(try cli.unlockSSH().status == 0)
            let text = try cli.run(["agent", "status"])
            #expect(text.status == 0 && text.text.contains("ssh socket \(cli.sshSocket): 2 ssh keys served"), "\(text.text) \(text.stderr)")
            for (index, line) in lines.enumerated() {
                #expect(text.text.contains("  \(try cli.fingerprint(ofPublicLine: line)) key00\(index)@test (ssh-ed25519)"), "\(text.text)")
            }
            let json = try jsonObject(try cli.run(["agent", "status", "--json"]).stdout)
            #expect(json["ssh_socket"] as? String == cli.sshSocket && json["ssh_listening"] as? Bool == true)
            let keys = json["ssh_keys"] as? [[String: Any]] ?? []
            #expect(keys.compactMap { $0["comment"] as? String } == ["key000@test", "key001@test"])
            #expect(keys.first?["fingerprint"] as? String == (try cli.fingerprint(ofPublicLine: lines[0])) && keys.first?["type"] as? String == "ssh-ed25519")
        }
    }
}
