import Foundation
import TestSupport
import Testing
import VaultAgent
import VaultFormat
import VaultModel
@testable import vaultfile

/// The commands hints give to paste (att62 F1): each word is `shellWord`, walked by Unicode
/// scalars, so a name an attacker chose (a mailed export's file name, a shared pass store's file,
/// an imported title) pastes as that name and nothing else: a `'` followed by a combining mark, a
/// ZWJ or an emoji modifier (one Character, not `'`), `$(…)`, backquotes, a newline, ESC, bidi
/// marks. Each command is run by bash, as pasted, in an empty folder, with the programs it names
/// replaced by functions that record their arguments; nothing else may run, and no file but the
/// command's own redirection target may appear.
@Suite struct PasteableHintsCLITests {
    /// Names that broke out of the quoting, or would break out of a careless one.
    static let hostile = [
        "Bitwarden export'\u{301};touch PWNED;: '\u{301}.json", "a'\u{200D};touch PWNED;: '\u{200D}b", "a'\u{FE0F};touch PWNED;'",
        "a'\u{1F3FB};touch PWNED;'", "$(touch PWNED)", "`touch PWNED`", "a\ntouch PWNED\nb", "e\u{1B}[2J';touch PWNED;'",
        "\u{202E}';touch PWNED;'", "x\\';touch PWNED;'", "caf\u{E9} ok", "it's",
    ]

    /// Runs `command` as pasted into bash (locale `locale`) in a new empty folder of `cli`, with
    /// vaultfile, gpg, age, iconv, chmod and git replaced by functions that record their words: those
    /// words (each program's name first), and the names in the folder afterwards.
    private func paste(_ command: String, _ cli: CLI, locale: String = "C") throws -> (words: [[UInt8]], created: Set<String>, stderr: String) {
        let folder = "paste-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
        try cli.write(folder + "/uri.txt", [])
        let stubs = "record() { printf '%s\\0' \"$@\" >&3; }; "
            + ["vaultfile", "gpg", "age", "iconv", "chmod", "git"].map { "\($0)() { record \($0) \"$@\"; }; " }.joined()
        let script = "cd \(folder) || exit 9\nexec 3>../\(folder).words\n" + stubs + "\n" + command + "\n"
        let result = try cli.run(["-c", script], extra: ["LANG": locale, "LC_ALL": locale], executable: "/bin/bash")
        let recorded = try cli.read(folder + ".words")
        let words = recorded.split(separator: 0, omittingEmptySubsequences: false).dropLast().map(Array.init)
        let created = Set(try FileManager.default.contentsOfDirectory(atPath: cli.path(folder))).subtracting(["uri.txt"])
        return (words, created, result.stderr)
    }

    /// The command after `marker` in `hint`.
    private func command(in hint: String, after marker: String) throws -> String {
        let range = try #require(hint.range(of: marker), "no '\(marker)' in \(hint.debugDescription)")
        return String(hint[range.upperBound...])
    }

    /// Checks that `command` pasted runs `expected` (the words each program got) and creates
    /// nothing but `creates`, under a UTF-8 locale and under C.
    private func expectPastes(_ command: String, _ expected: [String], creates: Set<String> = [], _ cli: CLI) throws {
        for locale in ["C", "C.UTF-8"] {
            let pasted = try paste(command, cli, locale: locale)
            #expect(pasted.words == expected.map { Array($0.utf8) },
                    "\(locale): \(command.debugDescription) ran \(pasted.words.map { String(decoding: $0, as: UTF8.self) }) \(pasted.stderr)")
            #expect(pasted.created == creates, "\(locale): \(command.debugDescription) created \(pasted.created)")
        }
    }

    // MARK: - shellWord

    /// `shellWord` of each hostile name is read back by bash as that name's bytes, whatever the
    /// locale: by scalars (a quote with a combining mark is still a quote) and, in `$'…'`, each
    /// escaped character as its UTF-8 bytes (`\u202E` is read back only under a UTF-8 locale).
    @Test func test_shellWord_hostileNamesAreReadBackAsThemselvesInAnyLocale() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for name in Self.hostile {
            let word = shellWord(name)
            #expect(!word.contains("\u{1B}") && !word.contains("\u{202E}") && !word.contains("\n"), "\(word.debugDescription)")
            try expectPastes("vaultfile " + word, ["vaultfile", name], cli)
        }
        #expect(shellWord("a'\u{301}b") == "'a'\\''\u{301}b'")
        #expect(shellWord("e\u{202E}") == "$'e\\xE2\\x80\\xAE'")
        // In `$'…'`, a quote is written `\x27`: a shell without `$'…'` (dash) sees no unquoted text in
        // the word, and nothing after it runs (att63 F4); a leading '=' is quoted for zsh (att63 F5).
        #expect(shellWord("e\u{202E}'$(touch PWNED)") == "$'e\\xE2\\x80\\xAE\\x27$(touch PWNED)'")
        #expect(shellWord("=ls") == "'=ls'" && shellWord("a=b") == "a=b")
        let dash = try CLI().run(["-c", "printf %s " + shellWord("e\u{202E}'$(touch \(cli.path("PWNED")))")], extra: ["LANG": "C"], executable: "/bin/dash")
        // The word is whole to dash too (the `\'` form left a quote open: a syntax error, or, typed
        // in and closed by the user, the command ran).
        #expect(dash.status == 0 && !FileManager.default.fileExists(atPath: cli.path("PWNED")), "dash: \(dash.status) \(dash.stderr)")
    }

    // MARK: - Every hint that shows a command

    /// Each hint with a command, built for each hostile name, pastes as that command with the name
    /// as one word; no command is wrapped in quotes of its own any more (att62 F8: those nested).
    @Test func test_hints_everyCommandPastesWithTheNameAsOneWord() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for name in Self.hostile {
            let folder = name.hasSuffix("/") ? name : name + "/"
            let cases: [(hint: String?, marker: String, words: [String], creates: Set<String>)] = [
                (ErrorReport.hint(for: CLIError.sourceDecryptionFailed(tool: "gpg", file: name, status: 2, limit: 0)), "available): ",
                 ["gpg", "--decrypt", name], []),
                (ErrorReport.hint(for: CLIError.sourceDecryptionFailed(tool: "age", file: name, status: 1, limit: 0)), "default file): ",
                 ["age", "--decrypt", "-i", "IDENTITIES", name], []),
                (ErrorReport.hint(for: CLIError.identitiesFilePassphraseWrong(file: name, tries: 1)), "terminal): ", ["age", "--decrypt", name], []),
                (ErrorReport.hint(for: CLIError.binaryOnTerminal(name: name, field: name)), "pipe it: ", ["vaultfile", "get", name, "--field", name], ["FILE"]),
                (ErrorReport.hint(for: CLIError.fieldLabelShared(entry: name, label: "k", fields: ["k_2", "k_3"])), "as in: ",
                 ["vaultfile", "get", name, "--field", "k_2"], []),
                (ErrorReport.hint(for: CLIError.folderNotEntry(name: name, count: 2)), "under it: ", ["vaultfile", "ls", folder], []),
                (ErrorReport.hint(for: CLIError.agentHoldsOtherKeys(path: name)), "unlock again: ", ["vaultfile", "lock", "--vault", name], []),
                (ErrorReport.hint(for: CLIError.agentCannotSign(path: name, reason: .notHeld)), "1.0 password): ",
                 ["vaultfile", "unlock", "--vault", name], []),
                (ErrorReport.hint(for: CLIError.agentCannotSign(path: name, reason: .noDelegation)), "by delegation: ",
                 ["vaultfile", "lock", "--vault", name, "vaultfile", "unlock", "--vault", name], []),
                (ErrorReport.hint(for: VaultError.revisionNotFound(entry: name, revision: 3, available: 1)), "kept: ", ["vaultfile", "history", name], []),
                (ErrorReport.hint(for: VaultError.vaultMissing(path: name)), "made): ", ["vaultfile", "init", "--vault", name], []),
                (ErrorReport.hint(for: OTPError.noTOTP(name)), "with: ", ["vaultfile", "set", name, "--totp"], []),
                (GitCredentialHelper.lockedHint(path: name, vaultOption: name), "prompt): ", ["vaultfile", "unlock", "--vault", name], []),
            ]
            for (hint, marker, words, creates) in cases {
                let text = try #require(hint, "no hint for \(words)")
                try expectPastes(try command(in: text, after: marker), words, creates: creates, cli)
            }
        }
    }

    /// The hints of copies of a vault (a stick, a planted copy) and the others that name a path the
    /// user gave, or an entry: each command comes last and pastes with each path as one word (before,
    /// `'vaultfile merge --both PATH PATH'` and `'vaultfile trust --vault PATH'` put the paths in
    /// the command's own quotes).
    @Test func test_hints_copyAndPathCommandsComeLastAndPasteWithThePathAsOneWord() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let merge = "vaultfile merge --both "
        for name in Self.hostile {
            let other = name + ".other"
            let seen = SeenRecord(generation: 12, headerHash: [1], seen: 0, path: other)
            let cases: [(hint: String?, marker: String, words: [String])] = [
                (ErrorReport.hint(for: VaultError.staleCopy(path: name, generation: 11, newer: seen)), "(a new vault id)): ",
                 ["vaultfile", "merge", "--both", name, other]),
                (ErrorReport.hint(for: VaultError.divergedCopy(path: name, generation: 12, other: seen)), "to both: ",
                 ["vaultfile", "merge", "--both", name, other]),
                (ErrorReport.hint(for: VaultError.implausibleGeneration(path: name, generation: 1 << 62, seen: seen)), "seen here: ",
                 ["vaultfile", "merge", "--both", other, name]),
                (ErrorReport.trustHint(path: name, why: [.unknownSigner(fingerprint: "x25519:ab")]), "genuine copy back: ",
                 ["git", "checkout", "HEAD", "--", name]),
                (ErrorReport.trustHint(path: "THEIRS (the other copy) at " + name, why: [.untracedSlot(slot: 1, label: "l", fingerprint: "f", previous: nil)]),
                 "and asks: ", ["vaultfile", "trust", "--vault", name]),
                (ErrorReport.trustHint(path: name, why: [.unsignedAfterSigned(firstSigned: 3)]), "in git: ", ["git", "checkout", "HEAD", "--", name]),
                (GitCredentialHelper.lineBreakHint(name, field: name), "(no newline): ", ["vaultfile", "set", name, "--field", name]),
            ]
            for (hint, marker, words) in cases {
                let text = try #require(hint, "no hint for \(words)")
                #expect(!text.contains("'" + merge) && !text.contains("'vaultfile trust --vault "), "a command in quotes of its own: \(text)")
                let command = try command(in: text, after: marker)
                try expectPastes(command, words, cli)
            }
        }
        // One path for both copies: placeholders, still last.
        let same = try #require(ErrorReport.hint(for: VaultError.divergedCopy(path: "/v/a", generation: 1, other: SeenRecord(generation: 1, headerHash: [], seen: 0, path: "/v/a"))))
        #expect(same.hasSuffix(": vaultfile merge --both OURS THEIRS"), "\(same)")
    }

    // MARK: - Through the binary

    /// A pass store shared in git, a file encrypted to a key the victim lacks and named to break
    /// out: gpg's hint pastes as `gpg --decrypt` of that file. A file whose name is not UTF-8 is
    /// skipped, never named in a command.
    @Test func test_importPass_gpgHintOfAHostileFileNamePastesAsThatFile() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try cli.write("bin/gpg", Array("#!/bin/sh\nexit 2\n".utf8), mode: 0o700)
        for (index, name) in ["a'\u{301};touch PWNED;: '\u{301}x", "$(touch PWNED)", "a\ntouch PWNED\nb", "`touch PWNED`"].enumerated() {
            let store = "store\(index)"
            try FileManager.default.createDirectory(atPath: cli.path(store), withIntermediateDirectories: true)
            try cli.write(store + "/.gpg-id", Array("K\n".utf8))
            try cli.write(store + "/" + name + ".gpg", Array("x\n".utf8))
            // A name that is not UTF-8 beside it.
            let invalid = Array(cli.path(store + "/b").utf8) + [0xFF] + Array("';touch PWNED;'.gpg".utf8) + [0]
            let fd = invalid.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) } }
            try #require(fd >= 0)
            close(fd)
            let result = try cli.run(["import", "--format", "pass", cli.path(store)] + cli.unlock(), extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"])
            #expect(result.status == 3, "\(result.stderr)")
            let hint = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(result.stderr)")
            try expectPastes(try command(in: hint, after: "available): "), ["gpg", "--decrypt", cli.path(store + "/" + name + ".gpg")], cli)
        }
    }

    /// `keygen --keyfile` to a path chosen to break out, and `age-identity` of an entry so named:
    /// the `slot add keyfile` and `--lend` commands paste as that path and that entry.
    @Test func test_keygenAndAgeIdentity_commandsOfAHostileNamePasteAsThatName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let file = "key'\u{301};touch PWNED;: '\u{301}.bin"
        let made = try cli.run(["keygen", "--keyfile", file])
        #expect(made.status == 0, "\(made.stderr)")
        try expectPastes(try command(in: made.stderr, after: "add it with: ").trimmingCharacters(in: .newlines),
                         ["vaultfile", "slot", "add", "keyfile", file], cli)
        // A key file whose name starts with '-': written `./-k.bin`, not taken for an option (recheck63b N4).
        let dashed = try cli.run(["keygen", "--keyfile=-k.bin"])
        #expect(dashed.status == 0, "\(dashed.stderr)")
        try expectPastes(try command(in: dashed.stderr, after: "add it with: ").trimmingCharacters(in: .newlines),
                         ["vaultfile", "slot", "add", "keyfile", "./-k.bin"], cli)
        let entry = "id'\u{301};touch PWNED;: '\u{301}"
        #expect(try cli.run(["set", entry] + cli.unlock(), stdin: bytes("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX\n")).status == 0)
        let unlent = try cli.run(["age-identity", entry] + cli.unlock())
        #expect(unlent.status != 0, "\(unlent.stderr)")
        let hint = try #require(unlent.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(unlent.stderr)")
        try expectPastes(try command(in: hint, after: "its identity: "), ["vaultfile", "age-identity", entry, "--lend"], cli)
    }

    /// A mailed export imported with the wrong --format: the hint's `vaultfile import` pastes as
    /// that file; a Windows-1252 CSV's iconv hint pastes as that file and writes FILE.utf8 only.
    @Test func test_import_formatAndIconvHintsOfAHostileFileNamePasteAsThatFile() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let json = "Bitwarden export'\u{301};touch PWNED;: '\u{301}.json"
        try cli.write(json, bytes(#"{"encrypted": false, "folders": [], "items": [{"type": 1, "name": "n", "login": {"password": "p"}}]}"#))
        let wrong = try cli.run(["import", "--format", "csv", json] + cli.unlock())
        let formatHint = try #require(wrong.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(wrong.stderr)")
        try expectPastes(try command(in: formatHint, after: "import it with: "), ["vaultfile", "import", "--format", "bitwarden-json", json], cli)

        let csv = "cp1252'\u{301};touch PWNED;: '\u{301}.csv"
        try cli.write(csv, bytes("name,url,username,password\nCaf") + [0xE9] + bytes(",https://c.example,u,p\n"))
        let latin = try cli.run(["import", "--format", "chrome-csv", csv] + cli.unlock())
        #expect(latin.status == 2, "\(latin.stderr)")
        let iconvHint = try #require(latin.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(latin.stderr)")
        #expect(!iconvHint.contains("'iconv"), "the command is not in quotes of its own: \(iconvHint)")
        try expectPastes(try command(in: iconvHint, after: "delete both: "), ["iconv", "-f", "WINDOWS-1252", "-t", "UTF-8", csv], creates: [csv + ".utf8"], cli)
    }

    /// An imported title chosen to break out, with two custom fields of one label: `get --field`'s
    /// hint pastes as `vaultfile get` of that entry.
    @Test func test_get_sharedLabelHintOfAHostileEntryNamePastesAsThatEntry() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes("""
            {"encrypted": false, "folders": [], "items": [{"type": 1, "name": "x'\u{301};touch PWNED;: '\u{301}y", "login": {"password": "p"}, \
            "fields": [{"name": "API Key", "value": "one", "type": 0}, {"name": "API Key", "value": "two", "type": 0}]}]}
            """))
        #expect(try cli.run(["import", cli.path("bw.json")] + cli.unlock()).status == 0)
        let name = try #require(try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").first.map(String.init))
        #expect(name.unicodeScalars.contains("'") && name.contains("touch"), "\(name)")
        let shared = try cli.run(["get", name, "--field", "API Key"] + cli.unlock())
        let hint = try #require(shared.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(shared.stderr)")
        let pasted = try paste(try command(in: hint, after: "as in: "), cli)
        let words = pasted.words.map { String(decoding: $0, as: UTF8.self) }
        #expect(words.count == 5 && Array(words.prefix(4)) == ["vaultfile", "get", name, "--field"] && hint.contains("--field \(words.last ?? "?"),"),
                "\(words) \(hint)")
        #expect(pasted.created.isEmpty, "\(pasted.created)")
    }
}
