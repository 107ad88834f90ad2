import Foundation
import TestSupport
import Testing

/// The ssh socket under hostile and faulty clients: frames of wrong lengths and types, a client
/// that stops mid-request or leaves mid-answer, 256 keys, the confirm command (what it is told, a
/// refusal), and a vault locked while a signature waits for it. Each gets FAILURE or a clean close,
/// and the agent keeps serving.
extension ExternalTools {
    @Suite struct SSHAgentFaultTests {
        /// A python3 client that sends raw frames on the ssh socket and prints one line per case:
        /// the answer's type byte, `closed` when the agent closed first, or `open` when it is still
        /// waiting after 3 s.
        private static let rawClient = """
            import socket, struct, sys, time
            path = sys.argv[1]
            def connect():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.settimeout(4)
                return s
            def read(s):
                data = b''
                try:
                    while len(data) < 4 or len(data) < 4 + struct.unpack('>I', data[:4])[0]:
                        chunk = s.recv(65536)
                        if not chunk:
                            return 'closed'
                        data += chunk
                except socket.timeout:
                    return 'open'
                except ConnectionResetError:
                    return 'closed'
                return str(data[4])
            def frame(body):
                return struct.pack('>I', len(body)) + body
            def string(b):
                return struct.pack('>I', len(b)) + b
            s = connect()
            for body in [b'\\x0b', b'\\x11' + string(b'ssh-ed25519'), b'\\x12' + string(b'x'), b'\\x13', b'\\x16' + string(b'pw'),
                         b'\\x17' + string(b'pw'), b'\\x1b' + string(b'query'), b'\\x1b' + string(b'session-bind@openssh.com') + b'\\x00',
                         b'\\x0d\\x00\\x00\\x00\\x05ab', b'\\xff', b'\\x0b\\x00', b'\\x0d' + string(b'k') + string(b'd') + b'\\x00\\x00\\x00\\x08']:
                s.sendall(frame(body))
                print(read(s))
            s.close()
            for raw in [b'\\x00\\x00\\x00\\x00', struct.pack('>I', 300000)]:
                s = connect(); s.sendall(raw); print(read(s)); s.close()
            s = connect(); s.sendall(b'\\x00\\x00'); time.sleep(2.5); print(read(s)); s.close()
            s = connect(); s.sendall(frame(b'\\x0b')); s.close()
            s = connect(); s.sendall(struct.pack('>I', 100) + b'\\x0b'); s.close()
            s = connect(); s.sendall(frame(b'\\x0b')); print(read(s))

            """

        @Test(.enabled(if: CLI.hasSSHClients && CLI.python != nil, "openssh-client or python3 is absent: ssh socket fault tests skipped"))
        func test_sshSocket_answersHostileFramesWithFailureAndKeepsServing() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            try cli.storeGeneratedSSHKeys(1)
            #expect(try cli.unlockSSH().status == 0)
            try cli.write("raw.py", Array(Self.rawClient.utf8))
            let result = try cli.run(["-k", "1", "30", CLI.python!, cli.path("raw.py"), cli.sshSocket], executable: "/usr/bin/timeout")
            #expect(result.status == 0, "\(result.stderr)")
            // identities; add, remove, remove all, lock, unlock, query, a malformed bind, a cut sign,
            // an unknown type, trailing bytes, unknown flags: FAILURE (5), and EXTENSION_FAILURE (28) for the bind;
            // an empty and an oversized frame: FAILURE, then closed; a request that stops: closed at its deadline;
            // after clients that left mid-answer and mid-request: still served.
            let expected = ["12", "5", "5", "5", "5", "5", "5", "28", "5", "5", "5", "5", "5", "5", "closed", "12"]
            #expect(result.text.split(separator: "\n").map(String.init) == expected, "\(result.text)")
            #expect(try cli.withAgent(["/usr/bin/ssh-add", "-l"]).status == 0)
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh socket fault tests skipped"))
        func test_sshSocket_serves256Keys() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let lines = try cli.storeGeneratedSSHKeys(256)
            let unlocked = try cli.unlockSSH()
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            let listed = try cli.withAgent(["/usr/bin/ssh-add", "-L"])
            #expect(listed.text.split(separator: "\n").map(String.init) == lines)
            try cli.write("k.pub", Array((lines[255] + "\n").utf8))
            try cli.write("m", [1])
            #expect(try cli.withAgent([SSHKeygen.path!, "-Y", "sign", "-f", cli.path("k.pub"), "-n", "file", cli.path("m")]).status == 0)
        }

        // MARK: - The confirm command

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh socket fault tests skipped"))
        func test_sshConfirm_isToldWhatIsSignedAndItsRefusalFailsTheSignature() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            try cli.write("k.pub", Array((line + "\n").utf8))
            try cli.write("m", [1])
            let command = "env | grep '^VAULTFILE_CONFIRM_' | sort >> '\(cli.path("confirm.log"))'; echo >> '\(cli.path("confirm.log"))'; [ ! -e '\(cli.path("deny"))' ]"
            #expect(try cli.unlockSSH(["--ssh-confirm", "--confirm-command", command]).status == 0)
            let sign = [SSHKeygen.path!, "-Y", "sign", "-f", cli.path("k.pub"), "-n", "file@example.com", cli.path("m")]
            let signed = try cli.withAgent(sign)
            #expect(signed.status == 0, "\(signed.stderr)")
            let log = String(decoding: try cli.read("confirm.log"), as: UTF8.self)
            for expected in ["VAULTFILE_CONFIRM_ACTION=ssh-sign", "VAULTFILE_CONFIRM_SSH_FINGERPRINT=\(try cli.fingerprint(ofPublicLine: line))",
                             "VAULTFILE_CONFIRM_SSH_PURPOSE=sshsig", "VAULTFILE_CONFIRM_SSH_NAMESPACE=file@example.com",
                             "VAULTFILE_CONFIRM_SSH_FORWARDED=0", "VAULTFILE_CONFIRM_SSH_COMMENT=key000@test", "VAULTFILE_CONFIRM_PID="] {
                #expect(log.contains(expected), "\(expected) in \(log)")
            }
            try cli.write("deny", [])
            try FileManager.default.removeItem(atPath: cli.path("m.sig"))
            #expect(try cli.withAgent(sign).status != 0)
            #expect(!FileManager.default.fileExists(atPath: cli.path("m.sig")))
        }

        @Test(.enabled(if: CLI.hasSSHClients, "openssh-client is absent: ssh socket fault tests skipped"))
        func test_sshSign_aVaultLockedWhileTheConfirmCommandRunsSignsNothing() throws {
            let cli = try CLI.withVault([:]); defer { cli.stopAgent(); cli.directory.remove() }
            let line = try cli.storeGeneratedSSHKeys(1)[0]
            try cli.write("k.pub", Array((line + "\n").utf8))
            try cli.write("m", [1])
            // Waits (at most 5 s) for the test to lock the vault, then allows.
            let command = "touch '\(cli.path("asked"))'; for i in $(seq 100); do [ -e '\(cli.path("go"))' ] && exit 0; sleep 0.05; done; exit 0"
            #expect(try cli.unlockSSH(["--ssh-confirm", "--confirm-command", command]).status == 0)
            let signing = try cli.start(["-k", "1", "20", SSHKeygen.path!, "-Y", "sign", "-f", cli.path("k.pub"), "-n", "file", cli.path("m")],
                                        extra: ["SSH_AUTH_SOCK": cli.sshSocket], executable: "/usr/bin/timeout")
            defer { signing.kill() }
            #expect(CLI.waitFor(10) { FileManager.default.fileExists(atPath: cli.path("asked")) })
            #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
            try cli.write("go", [])
            let result = signing.finish()
            #expect(result.status != 0, "a locked vault's key signed: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("m.sig")))
        }
    }
}
