import Foundation
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Writing a program a test then runs

/// Writes a file that a test then runs (a fake `gpg`, an editor, an age plugin) so that running it
/// never fails with ETXTBSY ("Text file busy").
///
/// The kernel refuses to run a file while any process holds it open for writing. A test process
/// starts children from many threads at once, and each child holds a copy of every descriptor of
/// this process from its fork until its exec: had this process opened the program for writing,
/// a child another test started in that moment would hold it open a little longer, and the run
/// of the program fails (PostQuantumMembersCLITests under load). So this process never opens the
/// program for writing: it writes the bytes to a staging file (never run), a `cp` child copies
/// them to a new file beside the program (only `cp`, which has exited, ever had it open), and a
/// rename puts that file in place.
public enum ExecutableFile {
    /// A failure to write the program.
    public struct Failed: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// Writes `bytes` to `path` with `mode` (`chmod`), as described above.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        let staging = path + ".staging-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: staging, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw Failed(description: "cannot write \(staging)")
        }
        defer { unlink(staging) }
        try copy(staging, to: path, mode: mode)
    }

    /// Copies the file `source` to `path` with `mode`, written by a `cp` child as `write` explains.
    public static func copy(_ source: String, to path: String, mode: mode_t) throws {
        let fresh = path + ".new-\(UUID().uuidString)"
        let copied = try ChildProcess(executable: "/bin/cp", arguments: [source, fresh], environment: ["PATH": "/usr/bin:/bin"],
                                      directory: "/").finish()
        guard copied.ending == .exit(0) else {
            unlink(fresh)
            throw Failed(description: "cp \(source) \(fresh): \(String(decoding: copied.stderr, as: UTF8.self))")
        }
        guard chmod(fresh, mode) == 0, rename(fresh, path) == 0 else {
            let text = String(cString: strerror(errno))
            unlink(fresh)
            throw Failed(description: "installing \(path): \(text)")
        }
    }
}
