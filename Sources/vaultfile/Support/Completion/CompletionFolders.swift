import ArgumentParser

// MARK: - Folders and vault paths in the completion scripts

/// Two changes to swift-argument-parser's completion scripts, made after the aliases:
///
/// - **Folders**: entry names complete folder by folder (`EntryCompletion.folderByFolder` offers
///   `prod/db/`), and a shell must not put a space after a folder, or the next TAB could not go on
///   into it. bash gets `compopt -o nospace` when a candidate ends with `/`, zsh adds such
///   candidates with an empty suffix (`compadd -S ''`); fish adds no space after a `/` by itself.
/// - **`--vault`** completes files but not the vault's lock files (`*.lock`, beside every vault
///   that was written): bash `compgen -f -X '*.lock'`, zsh `_files -F '(*.lock)'`, fish a path
///   function that leaves them out.
///
/// A script whose shape is not the one expected is left as it was (AgentCompletionCLITests and
/// CompletionFolderCLITests type into real shells and would see it).
enum CompletionFolders {
    /// `script` (of `shell`, for `command`) with both changes.
    static func apply(to script: String, shell: CompletionShell, command: String) -> String {
        var lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        switch shell {
        case .bash: bash(&lines, command: command)
        case .zsh: zsh(&lines, command: command)
        case .fish: fish(&lines, command: command)
        default: break
        }
        return lines.joined(separator: "\n")
    }

    // MARK: Private

    private static func bash(_ lines: inout [String], command: String) {
        // The end of `__vaultfile_add_completions`, which every list of candidates goes through.
        if let start = lines.firstIndex(of: "__\(command)_add_completions() {"),
           let end = lines[start...].firstIndex(of: "}"), lines[end - 1].contains("compgen") {
            lines.insert(contentsOf: ["    local added", "    for added in \"${COMPREPLY[@]}\"; do",
                                      "        [[ \"${added}\" == */ ]] && { compopt -o nospace 2>/dev/null; break; }", "    done"], at: end)
        }
        for index in lines.indices.dropLast() where lines[index].trimmed == "'--vault')"
            && lines[index + 1].trimmed == "__\(command)_add_completions -f" {
            lines[index + 1] += " -X '*.lock'"
        }
    }

    private static func zsh(_ lines: inout [String], command: String) {
        // The custom completion function: folders with no suffix, the rest as before.
        let call = "        __\(command)_complete \"${completions[@]:0:-1}\""
        if let index = lines.firstIndex(of: call) {
            lines.replaceSubrange(index...index, with: [
                "        completions=(\"${completions[@]:0:-1}\")",
                "        local -a folders=(\"${(M)completions[@]:#*/}\")",
                "        __\(command)_complete \"${completions[@]:#*/}\"",
                "        (( ${#folders} )) && compadd -S '' -- \"${folders[@]}\"",
            ])
        }
        for index in lines.indices where lines[index].trimmed.hasPrefix("'--vault[") && lines[index].hasSuffix(":path:_files'") {
            lines[index] = String(lines[index].dropLast(":path:_files'".count)) + ":path:_files -F \"(*.lock)\"'"
        }
    }

    private static func fish(_ lines: inout [String], command: String) {
        let marker = "-l 'vault' "
        guard lines.contains(where: { $0.contains(marker) && $0.hasSuffix(" -rF") }) else { return }
        for index in lines.indices where lines[index].contains(marker) && lines[index].hasSuffix(" -rF") {
            lines[index] = String(lines[index].dropLast(" -rF".count)) + " -rfa '(__\(command)_vault_paths)'"
        }
        lines.insert(contentsOf: ["function __\(command)_vault_paths",
                                  "    __fish_complete_path (commandline -ct) | string match -rv -- '\\.lock(\\t.*)?$'",
                                  "end", ""], at: 0)
    }
}

private extension String {
    var trimmed: Substring { drop { $0 == " " || $0 == "\t" } }
}
