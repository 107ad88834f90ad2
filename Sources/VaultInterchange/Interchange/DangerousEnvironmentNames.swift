import VaultModel

// MARK: - Environment variables that change what a program runs

/// Environment variables that make the dynamic linker, a shell or an interpreter load or run
/// code of the variable's choosing: a secret stored under such a name and exported by
/// `vaultfile exec` would take over the child program.
///
/// `import` warns about every entry whose variable (see `EnvironmentNames.variable(for:)`) is one
/// of these, and `exec` refuses to export them without `--allow-env`; this is the one list of
/// them (the man page, under exec, repeats it). Beyond code loading it holds the variables that
/// move where programs read their configuration (HOME, XDG_CONFIG_HOME, ZDOTDIR), start an editor
/// or pager, or unlock vaults (VAULTFILE_*).
public enum DangerousEnvironmentNames {
    /// Every variable that starts with one of these: `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, `LUA_INIT_5_4`, …
    public static let prefixes: [String] = ["LD_", "GIT_CONFIG_", "VAULTFILE_", "LUA_INIT_", "LUA_PATH_", "LUA_CPATH_"]

    /// These variables exactly.
    public static let names: Set<String> = [
        // Where programs are found, and what shells run before anything else.
        "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PROMPT_COMMAND",
        // Where programs read their configuration.
        "HOME", "XDG_CONFIG_HOME", "ZDOTDIR",
        // Code that interpreters load at start-up.
        "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYOPT", "RUBYLIB",
        "PYTHONUSERBASE", "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
        // Interpreter settings that import or run code by name: a warning category is a module to import,
        // PERL5DB is the debugger's code, LUA_INIT a chunk run first; CLASSPATH, PHPRC and PHP_INI_SCAN_DIR load code.
        "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PERL5DB", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "CLASSPATH", "PHPRC", "PHP_INI_SCAN_DIR",
        // Programs git runs, and where git finds the repository whose hooks and configuration it runs.
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF",
        "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_CONFIG", "GIT_DIR", "GIT_COMMON_DIR", "GIT_TEMPLATE_DIR", "SSH_ASKPASS",
        // Programs that tools start on their own: editors, pagers, browsers, password prompts, remote shells.
        "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER", "SYSTEMD_PAGER", "SYSTEMD_EDITOR",
        "SUDO_EDITOR", "SUDO_ASKPASS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH",
        // Editors' start-up commands.
        "VIMINIT", "GVIMINIT", "EXINIT", "MYVIMRC",
        // glibc loads iconv modules from here (the pkexec exploit, CVE-2021-4034); OpenSSL loads engines and providers its configuration names.
        "GCONV_PATH", "GLIBC_TUNABLES", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
    ]

    /// Whether `variable` (exactly as it would be exported) is one of these.
    public static func contains(_ variable: String) -> Bool {
        names.contains(variable) || prefixes.contains { variable.utf8.starts(with: $0.utf8) }
    }

    /// Whether `contains(EnvironmentNames.variable(for: name))`, without building the variable as a
    /// string or hashing it: an import asks for every entry (a tenth of a dotenv import's
    /// instructions). The variable is written on the stack and compared by bytes with the names of
    /// its length and with the prefixes. `InterchangeTests.test_isDangerous_agreesWithContains` ties the two.
    public static func isDangerous(entryName name: String) -> Bool {
        var name = name
        return name.withUTF8 { isDangerous(entryName: UnsafeRawBufferPointer($0)) }
    }

    /// `isDangerous(entryName:)` of the name whose UTF-8 bytes are `bytes`.
    static func isDangerous(entryName bytes: UnsafeRawBufferPointer) -> Bool {
        // Most names' variables start with two bytes that start none of these: no variable is built.
        guard mayStartDangerous(bytes) else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 1) { buffer in
            let variable = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<EnvironmentNames.writeVariable(for: bytes, into: buffer)])
            for prefix in prefixBytes where variable.starts(with: prefix) { return true }
            guard variable.count < namesByLength.count else { return false }
            return namesByLength[variable.count].contains { $0.withUnsafeBytes { compareBytes($0, variable) == 0 } }
        }
    }

    /// Whether the variable of the entry name `name` (`EnvironmentNames.writeVariable`) starts with
    /// two bytes that start a name or a prefix; false also when it is shorter than two bytes (every
    /// name and prefix is longer). Only the first two bytes of the variable are mapped, as the
    /// writer maps them (a leading digit gets a `_` in front).
    private static func mayStartDangerous(_ name: UnsafeRawBufferPointer) -> Bool {
        var first: UInt8?
        for byte in name {
            let mapped: UInt8
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): mapped = byte - 32
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): mapped = byte
            case 0x80...0xBF: continue
            default: mapped = UInt8(ascii: "_")
            }
            guard let first else {
                if mapped >= UInt8(ascii: "0") && mapped <= UInt8(ascii: "9") { return startsAPair(UInt8(ascii: "_"), mapped) }
                first = mapped
                continue
            }
            return startsAPair(first, mapped)
        }
        return false
    }

    private static func startsAPair(_ first: UInt8, _ second: UInt8) -> Bool {
        let index = Int(first) << 8 | Int(second)
        return startPairs[index >> 6] & (1 << UInt64(index & 63)) != 0
    }

    /// The first two bytes of every name and prefix, as bits of a table of all byte pairs.
    private static let startPairs: [UInt64] = {
        var table = [UInt64](repeating: 0, count: 65536 / 64)
        for text in names.union(prefixes) {
            let bytes = Array(text.utf8)
            precondition(bytes.count > 2, "every dangerous variable and prefix is longer than two bytes")
            let index = Int(bytes[0]) << 8 | Int(bytes[1])
            table[index >> 6] |= 1 << UInt64(index & 63)
        }
        return table
    }()

    private static let prefixBytes: [[UInt8]] = prefixes.map { Array($0.utf8) }

    /// `names` as bytes, by length.
    private static let namesByLength: [[[UInt8]]] = {
        var table = [[[UInt8]]](repeating: [], count: (names.map(\.utf8.count).max() ?? 0) + 1)
        for name in names { table[name.utf8.count].append(Array(name.utf8)) }
        return table
    }()
}
