#if canImport(Glibc)
import Glibc
#endif

// MARK: - Who could read the plugin's memory

/// Why the plugin must not ask the agent for a vault's key: approving `age-unwrap` hands this
/// process the vault's file key (every entry), so a process whose memory another program reads
/// would hand it to that program.
///
/// Non-dumpability (`Hardening`) stops a later ptrace attach, but not a tracer that started the
/// plugin (`strace age …`: age's child is traced from its first instruction), nor code the dynamic
/// loader put in the process before `main` (LD_PRELOAD, LD_AUDIT, a library found first through
/// LD_LIBRARY_PATH, a gconv module through GCONV_PATH). Age passes its environment on to its
/// plugins, so these are checked here, before any vault is opened. (A library already loaded could
/// lie to this check; it stops the plain ways, and says so instead of leaking quietly.)
enum AgePluginObservers {
    /// The loader variables that put another program's code into this process (empty ones do nothing).
    static let loaderVariables = ["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH"]

    /// The refusal, or nil when no tracer and no loader variable is in sight.
    static func refusal() -> CLIError? {
        let set = loaderVariables.filter { name in getenv(name).map { $0.pointee != 0 } ?? false }
        if !set.isEmpty {
            return .pluginObserved("\(set.joined(separator: " and ")) \(set.count == 1 ? "is" : "are") set (code loaded into the plugin)")
        }
        switch tracerPid() {
        case .some(0): return nil
        case .some(let pid): return .pluginObserved("the process \(pid) traces it (TracerPid in /proc/self/status)")
        case .none: return .pluginObserved("/proc/self/status cannot be read to check that no tracer is attached")
        }
    }

    /// The `TracerPid` of /proc/self/status, nil when it cannot be read.
    static func tracerPid() -> Int32? {
        guard let file = fopen("/proc/self/status", "re") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("TracerPid:") else { continue }
            return Int32(String(text.dropFirst("TracerPid:".count).filter { $0 != " " && $0 != "\t" && $0 != "\n" }))
        }
        return nil
    }
}
