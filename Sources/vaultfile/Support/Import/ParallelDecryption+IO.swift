import CPlatform
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Pipes and descriptors of the tools

extension ParallelDecryption {
    /// A pipe, both ends close-on-exec and above descriptor 3 (the child gets the read end as its
    /// descriptor 3 by `dup2`, which clears the flag there only when the descriptors differ).
    static func pipeAbove3() throws(CLIError) -> (read: Int32, write: Int32) {
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
    static func open(_ walked: StoreWalk.File) throws(CLIError) -> Int32 {
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

    /// Copies what is ready on a child's stderr pipe `fd` to vaultfile's stderr (drops it unless
    /// `forward`); false at its end (or when nothing more is ready on a non-blocking `fd`, or on an error).
    static func relay(_ fd: Int32, chunk: inout [UInt8], forward: Bool = true) -> Bool {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if count < 0 && errno == EINTR { return true }
        guard count > 0 else { return false }
        guard forward else { return true }
        _ = chunk.withUnsafeBytes { Clipboard.writeWithoutSIGPIPE(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: STDERR_FILENO) }
        return true
    }

    /// Appends, growing by hand so that the old buffer is wiped before it is freed.
    static func append(_ bytes: ArraySlice<UInt8>, to output: inout [UInt8]) {
        if output.capacity < output.count + bytes.count {
            var larger = [UInt8]()
            larger.reserveCapacity(max(output.count * 2, output.count + bytes.count, 4096))
            larger.append(contentsOf: output)
            wipe(&output)
            output = larger
        }
        output.append(contentsOf: bytes)
    }

    /// Writes what the non-blocking pipe `fd` takes now of `bytes`, from `sent` on, without dying
    /// of SIGPIPE: the count written so far, or nil when the feed is over (all of it written, or the
    /// child closed its end, which simply gets less: its exit status then says so).
    static func writeSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, from sent: Int) -> Int? {
        guard sent < bytes.count else { return nil }
        let count = withoutSIGPIPE { write(fd, bytes.baseAddress! + sent, bytes.count - sent) }
        let code = errno
        if count > 0 { return sent + count == bytes.count ? nil : sent + count }
        if count < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == EINTR) { return sent }
        return nil
    }
}
