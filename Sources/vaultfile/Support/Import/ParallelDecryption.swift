import CPlatform
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Running the user's gpg or age on many files at once

/// Decrypts files by running the user's own tool (`gpg --decrypt --batch --quiet`, `age --decrypt
/// -i …`), several at once, each plaintext read from a pipe into memory (never a file), through
/// a size limit. The tools' stderr is relayed to vaultfile's as it comes, so gpg's messages show
/// as they do for pass (pinentry talks to the terminal itself). The first failure stops the run:
/// the failed tool's stderr is relayed whole, the other children are ended with their stderr
/// closed first (so that gpg's "signal Terminated caught" of a tool vaultfile stopped is not
/// shown), every plaintext read so far is wiped, and the error names the file.
///
/// A signal that would end vaultfile (SIGTERM, SIGINT, SIGHUP… `ImportSignals`) while tools run
/// ends them first: the signals are blocked for the run and taken between reads, then every
/// child is sent SIGTERM, all of them are given two seconds together (one deadline, not two
/// seconds each: att60 F5), what is left gets SIGKILL, every child is reaped, every plaintext
/// wiped, and vaultfile exits with 128 + the signal, having written nothing (the vault is sealed
/// only after the run).
///
/// The run sleeps in one `poll(2)` until something happens: a pipe has data, a signal arrived
/// (`ImportSignals.descriptor`), or a tool whose output ended exits (a `pidfd_open(2)`
/// descriptor). Where the kernel gives no pidfd (before Linux 5.3), it looks every 2 ms for such a
/// tool's exit, as no pipe announces it.
///
/// Each tool leads a process group of its own, and is signalled as a group, so that what a
/// wrapper script started (a `sleep`, a helper it waits for) ends with it (recheck58 N6) — except
/// while vaultfile runs in the foreground of a terminal, which is asked again for each tool: there
/// the tool stays in vaultfile's group, so that one that asks on the terminal (age's passphrase
/// of an encrypted identity file, a plugin's PIN; outside the foreground group a read of the
/// terminal stops it, SIGTTIN) still can, and the terminal's Ctrl-C and hang-up reach the whole
/// group, a wrapper's children included. A tool started in its own group while vaultfile was in
/// the background, and stopped by the terminal (SIGTTIN, SIGTTOU), is watched for (att60 F4):
/// once vaultfile is in the foreground (`fg`) that tool is ended and started again in vaultfile's
/// group, where it can read the terminal, one such tool at a time (the next once no tool runs in
/// vaultfile's group); until then stderr says once that it waits for the terminal.
/// (gpg's own passphrase prompt is gpg-agent's pinentry, which the agent runs, apart from us.)
enum ParallelDecryption {
    /// One decryption: the arguments (the first looked up in PATH), the file shown in messages,
    /// and bytes written to the tool's stdin (sops' armored data key), if any.
    struct Job {
        let arguments: [String]
        let file: String
        var input: [UInt8]? = nil
        /// The file given to the tool as its stdin, opened just before it starts and checked to
        /// be the one a walk found (`StoreWalk.File`), rather than named in its arguments.
        var opened: StoreWalk.File? = nil
    }

    /// The most bytes one decrypted file may hold (a store's file is a password and notes).
    static let maxOutput = 16 << 20
    /// The most bytes all the decrypted files of one import may hold together: a store's files
    /// are small, and a store of small encrypted files that each decrypt (gpg decompresses) to
    /// the per-file limit would otherwise hold gigabytes in memory.
    static let maxTotalOutput = 256 << 20
    /// How long tools sent SIGTERM are given, all together, before SIGKILL.
    static let grace = 2.0

    /// How many tools run at once: twice the processors online (gpg spends most of its time
    /// starting and waiting for gpg-agent), between 2 and 16; `VAULTFILE_IMPORT_JOBS` overrides.
    static var parallelism: Int {
        if let text = getenv("VAULTFILE_IMPORT_JOBS").map({ String(cString: $0) }), let jobs = Int(text), (1...64).contains(jobs) { return jobs }
        return min(max(2 * sysconf(Int32(_SC_NPROCESSORS_ONLN)), 2), 16)
    }

    /// One running tool: its job, the child, and its pidfd (-1 when the kernel gave none); the
    /// write ends of its descriptor 3 (the identities) and of its stdin (the job's `input`), -1
    /// once written whole or when there is none, and how many bytes each has taken so far.
    private struct Tool {
        let job: Int
        var child: Subprocess.Child
        let exit: Int32
        var identities: Int32 = -1
        var identitiesSent = 0
        var inputSent = 0
    }

    /// The descriptors polled for each running tool: stdout, stderr, pidfd, descriptor 3's and
    /// stdin's write ends.
    private static let pollsPerTool = 5

    /// The plaintexts of `jobs`, in their order. The caller wipes them. With `descriptor3`, each
    /// tool reads those bytes (age identities read or decrypted once: `AgeIdentitiesFile`) from
    /// a pipe on its descriptor 3 (`age -i /dev/fd/3`), never from a file. With `relayErrors`
    /// false, the tools' stderr is read and dropped (a sops file's stanzas but the last: att62 F6).
    static func run(_ jobs: [Job], tool: String, limit: Int = maxOutput, totalLimit: Int = maxTotalOutput,
                    descriptor3: SecureBytes? = nil, relayErrors: Bool = true) throws(CLIError) -> [[UInt8]] {
        var outputs = [[UInt8]](repeating: [], count: jobs.count)
        var total = 0
        var running: [Tool] = []
        var next = 0
        let terminal = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        defer { if terminal >= 0 { close(terminal) } }
        // Asked for each tool: `fg` and `bg` move vaultfile while it runs (att60 F4).
        func inForeground() -> Bool { terminal >= 0 && tcgetpgrp(terminal) == getpgrp() }
        var waitingSaid = false
        func stop() {
            end(running)
            running.removeAll()
            for index in outputs.indices { wipe(&outputs[index]) }
        }
        func launch(_ index: Int) throws(CLIError) -> Tool {
            let job = jobs[index]
            let file = try job.opened.map { walked throws(CLIError) in try open(walked) }
            defer { if let file { close(file) } }
            let extra = descriptor3 == nil ? nil : try pipeAbove3()
            var child: Subprocess.Child
            do throws(CLIError) {
                child = try Subprocess.start(job.arguments, captureOutput: true, feedInput: job.input != nil, captureErrors: true,
                                             standardInput: file, descriptor3: extra?.read, ownProcessGroup: !inForeground())
            } catch {
                if let extra { close(extra.read); close(extra.write) }
                throw error
            }
            // Opened while the child is unreaped: its id is no other process's yet.
            let exit = vaultfile_pidfd_open(child.pid)
            // The identities and the input are written from the poll loop, as the tool takes them,
            // never in a blocking write: a tool that does not read them (a wrapper, a stopped tool)
            // must not hold off a signal, which the loop takes (att62 F5).
            var identities: Int32 = -1
            if let extra {
                close(extra.read)
                identities = extra.write
                _ = fcntl(identities, F_SETFL, fcntl(identities, F_GETFL) | O_NONBLOCK)
            }
            if job.input != nil, let fd = child.input {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
            return Tool(job: index, child: child, exit: exit, identities: identities)
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        defer { wipe(&chunk) }
        let signals = ImportSignals.block()
        defer { signals.restore() }
        // Whether a tool may be stopped by the terminal: looked for after a SIGCHLD or SIGCONT.
        var lookForStopped = false
        var stoppedSeen = false
        while next < jobs.count || !running.isEmpty {
            let arrived = signals.taken()
            if let received = arrived.fatal {
                stop()
                ImportSignals.exit(received)
            }
            if arrived.children || stoppedSeen { lookForStopped = true }
            while next < jobs.count && running.count < parallelism {
                do throws(CLIError) {
                    running.append(try launch(next))
                } catch {
                    stop()
                    throw error
                }
                next += 1
            }
            if lookForStopped && terminal >= 0 {
                lookForStopped = false
                stoppedSeen = false
                for slot in running.indices where running[slot].child.leadsGroup && stoppedByTerminal(running[slot].child.pid) {
                    guard inForeground() else {
                        stoppedSeen = true
                        if !waitingSaid {
                            Messages.info("vaultfile: \(tool) is waiting for the terminal: bring the import to the foreground (fg)")
                            waitingSaid = true
                        }
                        continue
                    }
                    // Now in the foreground: started again in vaultfile's group, where it can read the
                    // terminal; one at a time, once no tool runs there (att62 F8: two restarted at once
                    // both read the terminal, and the second took the shell's next line).
                    guard !running.contains(where: { !$0.child.leadsGroup }) else {
                        stoppedSeen = true
                        continue
                    }
                    let job = running[slot].job
                    end([running[slot]], grace: 0)
                    total -= outputs[job].count
                    wipe(&outputs[job])
                    outputs[job] = []
                    do throws(CLIError) {
                        running[slot] = try launch(job)
                    } catch {
                        running.remove(at: slot)
                        stop()
                        throw error
                    }
                }
            }
            // Each child's stdout, its stderr (-1 once closed: poll skips it), once its output
            // ended its pidfd, and the write ends of its identities and input while bytes are left
            // to write; then the signals.
            var polls = running.flatMap {
                [pollfd(fd: $0.child.output ?? -1, events: Int16(POLLIN), revents: 0), pollfd(fd: $0.child.errors ?? -1, events: Int16(POLLIN), revents: 0),
                 pollfd(fd: $0.child.output == nil ? $0.exit : -1, events: Int16(POLLIN), revents: 0),
                 pollfd(fd: $0.identities, events: Int16(POLLOUT), revents: 0), pollfd(fd: $0.child.input ?? -1, events: Int16(POLLOUT), revents: 0)]
            }
            polls.append(pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0))
            // Without a pidfd, a tool whose output ended is looked at every 2 ms, as no pipe says
            // when it exits; without a signalfd, signals every 50 ms; while a tool waits for the
            // terminal, every 250 ms, for the `fg` that moves vaultfile to the foreground.
            let timeout: Int32 = running.contains { $0.child.output == nil && $0.exit < 0 } ? 2
                : signals.descriptor < 0 ? 50 : stoppedSeen ? 250 : -1
            let ready = poll(&polls, nfds_t(polls.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                let code = errno
                stop()
                throw .io(operation: "waiting for", path: tool, errno: code)
            }
            let per = pollsPerTool
            for (index, entry) in polls.enumerated() where index / per < running.count && entry.revents != 0 {
                let slot = index / per
                switch index % per {
                case 1:
                    if !relay(entry.fd, chunk: &chunk, forward: relayErrors) {
                        close(entry.fd)
                        running[slot].child.errors = nil
                    }
                case 3:
                    // The identities, as the tool takes them; closed once written whole, or once
                    // the tool closed its end (its exit status then says so).
                    let sent = descriptor3.map { bytes in
                        bytes.withUnsafeBytes { writeSome(entry.fd, $0, from: running[slot].identitiesSent) }
                    } ?? nil
                    if let sent { running[slot].identitiesSent = sent } else {
                        close(entry.fd)
                        running[slot].identities = -1
                    }
                case 4:
                    let sent = jobs[running[slot].job].input.map { bytes in
                        bytes.withUnsafeBytes { writeSome(entry.fd, $0, from: running[slot].inputSent) }
                    } ?? nil
                    if let sent { running[slot].inputSent = sent } else {
                        close(entry.fd)
                        running[slot].child.input = nil
                    }
                default: break
                }
            }
            for (index, entry) in polls.enumerated() where index % per == 0 && index / per < running.count && entry.revents != 0 {
                let slot = index / per
                let job = running[slot].job
                let count = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count > 0 {
                    guard outputs[job].count + count <= limit else {
                        stop()
                        throw .sourceDecryptionFailed(tool: tool, file: jobs[job].file, status: nil, limit: limit)
                    }
                    total += count
                    guard total <= totalLimit else {
                        stop()
                        throw .sourceDecryptionTotalOverLimit(tool: tool, files: jobs.count, limit: totalLimit)
                    }
                    append(chunk[0..<count], to: &outputs[job])
                    continue
                }
                close(entry.fd)
                running[slot].child.output = nil
            }
            // A tool whose output ended is reaped once it exits, without waiting for it here: one
            // that closed its stdout and lingers (a wrapper, gpg waiting on its agent, a plugin)
            // must not hold off a signal, which is taken only at the top of the loop (att58 F2).
            var finished: [Int] = []
            for slot in running.indices where running[slot].child.output == nil {
                let (job, child, exit) = (running[slot].job, running[slot].child, running[slot].exit)
                guard let status = Subprocess.endedStatus(child.pid) else { continue }
                if exit >= 0 { close(exit) }
                // What it did not read of its identities or input is left unwritten.
                if running[slot].identities >= 0 { close(running[slot].identities); running[slot].identities = -1 }
                if let input = child.input { close(input); running[slot].child.input = nil }
                // All it wrote to stderr is in the pipe now: relayed, without waiting for a
                // process it started that may hold the pipe open.
                if let errors = running[slot].child.errors {
                    _ = fcntl(errors, F_SETFL, fcntl(errors, F_GETFL) | O_NONBLOCK)
                    while relay(errors, chunk: &chunk, forward: relayErrors) {}
                    close(errors)
                    running[slot].child.errors = nil
                }
                finished.append(slot)
                if status != 0 {
                    for done in finished.sorted(by: >) { running.remove(at: done) }
                    stop()
                    throw .sourceDecryptionFailed(tool: tool, file: jobs[job].file, status: status, limit: limit)
                }
            }
            for slot in finished.sorted(by: >) { running.remove(at: slot) }
        }
        return outputs
    }

    /// Whether `pid` (a child not yet reaped) is stopped by the terminal: by SIGTTIN or SIGTTOU, as
    /// a process outside the terminal's foreground group is when it reads it or sets its modes.
    /// Calls `waitid(2)` with WSTOPPED, WNOHANG and WNOWAIT: the stop stays to be seen again.
    private static func stoppedByTerminal(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        var result = waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOHANG | WNOWAIT)
        while result < 0 && errno == EINTR { result = waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOHANG | WNOWAIT) }
        let stoppedCode: Int32 = 5  // CLD_STOPPED
        guard result == 0, info._sifields._sigchld.si_pid == pid, info.si_code == stoppedCode else { return false }
        let signal = info._sifields._sigchld.si_status
        return signal == SIGTTIN || signal == SIGTTOU
    }

    /// Ends `tools` together: each one's stderr closed (so a tool's "signal caught" is not shown),
    /// SIGTERM and SIGCONT sent to it (to its group when it leads one; SIGCONT so that a stopped
    /// tool acts on it), and its stdout closed; then one deadline, `grace` seconds from now, for
    /// all of them (att60 F5: not `grace` seconds each, one after another). A tool still running
    /// then gets SIGKILL. A tool that leads its group is waited for without being reaped, then what
    /// is left of its group gets SIGKILL: while the tool is unreaped, its group's id is no other
    /// process's. Every tool is reaped, and its pidfd closed, before this returns.
    private static func end(_ tools: [Tool], grace: Double = grace) {
        for tool in tools {
            if let fd = tool.child.errors { close(fd) }
            if tool.identities >= 0 { close(tool.identities) }
            if let fd = tool.child.input { close(fd) }
            tool.child.signal(SIGTERM)
            tool.child.signal(SIGCONT)
            if let fd = tool.child.output { close(fd) }
        }
        var reaped = [Bool](repeating: false, count: tools.count)
        var exited = [Bool](repeating: false, count: tools.count)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + grace
        while true {
            for (index, tool) in tools.enumerated() where !exited[index] {
                if !tool.child.leadsGroup {
                    // Reaped here: nothing of it is signalled again.
                    if Subprocess.endedStatus(tool.child.pid) != nil { exited[index] = true; reaped[index] = true }
                } else if Subprocess.hasExited(tool.child.pid) {
                    exited[index] = true
                }
            }
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = deadline - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
            let waiting = tools.indices.filter { !exited[$0] }
            guard !waiting.isEmpty, left > 0 else { break }
            if waiting.allSatisfy({ tools[$0].exit >= 0 }) {
                // Sleeps until one of them exits, or the deadline.
                var polls = waiting.map { pollfd(fd: tools[$0].exit, events: Int16(POLLIN), revents: 0) }
                _ = poll(&polls, nfds_t(polls.count), Int32(min(left * 1000 + 1, 60_000)))
            } else {
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                nanosleep(&pause, nil)
            }
        }
        for (index, tool) in tools.enumerated() {
            if !reaped[index] {
                tool.child.signal(SIGKILL)
                _ = Subprocess.wait(tool.child.pid)
            }
            if tool.exit >= 0 { close(tool.exit) }
        }
    }
}
