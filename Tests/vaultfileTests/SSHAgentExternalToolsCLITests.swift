import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `unlock --ssh` against the real clients: ssh-add, ssh logging in to a throw-away sshd,
/// `ssh-keygen -Y sign`/`verify`, git's ssh commit signing, and paramiko as an independent client.
/// Every client runs under `timeout`; every agent and sshd is killed by pid on the way out.
extension ExternalTools {
    @Suite struct SSHAgentClientTests {
        // MARK: - unlock --ssh and ssh-add

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_servesExactlyTheStoredKeysToSSHAdd() throws {
            let cli = try CLI.withVault(["note": "not a key"]); defer { cli.stopAgent(); cli.directory.remove() }
            let first = try cli.storeKeygenSSHKey("ssh/github", file: "id_github", comment: "me@github")
            let second = try cli.storeGeneratedSSHKeys(1, prefix: "ssh/work")[0]
            try SSHKeygen.make("ed25519", comment: "on-disk-only", at: cli.path("id_disk"))

            let unlocked = try cli.unlockSSH()
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(unlocked.text == "SSH_AUTH_SOCK=\(cli.sshSocket); export SSH_AUTH_SOCK;\n")
            for line in [first, second] {
                #expect(unlocked.stderr.contains("serving \(try cli.fingerprint(ofPublicLine: line)) \(line.split(separator: " ")[2])"), "\(unlocked.stderr)")
            }
            let listed = try cli.withAgent(["/usr/bin/ssh-add", "-L"])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(Set(listed.text.split(separator: "\n").map(String.init)) == [first, second])
            let fingerprints = try cli.withAgent(["/usr/bin/ssh-add", "-l"])
            #expect(fingerprints.text.split(separator: "\n").count == 2)
            #expect(fingerprints.text.contains(try cli.fingerprint(ofPublicLine: first) + " me@github (ED25519)"), "\(fingerprints.text)")
            var info = stat()
            #expect(lstat(cli.sshSocket, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_againWhileHeldAsksNothingAndPrintsTheLineAgain() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            try cli.storeGeneratedSSHKeys(2)
            #expect(try cli.unlockSSH().status == 0)
            // No password source and no terminal: a prompt would fail.
            let again = try cli.run(["unlock", "--ssh", "--vault", cli.path("t.vault")])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.text == "SSH_AUTH_SOCK=\(cli.sshSocket); export SSH_AUTH_SOCK;\n")
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-l"]).text.split(separator: "\n").count == 2)
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_keysLimitsByPrefixAndLockStopsServingAtOnce() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            try cli.storeGeneratedSSHKeys(2, prefix: "ssh/home/")
            let work = try cli.storeGeneratedSSHKeys(1, prefix: "ssh/work/")
            #expect(try cli.unlockSSH(["--ssh-keys", "ssh/work/"]).status == 0)
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-L"]).text == work[0] + "\n")
            #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
            let after = try cli.withAgent(["/usr/bin/ssh-add", "-l"])
            #expect(after.status != 0 && !after.text.contains("SHA256"), "\(after.text) \(after.stderr)")
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_servesEveryKeyTypeAndOnlyEntriesStoredAsSSHKeys() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            var lines = [try cli.storeKeygenSSHKey("ssh/rsa", type: "rsa", file: "id_rsa", comment: "rsa-key")]
            lines.append(try cli.storeKeygenSSHKey("ssh/ecdsa", type: "ecdsa", file: "id_ecdsa", comment: "ecdsa-key"))
            lines += try cli.storeGeneratedSSHKeys(1, prefix: "ssh/ed")
            // A private key stored as a plain value (no --ssh-key) is not an ssh key entry: not served.
            try SSHKeygen.make("ed25519", comment: "plain", at: cli.path("id_plain"))
            #expect(try cli.run(["set", "ssh/plain"] + cli.unlock(), stdin: try cli.read("id_plain")).status == 0)
            let unlocked = try cli.unlockSSH()
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(Set(try cli.withAgent(["/usr/bin/ssh-add", "-L"]).text.split(separator: "\n").map(String.init)) == Set(lines))
            let listed = try cli.withAgent(["/usr/bin/ssh-add", "-l"]).text
            #expect(listed.contains("rsa-key (RSA)") && listed.contains("ecdsa-key (ECDSA)") && listed.contains("(ED25519)"), "\(listed)")
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_unlockSSH_lifetimeStopsServingTheKeysWhileTheVaultStaysUnlocked() throws {
            let cli = try CLI.withVault(["a": "alpha"]); defer { cli.stopAgent(); cli.directory.remove() }
            try cli.storeGeneratedSSHKeys(1, prefix: "ssh/brief/")
            let kept = try cli.storeGeneratedSSHKeys(1, prefix: "ssh/kept/")
            #expect(try cli.unlockSSH(["--ssh-keys", "ssh/kept/"]).status == 0)
            #expect(try cli.run(["unlock", "--ssh", "--ssh-keys", "ssh/brief/", "--ssh-lifetime", "2s", "--vault", cli.path("t.vault")]).status == 0)
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-l"]).text.split(separator: "\n").count == 2)
            #expect(CLI.waitFor(10) { (try? cli.withAgent(["/usr/bin/ssh-add", "-L"]).text) == kept[0] + "\n" }, "the brief key outlived its lifetime")
            let get = try cli.run(["get", "a", "--vault", cli.path("t.vault")])
            #expect(get.status == 0 && get.text == "alpha", "the vault stays unlocked: \(get.stderr)")
        }

        @Test func test_unlockSSH_refusesAFolderAShellWouldNeedQuotedAndOptionsWithoutSSH() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let quoted = try cli.unlockSSH(environment: ["VAULTFILE_AGENT_SOCK": cli.path("a b/agent.sock")])
            #expect(quoted.status == 2 && quoted.text.isEmpty, "\(quoted.status) \(quoted.stderr)")
            #expect(quoted.stderr.contains("would need quoted"), "\(quoted.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("a b")), "nothing was unlocked")
            // A folder where agent.sock fits a socket address (107 bytes) and ssh-agent.sock does not.
            let base = cli.path("")
            let folder = base + String(repeating: "d", count: max(1, 95 - base.utf8.count))
            let long = try cli.unlockSSH(environment: ["VAULTFILE_AGENT_SOCK": folder + "/agent.sock"])
            #expect(long.status == 2 && long.text.isEmpty && long.stderr.contains("longer than 107 bytes"), "\(long.status) \(long.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder), "nothing was unlocked")
            #expect(try cli.run(["unlock", "--ssh-keys", "ssh/"] + cli.unlock()).status == 64)
            #expect(try cli.run(["unlock", "--ssh", "--ssh-confirm"] + cli.unlock()).status == 64)
            #expect(try cli.run(["unlock", "--ssh", "--ssh-lifetime", "soon"] + cli.unlock()).status == 64)
        }

        // MARK: - ssh-keygen -Y, git, paramiko

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_sshKeygenY_signsThroughTheAgentAndVerifies() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeKeygenSSHKey("ssh/sign", file: "id_sign", comment: "signer")
            try FileManager.default.removeItem(atPath: cli.path("id_sign"))  // only the public half stays on disk
            #expect(try cli.unlockSSH().status == 0)
            try cli.write("message", Array("a small file\n".utf8))
            try cli.write("allowed", Array("me@example.com \(line)\n".utf8))
            let signed = try cli.withAgent([SSHKeygen.path!, "-Y", "sign", "-f", cli.path("id_sign.pub"), "-n", "file", cli.path("message")])
            #expect(signed.status == 0, "\(signed.stderr)")
            let verified = try cli.run(["-c", "'\(SSHKeygen.path!)' -Y verify -f allowed -I me@example.com -n file -s message.sig < message"],
                                       executable: "/bin/sh")
            #expect(verified.status == 0 && verified.text.contains("Good \"file\" signature"), "\(verified.text) \(verified.stderr)")
        }

        @Test(.enabled(if: CLI.hasSSHClients && FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git or openssh-client is absent"))
        func test_gitCommit_signedWithSSHThroughTheAgentVerifies() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeKeygenSSHKey("ssh/git", file: "id_git", comment: "git-signing")
            try FileManager.default.removeItem(atPath: cli.path("id_git"))
            #expect(try cli.unlockSSH().status == 0)
            try cli.write("allowed", Array("t@example.com \(line)\n".utf8))
            let script = """
                git init -q -b main repo && cd repo && git config user.name t && git config user.email t@example.com \
                && git config gpg.format ssh && git config user.signingkey '\(cli.path("id_git.pub"))' \
                && git config gpg.ssh.allowedSignersFile '\(cli.path("allowed"))' \
                && git commit -q -S --allow-empty -m signed && git verify-commit HEAD
                """
            let result = try cli.withAgent(["/bin/sh", "-c", script], environment: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
            #expect(result.status == 0, "\(result.text) \(result.stderr)")
            #expect(result.stderr.contains("Good \"git\" signature for t@example.com"), "\(result.stderr)")
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh-agent client tests skipped"))
        func test_paramiko_listsAndSignsAsASecondClient() throws {
            guard let python = CLI.python, try CLI().run(["-c", "import paramiko"], executable: python).status == 0 else {
                print("skipped: python3-paramiko is absent"); return
            }
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let lines = try cli.storeGeneratedSSHKeys(2)
            #expect(try cli.unlockSSH().status == 0)
            try cli.write("client.py", Array("""
                import paramiko
                from paramiko.message import Message
                agent = paramiko.Agent()
                keys = agent.get_keys()
                print(len(keys))
                for key in keys:
                    data = b"signed by paramiko"
                    public = paramiko.Ed25519Key(data=key.asbytes())
                    print(key.get_name(), key.get_base64(), public.verify_ssh_sig(data, Message(key.sign_ssh_data(data))))

                """.utf8))
            let result = try cli.withAgent([python, cli.path("client.py")])
            #expect(result.status == 0, "\(result.stderr)")
            let expected = ["2"] + lines.map { line in "ssh-ed25519 \(line.split(separator: " ")[1]) True" }
            #expect(result.text.split(separator: "\n").map(String.init) == expected, "\(result.text)")
        }

        // MARK: - ssh and a real sshd

        @Test(.enabled(if: ThrowawaySSHD.available, "sshd (openssh-server) is absent or the tests do not run as root: ssh login tests skipped"))
        func test_ssh_logsInToARealSSHDWithEachKeyTypeAndOffersOnlyTheVaultsKeys() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            var lines: [String] = []
            for type in ["ed25519", "ecdsa", "rsa"] {
                lines.append(try cli.storeKeygenSSHKey("ssh/\(type)", type: type, file: "id_\(type)", comment: "\(type)-key"))
                try FileManager.default.removeItem(atPath: cli.path("id_\(type)"))
            }
            try SSHKeygen.make("ed25519", comment: "disk-only", at: cli.path("id_disk"))
            #expect(try cli.unlockSSH().status == 0)
            // One server per key type, each letting in only that key: the agent signs with each
            // (ssh asks rsa-sha2-512 of the RSA key), on a connection ssh bound to the session.
            for line in lines {
                let sshd = try ThrowawaySSHD(cli: cli, authorizedKeys: [line]); defer { sshd.stop() }
                let login = try sshd.ssh(["echo", "logged-in"], socket: cli.sshSocket, options: ["-v"])
                #expect(login.status == 0 && login.text == "logged-in\n", "\(line): \(login.status) \(login.stderr)")
                let served = try cli.fingerprint(ofPublicLine: line)
                #expect(login.stderr.contains("Server accepts key: ") && login.stderr.contains(served), "\(login.stderr)")
                let disk = String(decoding: try cli.read("id_disk.pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(!login.stderr.contains(try cli.fingerprint(ofPublicLine: disk)), "a key not in the vault was offered")
            }
            // A server that knows only a key the vault does not hold lets nobody in.
            let disk = String(decoding: try cli.read("id_disk.pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let other = try ThrowawaySSHD(cli: cli, authorizedKeys: [disk]); defer { other.stop() }
            let refused = try other.ssh(["echo", "logged-in"], socket: cli.sshSocket)
            #expect(refused.status == 255 && refused.text.isEmpty, "\(refused.status) \(refused.stderr)")
        }

        @Test(.enabled(if: ThrowawaySSHD.available, "sshd (openssh-server) is absent or the tests do not run as root: ssh login tests skipped"))
        func test_ssh_aForwardedAgentSignsOnlyWithKeysThatAllowForwarding() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            try cli.write("key.pub", Array((line + "\n").utf8))
            try cli.write("message", Array("m\n".utf8))
            #expect(try cli.unlockSSH().status == 0)
            let sshd = try ThrowawaySSHD(cli: cli, authorizedKeys: [line]); defer { sshd.stop() }
            let remote = ["'\(SSHKeygen.path!)' -Y sign -f '\(cli.path("key.pub"))' -n file < '\(cli.path("message"))' >/dev/null && echo signed; ssh-add -l | wc -l"]
            let refused = try sshd.ssh(remote, socket: cli.sshSocket, options: ["-A"])
            #expect(refused.status == 0 && refused.text == "1\n", "listing works, signing does not: \(refused.text) \(refused.stderr)")
            #expect(try cli.unlockSSH(["--ssh-allow-forwarding"]).status == 0)
            let allowed = try sshd.ssh(remote, socket: cli.sshSocket, options: ["-A"])
            #expect(allowed.text == "signed\n1\n", "\(allowed.text) \(allowed.stderr)")
        }
    }
}
