import Foundation
import TestSupport
import Testing

/// The credential helper driven by the real git: `git credential fill/approve/reject` with the
/// helper configured (the link name and the `!vaultfile git credential` form), and a clone over
/// HTTP with Basic auth from `git http-backend` behind a python3 server on a loopback port, which
/// the test starts and kills. Every git run is bounded by timeout(1) and GIT_TERMINAL_PROMPT=0.
@Suite struct GitCredentialGitCLITests {
    static let hasTools = FileManager.default.isExecutableFile(atPath: "/usr/bin/git") && CLI.python != nil
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout")

    /// Runs `git ARGS` in the test folder with `input` on stdin, bounded to 30 s.
    static func git(_ cli: CLI, _ arguments: String, input: String = "", extra: [String: String] = [:]) throws -> CLI.Result {
        try cli.run(["-c", "timeout 30 git \(arguments)"], stdin: Array(input.utf8),
                    extra: extra.merging(["GIT_TERMINAL_PROMPT": "0"]) { $1 }, executable: "/bin/sh")
    }

    @Test(.enabled(if: hasTools, "git, python3 or timeout is absent: the real git tests skipped"))
    func test_gitCredentialFill_answersThroughBothHelperForms() throws {
        let cli = try GitCredentialCLITests.helperFolder(["git/example.com": ("s3cret", ["username": "alice"])])
        defer { cli.directory.remove() }
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        for helper in ["vaultfile", "'!vaultfile git credential'"] {
            let fill = try Self.git(cli, "-c credential.helper=\(helper) credential fill", input: "protocol=https\nhost=example.com\n\n", extra: source)
            #expect(fill.status == 0, "\(helper): \(fill.stderr)")
            #expect(fill.text == "protocol=https\nhost=example.com\nusername=alice\npassword=s3cret\n", "\(helper): \(fill.text)")
        }
        // Nothing matched: git goes on to ask, which GIT_TERMINAL_PROMPT=0 forbids, so fill fails.
        let none = try Self.git(cli, "-c credential.helper=vaultfile credential fill", input: "protocol=https\nhost=other.org\n\n", extra: source)
        #expect(none.status != 0 && !none.text.contains("password="), "\(none.text)")
    }

    @Test(.enabled(if: hasTools, "git, python3 or timeout is absent: the real git tests skipped"))
    func test_gitCredentialApproveAndReject_storeAndEraseWithAllowWriteThroughTheAgent() throws {
        let cli = try GitCredentialCLITests.helperFolder(["other": ("x", [:])]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let credential = "protocol=https\nhost=git.example.org\nusername=bob\npassword=tok-1\n\n"
        // Read-only helper: approve stores nothing.
        #expect(try Self.git(cli, "-c credential.helper=vaultfile credential approve", input: credential).status == 0)
        #expect(try cli.run(["get", "git/git.example.org"] + cli.unlock()).status == 1)
        let writer = "-c credential.helper='vaultfile --allow-write'"
        let approve = try Self.git(cli, "\(writer) credential approve", input: credential)
        #expect(approve.status == 0 && approve.stderr.isEmpty, "\(approve.stderr)")
        #expect(try cli.run(["get", "git/git.example.org"] + cli.unlock()).text == "tok-1")
        let fill = try Self.git(cli, "\(writer) credential fill", input: "protocol=https\nhost=git.example.org\n\n")
        #expect(fill.text.contains("username=bob\npassword=tok-1\n"), "\(fill.text) \(fill.stderr)")
        let reject = try Self.git(cli, "\(writer) credential reject", input: credential)
        #expect(reject.status == 0, "\(reject.stderr)")
        #expect(try cli.run(["get", "git/git.example.org"] + cli.unlock()).status == 1)
    }

    /// The server: git http-backend as CGI behind Basic auth (user and password from argv), on a
    /// loopback port it writes to `port` once it listens.
    static let server = """
        import base64, http.server, os, subprocess, sys
        root, user, password, port_file = sys.argv[1:5]
        expected = 'Basic ' + base64.b64encode(f'{user}:{password}'.encode()).decode()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self): self.serve()
            def do_POST(self): self.serve()
            def log_message(self, *args): pass
            def serve(self):
                if self.headers.get('Authorization', '') != expected:
                    self.send_response(401)
                    self.send_header('WWW-Authenticate', 'Basic realm="test"')
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                    return
                path, _, query = self.path.partition('?')
                length = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(length) if length else b''
                env = {'GIT_PROJECT_ROOT': root, 'GIT_HTTP_EXPORT_ALL': '1', 'PATH_INFO': path, 'QUERY_STRING': query,
                       'REQUEST_METHOD': self.command, 'CONTENT_TYPE': self.headers.get('Content-Type', ''),
                       'CONTENT_LENGTH': str(len(body)), 'REMOTE_USER': user, 'REMOTE_ADDR': '127.0.0.1',
                       'GATEWAY_INTERFACE': 'CGI/1.1', 'SERVER_PROTOCOL': 'HTTP/1.1', 'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
                       'HTTP_GIT_PROTOCOL': self.headers.get('Git-Protocol', '')}
                if self.headers.get('Content-Encoding'): env['HTTP_CONTENT_ENCODING'] = self.headers['Content-Encoding']
                out = subprocess.run(['git', 'http-backend'], input=body, env=env, capture_output=True, timeout=20).stdout
                separator = b'\\r\\n\\r\\n' if b'\\r\\n\\r\\n' in out else b'\\n\\n'
                head, _, rest = out.partition(separator)
                status, headers = 200, []
                for line in head.replace(b'\\r\\n', b'\\n').split(b'\\n'):
                    key, _, value = line.decode().partition(':')
                    if key.lower() == 'status': status = int(value.strip().split()[0])
                    elif key: headers.append((key, value.strip()))
                self.send_response(status)
                for key, value in headers: self.send_header(key, value)
                self.send_header('Content-Length', str(len(rest)))
                self.end_headers()
                self.wfile.write(rest)
        server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
        with open(port_file + '.tmp', 'w') as f: f.write(str(server.server_address[1]))
        os.rename(port_file + '.tmp', port_file)
        server.serve_forever()

        """

    @Test(.enabled(if: hasTools, "git, python3 or timeout is absent: the real git tests skipped"))
    func test_gitClone_overHTTPWithBasicAuthTakesTheVaultsCredential() throws {
        let cli = try GitCredentialCLITests.helperFolder(["other": ("x", [:])]); defer { cli.directory.remove() }
        // A bare repository with one commit.
        let made = try cli.shell("""
            git init -q -b main work && cd work && echo hello > README && git add README \
            && git -c user.name=t -c user.email=t@example.com commit -q -m first && cd .. && git clone -q --bare work served/repo.git
            """)
        #expect(made.status == 0, "\(made.stderr)")
        try cli.write("server.py", Array(Self.server.utf8))
        let server = try cli.start([cli.path("server.py"), cli.path("served"), "gituser", "http-pass", cli.path("port")], executable: CLI.python)
        defer { server.kill() }
        #expect(CLI.waitFor(10) { FileManager.default.fileExists(atPath: cli.path("port")) }, "the server did not start")
        let port = try String(decoding: cli.read("port"), as: UTF8.self)
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        // A wrong password in the vault: the clone fails (401), nothing hangs.
        for (name, field, value) in [("git/127.0.0.1:\(port)", nil, "wrong"), ("git/127.0.0.1:\(port)", "username", "gituser"),
                                     ("git/127.0.0.1:\(port)", "protocol", "http")] as [(String, String?, String)] {
            let set = try cli.run(["set", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock(), stdin: Array(value.utf8))
            #expect(set.status == 0, "\(set.stderr)")
        }
        let refused = try Self.git(cli, "-c credential.helper=vaultfile clone -q http://127.0.0.1:\(port)/repo.git refused", extra: source)
        #expect(refused.status != 0 && !FileManager.default.fileExists(atPath: cli.path("refused/README")), "\(refused.stderr)")
        // The right one: cloned with the vault's credential, and nothing asked.
        #expect(try cli.run(["set", "git/127.0.0.1:\(port)"] + cli.unlock(), stdin: Array("http-pass".utf8)).status == 0)
        let clone = try Self.git(cli, "-c credential.helper=vaultfile clone -q http://127.0.0.1:\(port)/repo.git cloned", extra: source)
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(try String(decoding: cli.read("cloned/README"), as: UTF8.self) == "hello\n")
    }

    /// The attacker's review with the real git: a clone of `http://127.0.0.2%2Fx@127.0.0.1:PORT/repo.git`
    /// (git decodes the user to `127.0.0.2/x`) takes the entry without a user and succeeds; its
    /// store must not plant `git/127.0.0.2/x@127.0.0.1:PORT/repo`, which would read back as host
    /// 127.0.0.2 and hand the password to that host. The server and every git run are bounded.
    @Test(.enabled(if: hasTools, "git, python3 or timeout is absent: the real git tests skipped"))
    func test_gitClone_aUserNameWithASlashPlantsNoEntryForAnotherHost() throws {
        let cli = try GitCredentialCLITests.helperFolder(["other": ("x", [:])]); defer { cli.directory.remove() }
        let made = try cli.shell("git init -q -b main work && cd work && echo hi > R && git add R "
                                 + "&& git -c user.name=t -c user.email=t@example.com commit -q -m c && cd .. && git clone -q --bare work served/repo.git")
        #expect(made.status == 0, "\(made.stderr)")
        try cli.write("server.py", Array(Self.server.utf8))
        // The server takes the victim's password under any user name the attacker chose.
        let server = try cli.start([cli.path("server.py"), cli.path("served"), "127.0.0.2/x", "PATVALUE", cli.path("port")], executable: CLI.python)
        defer { server.kill() }
        #expect(CLI.waitFor(10) { FileManager.default.fileExists(atPath: cli.path("port")) }, "the server did not start")
        let port = try String(decoding: cli.read("port"), as: UTF8.self)
        let victim = "git/127.0.0.1:\(port)/repo"
        #expect(try cli.run(["set", victim] + cli.unlock(), stdin: Array("PATVALUE".utf8)).status == 0)
        #expect(try cli.run(["set", victim, "--field", "protocol"] + cli.unlock(), stdin: Array("http".utf8)).status == 0)
        let source = ["VAULTFILE_PASSWORD_FILE": cli.path("pw")]
        let helper = "-c credential.helper='vaultfile --allow-write' -c credential.useHttpPath=true"
        let clone = try Self.git(cli, "\(helper) clone -q 'http://127.0.0.2%2Fx@127.0.0.1:\(port)/repo.git' c1", extra: source)
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(clone.stderr.contains("the user name '127.0.0.2/x'"), "store says why it kept nothing: \(clone.stderr)")
        let listed = try cli.run(["list", "git/"] + cli.unlock())
        #expect(listed.text == victim + "\n", "\(listed.text)")
        let probe = try Self.git(cli, "\(helper) credential fill", input: "protocol=http\nhost=127.0.0.2\npath=x@127.0.0.1:\(port)/repo.git\n\n", extra: source)
        #expect(!probe.text.contains("PATVALUE"), "\(probe.text)")
    }
}
