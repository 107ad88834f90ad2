import Foundation
import TestSupport
import Testing

/// A signal while `import --format pass` runs gpg (issue 44): every gpg child is ended and
/// reaped before vaultfile exits, and nothing is written. Real gpg under a throw-away key in a
/// temporary GNUPGHOME, as CryptImportCLITests; every wait is bounded.
extension ExternalTools {
    @Suite struct ImportSignalCLITests {
        static let hasGpg = FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg")
        /// Runs `script` with `sh -c` in the test's folder; fails the test on a non-zero exit.
        private func sh(_ cli: CLI, _ script: String, _ environment: [String: String], stdin: String = "") throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": cli.directory.url.path].merging(environment) { $1 }
            process.currentDirectoryURL = cli.directory.url
            let input = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardError = errors
            try process.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(script): \(String(decoding: err, as: UTF8.self))")
        }

        /// The gpg processes (not gpg-agent) whose environment names `home`, the test's GNUPGHOME
        /// (none but vaultfile's children: the store's files reach gpg as its stdin, unnamed).
        private func gpgProcesses(naming home: String) -> [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry -> pid_t? in
                guard let pid = pid_t(entry),
                      let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), command == "gpg\n",
                      let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                      String(decoding: environment, as: UTF8.self).contains("GNUPGHOME=" + home + "\0") else { return nil }
                return pid
            }
        }

        /// A gpg that writes the file, closes its output and lingers (a wrapper, gpg waiting on its
        /// agent after writing): a SIGTERM then still ends the import at once (att58 F2; before,
        /// vaultfile waited for the tool with the signals blocked, here for 30 s).
        /// With SIGINT (Ctrl-C) as with SIGTERM, the import ends with 128 + the signal and says so
        /// in one line, written once the children are reaped (cold60 L3; before, stderr was empty).
        @Test(arguments: [SIGTERM, SIGINT])
        func test_importPass_signalWhileAToolLingersAfterItsOutputEndsAtOnceAndSaysSo(signal: Int32) throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/gpg", Array("""
                #!/bin/sh
                cat
                exec 1>&-
                touch "$MARK"
                exec sleep 30

                """.utf8), mode: 0o700)
            try cli.write("store/.gpg-id", Array("K\n".utf8))
            try cli.write("store/a.gpg", Array("secret\n".utf8))
            let before = try cli.read("t.vault"), mark = cli.path("lingering")
            let importing = try cli.start(["import", "--format", "pass", cli.path("store")] + cli.unlock(),
                                          extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "MARK": mark])
            defer { if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() } }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: mark) && importing.isRunning && Date() < deadline { usleep(10_000) }
            if !importing.isRunning { let early = importing.finish(); Issue.record("the import ended first: \(early.status) \(early.stderr)"); return }
            try #require(FileManager.default.fileExists(atPath: mark), "the fake gpg did not run within 20 s")
            usleep(200_000)
            let sent = Date()
            kill(importing.pid, signal)
            while importing.isRunning && Date().timeIntervalSince(sent) < 20 { usleep(10_000) }
            try #require(!importing.isRunning, "the import did not end within 20 s of signal \(signal)")
            #expect(Date().timeIntervalSince(sent) < 10, "the signal waited for the lingering tool")
            let result = importing.finish()
            #expect(!result.endedBySignal && result.status == 128 + signal, "\(result.status): \(result.stderr)")
            let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
            #expect(result.stderr == "vaultfile: interrupted (\(name)): nothing was imported\n", "\(result.stderr)")
            #expect(try cli.read("t.vault") == before, "the vault was written")
        }

        /// A gpg that is a wrapper script, with a child of its own (here a `sleep` it waits for):
        /// on SIGTERM vaultfile ends the wrapper's whole process group, so the child does not
        /// outlive the import (recheck58 N6; before, the `sleep` ran on for its 60 s). vaultfile
        /// runs in a session of its own (`setsid`), as under a service manager: no terminal.
        @Test func test_importPass_sigtermEndsTheChildrenOfAWrapperGpgToo() throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/gpg", Array("""
                #!/bin/sh
                sleep 60 &
                echo $! > "$PIDS.tmp"
                echo $$ >> "$PIDS.tmp"
                mv "$PIDS.tmp" "$PIDS"
                cat
                wait

                """.utf8), mode: 0o700)
            try cli.write("store/.gpg-id", Array("K\n".utf8))
            try cli.write("store/a.gpg", Array("secret\n".utf8))
            let before = try cli.read("t.vault"), pids = cli.path("pids")
            let importing = try cli.start([CLI.binary, "import", "--format", "pass", cli.path("store")] + cli.unlock(),
                                          extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "PIDS": pids], executable: "/usr/bin/setsid")
            var started: [pid_t] = []
            defer {
                if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() }
                for pid in started where !ChildProcess.hasEnded(pid) { kill(pid, SIGKILL) }
            }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: pids) && importing.isRunning && Date() < deadline { usleep(10_000) }
            if !importing.isRunning { let early = importing.finish(); Issue.record("the import ended first: \(early.status) \(early.stderr)"); return }
            started = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { pid_t($0) }
            try #require(started.count == 2, "the wrapper did not say its processes")
            usleep(200_000)
            kill(importing.pid, SIGTERM)
            let sent = Date()
            while importing.isRunning && Date().timeIntervalSince(sent) < 20 { usleep(10_000) }
            try #require(!importing.isRunning, "the import did not end within 20 s of SIGTERM")
            let result = importing.finish()
            #expect(!result.endedBySignal && result.status == 128 + SIGTERM, "\(result.status): \(result.stderr)")
            // The wrapper's `sleep` is reaped by init once its parent is gone: give that a moment.
            while started.contains(where: { !ChildProcess.hasEnded($0) }) && Date().timeIntervalSince(sent) < 10 { usleep(10_000) }
            #expect(started.allSatisfy(ChildProcess.hasEnded), "left running: \(started.filter { !ChildProcess.hasEnded($0) })")
            #expect(try cli.read("t.vault") == before, "the vault was written")
        }

        /// In the foreground of a terminal the tools stay in vaultfile's process group: one that
        /// asks on the terminal (age's passphrase of an encrypted identity file, a plugin's PIN)
        /// gets its answer, where a tool in a group of its own would be stopped (SIGTTIN).
        @Test(.enabled(if: CLI.hasScript, "script (util-linux) is not installed: skipped"))
        func test_importPass_inTheForegroundOfATerminalAToolCanAskOnIt() throws {
            var cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/gpg", Array("""
                #!/bin/sh
                # A tool stopped by SIGTTIN (its whole group is) would hang the test: killed after
                # 15 s instead (a failure), by a watchdog in a session of its own, given a second
                # to leave this group before the terminal is read.
                # (It kills only while the read is pending: never a process that took the id later.)
                touch "$ANSWER.pending"
                setsid -f sh -c "sleep 15; [ -e '$ANSWER.pending' ] && kill -KILL $$" < /dev/null > /dev/null 2>&1
                sleep 1
                printf 'PIN for the card: ' > /dev/tty
                read -r pin < /dev/tty
                rm "$ANSWER.pending"
                printf '%s' "$pin" > "$ANSWER"
                cat

                """.utf8), mode: 0o700)
            try cli.write("store/.gpg-id", Array("K\n".utf8))
            try cli.write("store/a.gpg", Array("secret\n".utf8))
            cli.environment["PATH"] = cli.path("bin") + ":/usr/bin:/bin"
            cli.environment["ANSWER"] = cli.path("answer")
            let session = try cli.interactive(["import", "--format", "pass", cli.path("store")] + cli.unlock(),
                                              answers: [("PIN for the card:", "4321")])
            #expect(session.status == 0, "\(session.screen)")
            #expect(try cli.read("answer") == Array("4321".utf8), "\(session.screen)")
            #expect(try cli.run(["get", "a"] + cli.unlock()).text == "secret")
        }

        /// A file of the store swapped for a link out of it after the walk (while gpg decrypts an
        /// earlier file) is refused: gpg gets the file the walk found as its stdin, never a path it
        /// opens again (att58 F3; before, the file outside the store was imported).
        @Test func test_importPass_fileSwappedForALinkOutOfTheStoreAfterTheWalkIsRefused() throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store", "outside"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/gpg", Array("""
                #!/bin/sh
                content=$(cat)
                if [ "$content" = A ]; then touch "$MARK"; sleep 2; fi
                printf '%s\\n' "$content"

                """.utf8), mode: 0o700)
            try cli.write("store/.gpg-id", Array("K\n".utf8))
            try cli.write("store/a.gpg", Array("A\n".utf8))
            try cli.write("store/b.gpg", Array("B\n".utf8))
            try cli.write("outside/o.gpg", Array("OUTSIDE\n".utf8))
            let before = try cli.read("t.vault"), mark = cli.path("reading-a")
            let importing = try cli.start(["import", "--format", "pass", cli.path("store")] + cli.unlock(),
                                          extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "MARK": mark, "VAULTFILE_IMPORT_JOBS": "1"])
            defer { if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() } }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: mark) && importing.isRunning && Date() < deadline { usleep(10_000) }
            try #require(FileManager.default.fileExists(atPath: mark), "the fake gpg did not start on a.gpg within 20 s")
            try FileManager.default.removeItem(atPath: cli.path("store/b.gpg"))
            try FileManager.default.createSymbolicLink(atPath: cli.path("store/b.gpg"), withDestinationPath: "../outside/o.gpg")
            while importing.isRunning && Date() < deadline.addingTimeInterval(20) { usleep(10_000) }
            let result = importing.finish()
            #expect(result.status == 2, "\(result.status): \(result.stderr)")
            #expect(result.stderr.contains("changed while the store was read"), "\(result.stderr)")
            #expect(try cli.read("t.vault") == before, "nothing was imported")
        }

        @Test(.enabled(if: hasGpg, "gpg is absent: the pass import signal test skipped"))
        func test_importPass_sigtermMidImportEndsEveryGpgChildAndWritesNothing() throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            let home = cli.path("gnupg"), store = cli.path("store")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let environment = ["GNUPGHOME": home]
            defer {
                for pid in gpgProcesses(naming: home) { kill(pid, SIGKILL) }
                try? sh(cli, "gpgconf --kill all", environment)
            }
            // A user who has not typed the passphrase yet: gpg-agent's pinentry answers after 10 s,
            // so each gpg decrypting for the import waits (as it would with a prompt or a smartcard
            // open). Before the fix, vaultfile died by the signal and left these gpg running.
            try cli.write("slow-pinentry", Array("""
                #!/bin/sh
                echo "OK Pleased to meet you"
                while read -r command rest; do
                    case "$command" in
                        GETPIN) sleep 10; echo "D passphrase-of-test"; echo "OK" ;;
                        BYE) echo "OK"; exit 0 ;;
                        *) echo "OK" ;;
                    esac
                done

                """.utf8), mode: 0o700)
            try cli.write("gnupg/gpg-agent.conf", Array("pinentry-program \(cli.path("slow-pinentry"))\n".utf8))
            try sh(cli, "gpg --batch --quiet --pinentry-mode loopback --gen-key", environment,
                   stdin: CryptImportCLITests.throwawayKey(passphrase: "passphrase-of-test"))
            // The agent that cached the passphrase while making the key is ended: decrypting asks the pinentry.
            try sh(cli, "mkdir -p store/web && printf 'secret\\n' | gpg --batch --quiet -e -r throwaway@example.invalid -o store/web/a.gpg"
                   + " && cp store/web/a.gpg store/web/b.gpg && gpgconf --kill gpg-agent", environment)
            let before = try cli.read("t.vault")
            let importing = try cli.start(["import", "--format", "pass", store] + cli.unlock(), extra: environment)
            defer { if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() } }
            // Waits (at most 20 s) for a gpg child of the import, then sends SIGTERM while it waits.
            let deadline = Date().addingTimeInterval(20)
            while gpgProcesses(naming: home).isEmpty && importing.isRunning && Date() < deadline { usleep(10_000) }
            try #require(importing.isRunning, "the import ended before a gpg child was seen")
            try #require(!gpgProcesses(naming: home).isEmpty, "no gpg child of the import within 20 s")
            kill(importing.pid, SIGTERM)
            let stopBy = Date().addingTimeInterval(20)
            while importing.isRunning && Date() < stopBy { usleep(10_000) }
            try #require(!importing.isRunning, "the import did not end within 20 s of SIGTERM")
            let result = importing.finish()
            #expect(!result.endedBySignal && result.status == 128 + SIGTERM, "\(result.status): \(result.stderr)")
            // vaultfile ended and reaped its children before exiting: none is left.
            #expect(gpgProcesses(naming: home).isEmpty, "gpg left running: \(gpgProcesses(naming: home))")
            #expect(try cli.read("t.vault") == before, "the vault was written")
            #expect(try cli.run(["list"] + cli.unlock()).text.split(separator: "\n") == ["kept"])
        }
    }
}
