// MARK: - Environment variables that change what a program runs

/// Environment variables that make the dynamic linker, a shell or an interpreter load or run
/// code of the variable's choosing: a secret stored under such a name and exported by
/// `vaultfile exec` would take over the child program.
///
/// `import` warns about every entry whose variable (see `EnvironmentNames.variable(for:)`) is one
/// of these; this is the one list of them.
public enum DangerousEnvironmentNames {
    /// Every variable that starts with one of these: `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, …
    public static let prefixes: [String] = ["LD_"]

    /// These variables exactly.
    public static let names: Set<String> = [
        // Where programs are found, and what shells run before anything else.
        "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PROMPT_COMMAND",
        // Code that interpreters load at start-up.
        "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYOPT", "RUBYLIB",
        "NODE_OPTIONS", "JAVA_TOOL_OPTIONS",
        // Programs git runs.
        "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
        // glibc loads iconv modules from here (the pkexec exploit, CVE-2021-4034).
        "GCONV_PATH",
    ]

    /// Whether `variable` (exactly as it would be exported) is one of these.
    public static func contains(_ variable: String) -> Bool {
        names.contains(variable) || prefixes.contains { variable.utf8.starts(with: $0.utf8) }
    }
}
