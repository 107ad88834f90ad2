// MARK: - Who holds a lock

/// The process that holds a vault's lock, as the kernel lists it (`/proc/locks`), for the
/// messages of a writer that waits for it.
public struct LockHolder: Equatable, Sendable, CustomStringConvertible {
    /// Its process id (in this process's pid namespace).
    public var pid: Int32
    /// Its program name (`/proc/PID/comm`, at most 15 characters), when it could be read.
    public var program: String?

    /// A holder with `pid` and, when known, its `program`.
    public init(pid: Int32, program: String?) {
        self.pid = pid
        self.program = program
    }

    /// "another vaultfile process (pid 1234)", "process 1234 (git)" for another program, or
    /// "process 1234" when its name could not be read.
    public var description: String {
        guard let program else { return "process \(pid)" }
        if program.contains("vaultfile") { return "another vaultfile process (pid \(pid))" }
        return "process \(pid) (\(program))"
    }
}
