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
/// child is sent SIGTERM and reaped, every plaintext wiped, and vaultfile exits with 128 + the
/// signal, having written nothing (the vault is sealed only after the run).
///
/// Each tool leads a process group of its own, and is signalled as a group, so that what a
/// wrapper script started (a `sleep`, a helper it waits for) ends with it (recheck58 N6) — except
/// when vaultfile runs in the foreground of a terminal: there the tools stay in its group, so that
/// one that asks on the terminal (age's passphrase of an encrypted identity file, a plugin's PIN;
/// outside the foreground group a read of the terminal stops it, SIGTTIN) still can, and the
/// terminal's Ctrl-C and hang-up reach the whole group, a wrapper's children included.
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

    /// How many tools run at once: twice the processors online (gpg spends most of its time
    /// starting and waiting for gpg-agent), between 2 and 16; `VAULTFILE_IMPORT_JOBS` overrides.
    static var parallelism: Int {
        if let text = getenv("VAULTFILE_IMPORT_JOBS").map({ String(cString: $0) }), let jobs = Int(text), (1...64).contains(jobs) { return jobs }
        return min(max(2 * sysconf(Int32(_SC_NPROCESSORS_ONLN)), 2), 16)
    }

    /// The plaintexts of `jobs`, in their order. The caller wipes them. With `descriptor3`, each
    /// tool reads those bytes (a passage store's identities, decrypted once: `PassageIdentities`)
    /// from a pipe on its descriptor 3 (`age -i /dev/fd/3`), never from a file.
    static func run(_ jobs: [Job], tool: String, limit: Int = maxOutput, totalLimit: Int = maxTotalOutput,
                    descriptor3: SecureBytes? = nil) throws(CLIError) -> [[UInt8]] {
        var outputs = [[UInt8]](repeating: [], count: jobs.count)
        var total = 0
        var running: [(job: Int, child: Subprocess.Child)] = []
        var next = 0
        func stop() {
            for (_, child) in running {
                if let fd = child.errors { close(fd) }
                child.signal(SIGTERM)
                if let fd = child.output { close(fd) }
            }
            for (_, child) in running { reap(child) }
            running.removeAll()
            for index in outputs.indices { wipe(&outputs[index]) }
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        defer { wipe(&chunk) }
        let signals = ImportSignals.block()
        defer { signals.restore() }
        let ownGroups = !Subprocess.inForegroundOfTerminal
        while next < jobs.count || !running.isEmpty {
            if let received = signals.taken() {
                stop()
                ImportSignals.exit(received)
            }
            while next < jobs.count && running.count < parallelism {
                let job = jobs[next]
                do throws(CLIError) {
                    let file = try job.opened.map { walked throws(CLIError) in try open(walked) }
                    defer { if let file { close(file) } }
                    let extra = descriptor3 == nil ? nil : try pipeAbove3()
                    var child: Subprocess.Child
                    do throws(CLIError) {
                        child = try Subprocess.start(job.arguments, captureOutput: true, feedInput: job.input != nil, captureErrors: true,
                                                     standardInput: file, descriptor3: extra?.read, ownProcessGroup: ownGroups)
                    } catch {
                        if let extra { close(extra.read); close(extra.write) }
                        throw error
                    }
                    if let extra, let bytes = descriptor3 {
                        // The tool reads its identities first, whole, so this write ends once it
                        // has (or at once if it exited: no SIGPIPE, and its status says so).
                        close(extra.read)
                        _ = bytes.withUnsafeBytes { Clipboard.writeWithoutSIGPIPE($0, to: extra.write) }
                        close(extra.write)
                    }
                    if let input = job.input, let fd = child.input {
                        writeAll(fd, input)
                        close(fd)
                        child.input = nil
                    }
                    running.append((next, child))
                } catch {
                    stop()
                    throw error
                }
                next += 1
            }
            // Each child's stdout, then its stderr (-1 once closed: poll skips it).
            var polls = running.flatMap {
                [pollfd(fd: $0.child.output ?? -1, events: Int16(POLLIN), revents: 0), pollfd(fd: $0.child.errors ?? -1, events: Int16(POLLIN), revents: 0)]
            }
            // Woken at least every 50 ms to take a signal (blocked, it cannot interrupt the poll);
            // every 2 ms while a tool whose output ended is still to exit, which no pipe announces.
            let awaitingExit = running.contains { $0.child.output == nil }
            let ready = poll(&polls, nfds_t(polls.count), awaitingExit ? 2 : 50)
            if ready < 0 {
                if errno == EINTR { continue }
                let code = errno
                stop()
                throw .io(operation: "waiting for", path: tool, errno: code)
            }
            for (index, entry) in polls.enumerated() where index % 2 == 1 && entry.revents != 0 {
                if !relay(entry.fd, chunk: &chunk) {
                    close(entry.fd)
                    running[index / 2].child.errors = nil
                }
            }
            for (index, entry) in polls.enumerated() where index % 2 == 0 && entry.revents != 0 {
                let slot = index / 2
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
                let (job, child) = running[slot]
                guard let status = Subprocess.endedStatus(child.pid) else { continue }
                // All it wrote to stderr is in the pipe now: relayed, without waiting for a
                // process it started that may hold the pipe open.
                if let errors = running[slot].child.errors {
                    _ = fcntl(errors, F_SETFL, fcntl(errors, F_GETFL) | O_NONBLOCK)
                    while relay(errors, chunk: &chunk) {}
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

    /// A pipe, both ends close-on-exec and above descriptor 3 (the child gets the read end as its
    /// descriptor 3 by `dup2`, which clears the flag there only when the descriptors differ).
    private static func pipeAbove3() throws(CLIError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .io(operation: "creating a pipe for", path: "the age identities", errno: errno) }
        for index in ends.indices {
            // Moved to a descriptor above 3 that is close-on-exec, so no other child inherits it.
            let moved = fcntl(ends[index], F_DUPFD_CLOEXEC, 4)
            let code = errno
            close(ends[index])
            ends[index] = moved
            guard moved >= 0 else {
                for fd in ends where fd >= 0 { close(fd) }
                throw .io(operation: "creating a pipe for", path: "the age identities", errno: code)
            }
        }
        return (ends[0], ends[1])
    }

    /// `walked` opened for reading: the file the walk found, or an error (the store changed
    /// while it was read: a link or folder swapped in, the file replaced).
    private static func open(_ walked: StoreWalk.File) throws(CLIError) -> Int32 {
        let fd = Glibc.open(walked.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw .io(operation: "opening", path: walked.path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              UInt64(info.st_dev) == walked.device, UInt64(info.st_ino) == walked.inode else {
            close(fd)
            throw .refused("\(walked.path) changed while the store was read (it is no longer the file found there); nothing was imported",
                           hint: "run the import again once nothing writes to the store")
        }
        // Blocking from here: the tool reads it as any file.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Copies what is ready on a child's stderr pipe `fd` to vaultfile's stderr; false at its end
    /// (or when nothing more is ready on a non-blocking `fd`, or on an error).
    private static func relay(_ fd: Int32, chunk: inout [UInt8]) -> Bool {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if count < 0 && errno == EINTR { return true }
        guard count > 0 else { return false }
        _ = chunk.withUnsafeBytes { Clipboard.writeWithoutSIGPIPE(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: STDERR_FILENO) }
        return true
    }

    /// Waits for a child sent SIGTERM; one still running after `grace` seconds gets SIGKILL. A
    /// child that leads its own group is waited for without being reaped, then what is left of its
    /// group gets SIGKILL: while the child is unreaped, its group's id is no other process's.
    private static func reap(_ child: Subprocess.Child, grace: Double = 2) {
        var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
        for _ in 0..<Int(grace * 100) {
            if !child.leadsGroup {
                if Subprocess.endedStatus(child.pid) != nil { return }  // reaped, or no such child
            } else if Subprocess.hasExited(child.pid) {
                break
            }
            nanosleep(&pause, nil)
        }
        child.signal(SIGKILL)
        _ = Subprocess.wait(child.pid)
    }

    /// Appends, growing by hand so that the old buffer is wiped before it is freed.
    private static func append(_ bytes: ArraySlice<UInt8>, to output: inout [UInt8]) {
        if output.capacity < output.count + bytes.count {
            var larger = [UInt8]()
            larger.reserveCapacity(max(output.count * 2, output.count + bytes.count, 4096))
            larger.append(contentsOf: output)
            wipe(&output)
            output = larger
        }
        output.append(contentsOf: bytes)
    }

    /// Writes all of `bytes` to `fd` (a pipe to a child) without dying of SIGPIPE; a child that
    /// closed its stdin early simply gets less (its exit status then says so).
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Clipboard.writeWithoutSIGPIPE($0, to: fd) }
    }
}
