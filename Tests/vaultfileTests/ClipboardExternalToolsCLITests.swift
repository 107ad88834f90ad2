import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension ExternalTools {
    /// `get --clip` through a real xclip on a virtual X display (Xvfb): the copy, the read back,
    /// and the clear that follows. `make test` installs both (`make test-deps`).
    @Suite struct ClipboardXclipCLITests {
        private static let secret = "hunter2-through-xclip"
        private static let installed = ["/usr/bin/xclip", "/usr/bin/Xvfb"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

        /// Display numbers handed to this process's tests: two tests at once must not pick the
        /// same free number before either server has taken it.
        private static let handedOut = Mutex(0)

        /// An X server of this test alone, on a free display number; stopped (by pid) on the way out.
        private struct Display {
            let number: Int
            let server: CLI.Running

            init(_ cli: CLI) throws {
                // A display number no other test or session holds: its socket is absent.
                var number = 90 + Int(getpid() % 50) * 4 + ClipboardXclipCLITests.handedOut.withLock { handed in
                    defer { handed += 1 }
                    return handed
                }
                while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") {
                    number += 1
                }
                self.number = number
                server = try cli.start([":\(number)", "-nolisten", "tcp", "-screen", "0", "640x480x24"], executable: "/usr/bin/Xvfb")
                let socket = "/tmp/.X11-unix/X\(number)"
                _ = CLI.waitFor(10) { FileManager.default.fileExists(atPath: socket) }
            }

            /// What `xclip -selection clipboard -o` prints (empty when the clipboard is empty).
            func paste(_ cli: CLI) throws -> String {
                try cli.run(["-selection", "clipboard", "-o"], extra: ["DISPLAY": ":\(number)"], executable: "/usr/bin/xclip").text
            }

            func stop() {
                kill(server.pid, SIGTERM)
                _ = server.finish()
            }
        }

        @Test(.enabled(if: installed, "xclip and Xvfb are not both installed (apt-get install xclip xvfb)"))
        func test_getClip_copiesThroughXclipAndClearsWhatItCopied() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault()
            #expect(try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array(Self.secret.utf8)).status == 0)
            let display = try Display(cli)
            defer { display.stop() }
            let environment = ["DISPLAY": ":\(display.number)", "PATH": "/usr/bin:/bin"]
            let copied = try cli.run(["get", "db/password", "--clip", "--clear-after", "2s"] + cli.unlock(), extra: environment)
            #expect(copied.status == 0, "\(copied.stderr)")
            #expect(copied.stderr.contains("copied; clears in 2 s"), "\(copied.stderr)")
            #expect(copied.stdout.isEmpty)
            #expect(try display.paste(cli) == Self.secret, "the X clipboard holds the secret")
            let cleared = try CLI.waitFor(15) { try display.paste(cli) != Self.secret }
            #expect(cleared, "cleared after 2 s")
            #expect(try display.paste(cli).isEmpty, "cleared, not replaced")
        }

        @Test(.enabled(if: installed, "xclip and Xvfb are not both installed (apt-get install xclip xvfb)"))
        func test_getClip_leavesWhatAnotherProgramCopiedMeanwhile() throws {
            let cli = try CLI(); defer { cli.directory.remove() }
            try cli.initVault()
            #expect(try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array(Self.secret.utf8)).status == 0)
            let display = try Display(cli)
            defer { display.stop() }
            let environment = ["DISPLAY": ":\(display.number)", "PATH": "/usr/bin:/bin"]
            #expect(try cli.run(["get", "db/password", "--clip", "--clear-after", "2s"] + cli.unlock(), extra: environment).status == 0)
            // Another program copies something else before the clear: it stays.
            // (xclip stays behind to serve the selection: its stdout and stderr must not be the harness's pipes.)
            #expect(try cli.run(["-c", "exec /usr/bin/xclip -selection clipboard >/dev/null 2>&1"], stdin: Array("the user's own text".utf8),
                                extra: environment, executable: "/bin/sh").status == 0)
            usleep(3_500_000)
            #expect(try display.paste(cli) == "the user's own text")
        }
    }
}
