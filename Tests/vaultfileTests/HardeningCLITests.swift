import Foundation
import KDF
import TestSupport
import SecureMemory
import Testing
import VaultFile
import VaultModel

/// The worst days, through the real binary: kills mid-write, many writers, full disks, prying processes.
///
/// The slow process tests live here, in one suite; new ones (signals, many processes, limits) join it.
@Suite struct HardeningCLITests {
    /// ThreadSanitizer's runtime sets its own core-dump limit and dies on signals from `ulimit -f`
    /// before the program sees them: those two process-level checks run in the plain and ASan builds.
    static let underThreadSanitizer = ProcessInfo.processInfo.environment["VAULTFILE_SANITIZER"] == "thread"
    /// `make check-sanitizers` runs the suite under AddressSanitizer with ASAN_OPTIONS set: its
    /// runtime reserves terabytes of address space and lowers the core limit itself.
    static let underAddressSanitizer = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil

    /// The vault `cli.initVault()` made, opened in-process through the store as `get` and `list`
    /// open it (the whole vault authenticated first), or nil with the failure recorded.
    /// The writers under test are processes; reading their result needs none.
    private func storedVault(_ cli: CLI, _ comment: String) -> Vault? {
        do {
            return try VaultStore(path: cli.path("t.vault")).open(password: SecureBytes(copying: Array("pw".utf8)), limits: .defaults).vault
        } catch {
            Issue.record("\(comment): the vault does not open: \(error)")
            return nil
        }
    }

    // MARK: - Crashes

    /// SIGKILL a writer at many points while it sets a multi-megabyte value: the vault always
    /// verifies and holds either the old or the new value, never a mix.
    @Test func test_set_survivesSIGKILLAtManyPoints() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        // Data: filled and compared by memset and memcmp; a byte-by-byte loop in a debug build
        // costs more than the writer it checks.
        func value(_ tag: UInt8) -> [UInt8] { Array(Data(repeating: tag, count: (3 << 20) + 1)) }
        #expect(try cli.run(["set", "big"] + cli.unlock(), stdin: value(0)).status == 0)
        // How long one whole set takes, so the kills spread over its whole life.
        let start = Date()
        #expect(try cli.run(["set", "big"] + cli.unlock(), stdin: value(1)).status == 0)
        var duration = Date().timeIntervalSince(start)
        var current: UInt8 = 1, killedBeforeTheEnd = 0, attempt = 0
        // Keep going until 20 kills have landed while a writer ran (at most 40 attempts), spreading
        // the delays over the first 80 % of a measured run; under load a run only gets longer.
        while killedBeforeTheEnd < 20 && attempt < 40 {
            let tag = UInt8(attempt % 200 + 2)
            let writer = try cli.start(["set", "big"] + cli.unlock(), stdin: value(tag))
            usleep(useconds_t(duration * 1_000_000 * 0.8 * Double(attempt % 20) / 20))
            let wasRunning = writer.isRunning && kill(writer.pid, SIGKILL) == 0
            let result = writer.finish()
            if wasRunning && result.status != 0 { killedBeforeTheEnd += 1 }
            // A writer that ended before its kill ran shorter than the measured run (measured
            // under more load): aim the next kills earlier.
            if !wasRunning { duration *= 0.75 }
            let stored = (try? storedVault(cli, "attempt \(attempt)")?.withValue(of: "big", part: .value) { Data($0) }) ?? Data()
            #expect(stored.count == (3 << 20) + 1)
            let first = stored.first ?? 255
            #expect(first == current || first == tag, "attempt \(attempt): neither the old nor the new value")
            #expect(stored == Data(repeating: first, count: stored.count), "attempt \(attempt): a mix of two values")
            current = first
            attempt += 1
        }
        #expect(killedBeforeTheEnd >= 20, "only \(killedBeforeTheEnd) of \(attempt) kills landed while the writer ran")
        // The next write cleans up what killed writers left behind.
        #expect(try cli.run(["set", "small"] + cli.unlock(), stdin: [1]).status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path).filter { $0.contains("vaultfile-tmp") }
        #expect(leftovers.isEmpty)
    }

    // MARK: - Concurrency

    @Test func test_set_sixteenConcurrentWritersLoseNothing() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let writers = try (0..<16).map { index in
            try cli.start(["set", "writer/\(index)", "--lock-timeout", "60"] + cli.unlock(), stdin: Array("value \(index)".utf8))
        }
        for (index, writer) in writers.enumerated() {
            let result = writer.finish()
            #expect(result.status == 0, "writer \(index): \(result.stderr)")
        }
        let vault = storedVault(cli, "after 16 writers")
        #expect(vault?.names(withPrefix: "writer/").count == 16)
        for index in 0..<16 {
            #expect((try? vault?.withValue(of: "writer/\(index)") { Array($0) }) == Array("value \(index)".utf8))
        }
    }

    // MARK: - A full disk

    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's runtime handles SIGXFSZ itself"))
    func test_set_pastTheFileSizeLimitFailsCleanly() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "small"] + cli.unlock(), stdin: [1, 2, 3]).status == 0)
        let before = try cli.read("t.vault")
        // dash counts ulimit -f in 512-byte blocks: 64 KiB, far below the new vault's size.
        let result = try cli.shell("ulimit -f 128; head -c 1000000 /dev/zero | \"$VF\" set big --vault t.vault --password-file pw")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("File too large"))
        #expect(try cli.read("t.vault") == before, "the vault is byte-identical")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path).filter { $0.contains("vaultfile-tmp") }
        #expect(leftovers.isEmpty)
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
    }

    // MARK: - Memory hygiene

    /// A vaultfile waiting for its password has core dumps disabled (soft limit 0) and is not dumpable.
    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's runtime sets its own core-dump limit"))
    func test_process_hasNoCoreDumpsWhileWaitingForThePassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(mkfifo(cli.path("fifo"), 0o600) == 0)
        // fd 3 opened read-write on a FIFO: vaultfile blocks reading its password there.
        let waiting = try cli.start(["-c", "exec 3<>fifo; exec \"$VF\" list --vault t.vault --password-fd 3"], executable: "/bin/sh")
        defer { kill(waiting.pid, SIGKILL); _ = waiting.finish() }
        var limits = ""
        for _ in 0..<500 {
            usleep(20_000)
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(waiting.pid)/exe")) ?? ""
            // Look only once it is blocked in read(2) on descriptor 3 (x86-64 syscall 0): reading the password.
            let syscall = (try? String(contentsOfFile: "/proc/\(waiting.pid)/syscall", encoding: .utf8)) ?? ""
            let readingPassword = syscall.hasPrefix("0 0x3 ") || (syscall.isEmpty && getuid() != 0)
            if exe.hasSuffix("vaultfile"), readingPassword,
               let text = try? String(contentsOfFile: "/proc/\(waiting.pid)/limits", encoding: .utf8) {
                limits = text
                break
            }
        }
        // The soft limit is 0; the hard limit stays the caller's (a lowered hard limit could never be raised for a child).
        func coreLimits(_ text: String) -> [Substring]? {
            text.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { Array($0.split(separator: " ").dropFirst(4).prefix(2)) }
        }
        let callerHard = try coreLimits(String(contentsOfFile: "/proc/self/limits", encoding: .utf8))?.last
        #expect(coreLimits(limits) == ["0", callerHard ?? "?"], "\(limits)")
        if getuid() != 0 {
            // A non-dumpable process's /proc files belong to root.
            let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(waiting.pid)/status")[.ownerAccountID] as? Int
            #expect(owner == 0)
        }
    }

    /// vaultfile's own libcrypto takes no configuration: neither `OPENSSL_CONF` nor the system's
    /// openssl.cnf is opened, though `set` runs libcrypto's ChaCha20 (its seal) and would load one.
    @Test(.enabled(if: AgePluginObserverCLITests.canTrace, "strace is missing, or ptrace is not allowed here: skipped"))
    func test_libcrypto_opensNoOpenSSLConfiguration() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("openssl.cnf", Array("openssl_conf = vaultfile_test\n[vaultfile_test]\n".utf8))
        let traced = try cli.run(["-f", "-e", "trace=open,openat", "-o", cli.path("trace"), CLI.binary,
                                  "set", "db/one", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw")],
                                 stdin: Array("value".utf8), extra: ["OPENSSL_CONF": cli.path("openssl.cnf")],
                                 executable: AgePluginObserverCLITests.strace)
        #expect(traced.status == 0, "\(traced.stderr)")
        let opened = String(decoding: try cli.read("trace"), as: UTF8.self)
        #expect(opened.contains("t.vault"), "the trace holds no open of the vault: \(opened.prefix(400))")
        #expect(!opened.contains("openssl.cnf"), "a configuration was opened: \(opened.split(separator: "\n").filter { $0.contains("openssl.cnf") })")
    }

    @Test func test_passwordCommand_doesNotInheritVAULTFILE_PASSWORD() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let result = try cli.run(["list", "--vault", cli.path("t.vault"), "--password-command", "env | grep -c VAULTFILE_PASSWORD= >&2; cat pw"],
                                 extra: ["VAULTFILE_PASSWORD": "leaked?"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("0\n"), "the child saw VAULTFILE_PASSWORD: \(result.stderr)")
    }
}
