import Foundation
import TestSupport
import Testing

/// `import --format pass|passage|ansible-vault|sops` with the real producers: gpg and pass (a
/// throw-away key in a temporary GNUPGHOME), age, Debian's ansible-vault; sops files from
/// Fixtures/import/sops (scripts/make-sops-fixtures.py). A test whose tool is absent says so.
extension ExternalTools {
    @Suite struct CryptImportCLITests {
        static func has(_ tool: String) -> Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) }
        static let hasPass = has("gpg") && has("pass")
        static let hasAge = has("age") && has("age-keygen")
        static let hasAnsibleVault = has("ansible-vault")
        static let fixtures = ProjectPaths.fixtures.appendingPathComponent("import")

        /// `gpg --batch --gen-key`'s parameters of a throw-away ed25519/cv25519 key for
        /// throwaway@example.invalid, with `passphrase` (nil: none).
        static func throwawayKey(passphrase: String?) -> String {
            (passphrase == nil ? "%no-protection\n" : "")
                + "Key-Type: eddsa\nKey-Curve: ed25519\nSubkey-Type: ecdh\nSubkey-Curve: cv25519\n"
                + "Name-Real: Throwaway\nName-Email: throwaway@example.invalid\nExpire-Date: 0\n"
                + (passphrase.map { "Passphrase: \($0)\n" } ?? "") + "%commit\n"
        }

        /// Runs `script` with `sh -c` in the test's folder, with `environment`; fails the test on a non-zero exit.
        @discardableResult
        func sh(_ cli: CLI, _ script: String, _ environment: [String: String], stdin: String = "") throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": cli.directory.url.path].merging(environment) { $1 }
            process.currentDirectoryURL = cli.directory.url
            let input = Pipe(), output = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(script): \(String(decoding: err, as: UTF8.self))")
            return String(decoding: out, as: UTF8.self)
        }

        /// A pass store made by pass itself under a throw-away key; returns the environment that reads it.
        func passStore(_ cli: CLI) throws -> [String: String] {
            let home = cli.path("gnupg")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let environment = ["GNUPGHOME": home, "PASSWORD_STORE_DIR": cli.path("store")]
            try sh(cli, "gpg --batch --quiet --gen-key", environment, stdin: Self.throwawayKey(passphrase: nil))
            try sh(cli, "pass init throwaway@example.invalid >/dev/null", environment)
            try sh(cli, "pass insert -m web/example.com >/dev/null", environment,
                   stdin: "hunter2\nlogin: alice\nurl: https://example.com/login\notpauth://totp/Ex:alice?secret=JBSWY3DPEHPK3PXP&issuer=Ex\ncomments: first\nsecond\n")
            try sh(cli, "pass insert -m notes-only >/dev/null", environment, stdin: "notes: just a note\n")
            try sh(cli, "printf '' | pass insert -m empty >/dev/null", environment)
            try sh(cli, "echo readme > store/README.txt && ln -s /etc/hostname store/outside.gpg", environment)
            return environment
        }

        private func get(_ cli: CLI, _ name: String, field: String? = nil) throws -> String {
            let result = try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock())
            #expect(result.status == 0, "get \(name) \(field ?? ""): \(result.stderr)")
            return result.text
        }

        // MARK: - pass

        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass import tests skipped"))
        func test_importPass_readsAStoreMadeByPass() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let environment = try passStore(cli)
            let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "web/example.com") == "hunter2")
            #expect(try get(cli, "web/example.com", field: "username") == "alice")
            #expect(try get(cli, "web/example.com", field: "url") == "https://example.com/login")
            #expect(try get(cli, "web/example.com", field: "notes") == "first\nsecond")
            #expect(try get(cli, "web/example.com", field: "totp").hasPrefix("otpauth://totp/"))
            #expect(try get(cli, "notes-only", field: "notes") == "just a note")
            #expect(try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").contains("empty"))
            // What was skipped is said: the .gpg-id, the README, the link out of the store.
            #expect(result.stderr.contains(".gpg-id"), "\(result.stderr)")
            #expect(result.stderr.contains("not .gpg files"), "\(result.stderr)")
            #expect(result.stderr.contains("symbolic links out of the store"), "\(result.stderr)")
        }

        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass import tests skipped"))
        func test_importPass_namesTheFileGpgCannotDecrypt() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let environment = try passStore(cli)
            try sh(cli, "mkdir -p store/broken && printf 'not gpg data' > store/broken/bad.gpg", environment)
            let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: environment)
            #expect(result.status == 3, "\(result.stderr)")
            #expect(result.stderr.contains("gpg could not decrypt \(cli.path("store"))/broken/bad.gpg"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was imported"))
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        @Test(.enabled(if: hasPass, "gpg or pass is absent: pass import tests skipped"))
        func test_importPass_refusesAStoreWhosePlaintextPassesTheTotalLimit() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let environment = try passStore(cli)
            // 17 files of 25 KB that gpg decompresses to 16 MiB each (the most one file may hold):
            // 272 MiB in all, above the 256 MiB one import of a store reads.
            try sh(cli, "mkdir -p store/big && head -c 16777216 /dev/zero | gpg --batch --quiet -e -r throwaway@example.invalid -o store/big/00.gpg"
                   + " && for n in $(seq 1 16); do cp store/big/00.gpg store/big/$n.gpg; done", environment)
            let started = Date()
            let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: environment)
            #expect(result.status == 6, "\(result.stderr)")
            #expect(result.stderr.contains("files of the store come to more than 268435456 bytes (256 MiB) once gpg decrypts them"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was imported"), "\(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 60)
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        // MARK: - passage

        @Test(.enabled(if: hasAge, "age is absent: passage import tests skipped"))
        func test_importPassage_readsAgeFilesWithTheIdentitiesFile() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try sh(cli, "age-keygen -o identities 2>/dev/null && mkdir -p store/db && age-keygen -y identities > store/.age-recipients", [:])
            try sh(cli, "printf 'pg-secret\\nusername: postgres\\n' | age -R store/.age-recipients -o store/db/main.age", [:])
            let environment = ["PASSAGE_IDENTITIES_FILE": cli.path("identities")]
            let result = try cli.run(["import", "--format", "passage", cli.path("store")] + cli.unlock(), extra: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "db/main") == "pg-secret")
            #expect(try get(cli, "db/main", field: "username") == "postgres")
            let missing = try cli.run(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                      extra: ["PASSAGE_IDENTITIES_FILE": cli.path("nope")])
            #expect(missing.status != 0 && missing.stderr.contains("PASSAGE_IDENTITIES_FILE"), "\(missing.stderr)")
        }

        /// A passage store of `count` files (`g1`…, and `x/e` with a username) encrypted to the
        /// recipient of the `age -p` fixture (ProtectedIdentityCLITests), and the environment that
        /// names that passphrase-protected identities file.
        func protectedPassageStore(_ cli: CLI, count: Int) throws -> [String: String] {
            let recipient = ProtectedIdentityCLITests.ageRecipient
            try sh(cli, "mkdir -p store/x && echo \(recipient) > store/.age-recipients", [:])
            try sh(cli, "printf 'ppw\\nlogin: bob\\n' | age -r \(recipient) -o store/x/e.age", [:])
            for index in 1...count { try sh(cli, "printf 'v\(index)\\n' | age -r \(recipient) -o store/g\(index).age", [:]) }
            return ["PASSAGE_IDENTITIES_FILE": ProtectedIdentityCLITests.fixture("identity.age")]
        }

        @Test(.enabled(if: hasAge && CLI.hasScript, "age or script (util-linux) is absent: skipped"))
        func test_importPassage_protectedIdentitiesAskedOnceOnTheTerminal() throws {
            var cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            // More files than ages run at once: every one of them reads the identities once asked.
            cli.environment = try protectedPassageStore(cli, count: 20)
            let prompt = "Passphrase for the passage identities "
            let session = try cli.interactive(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                              answers: [(prompt, ProtectedIdentityCLITests.agePassphrase)])
            #expect(session.status == 0, "\(session.screen)")
            #expect(session.screen.components(separatedBy: "[answered]").count == 2, "one prompt: \(session.screen)")
            #expect(!session.screen.contains("assphrase for"), "no second prompt, none of age's: \(session.screen)")
            #expect(!session.screen.contains(ProtectedIdentityCLITests.agePassphrase), "never echoed: \(session.screen)")
            #expect(session.screen.contains("imported 21 entries"), "\(session.screen)")
            cli.environment = [:]
            #expect(try get(cli, "x/e") == "ppw")
            #expect(try get(cli, "x/e", field: "username") == "bob")
            for index in 1...20 { #expect(try get(cli, "g\(index)") == "v\(index)") }
        }

        @Test(.enabled(if: hasAge && CLI.hasScript, "age or script (util-linux) is absent: skipped"))
        func test_importPassage_protectedIdentitiesWrongPassphraseImportsNothing() throws {
            var cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            cli.environment = try protectedPassageStore(cli, count: 2)
            let prompt = "Passphrase for the passage identities "
            let session = try cli.interactive(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                              answers: [(prompt, "nope"), (prompt, "still nope"), (prompt, "no")])
            #expect(session.status == 3, "\(session.screen)")
            #expect(session.screen.contains("the passphrase does not decrypt the age identities file") && session.screen.contains("(3 tries)"),
                    "\(session.screen)")
            cli.environment = [:]
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        @Test(.enabled(if: hasAge, "age is absent: passage import tests skipped"))
        func test_importPassage_protectedIdentitiesWithoutATerminalRefusedBeforeAnyFile() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let environment = try protectedPassageStore(cli, count: 2)
            // setsid: no controlling terminal, as under cron or CI.
            let result = try cli.run(["--wait", CLI.binary, "import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                     extra: environment, executable: "/usr/bin/setsid")
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("is protected by a passphrase (age -p), and there is no terminal to ask it on; nothing was imported"),
                    "\(result.stderr)")
            #expect(!result.stderr.contains("age:"), "no age ran: \(result.stderr)")
            #expect(try cli.run(["list"] + cli.unlock()).stdout.isEmpty)
        }

        // MARK: - ansible-vault

        @Test func test_importAnsibleVault_inlineValuesWithThePasswordFile() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try "fixture-password\n".write(toFile: cli.path("vault-pass"), atomically: true, encoding: .utf8)
            let file = Self.fixtures.appendingPathComponent("ansible-vault/inline.yml").path
            let result = try cli.run(["import", "--format", "ansible-vault", file, "--source-password-file", cli.path("vault-pass")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "inline/db_password") == "s3cr3t")
            #expect(try get(cli, "inline/services/mail/password") == "mail-pass")
            #expect(try get(cli, "inline/services/keys/0") == "first-key")
            let wrong = try cli.run(["import", "--format", "ansible-vault", file, "--source-password-command", "echo nope", "--overwrite"] + cli.unlock())
            #expect(wrong.status == 3 && wrong.stderr.contains("does not open with the vault password"), "\(wrong.stderr)")
        }

        @Test(.enabled(if: hasAnsibleVault, "ansible-vault is absent: its round-trip test skipped"))
        func test_importAnsibleVault_wholeFileMadeNow() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try sh(cli, "printf 'pw-of-vault\\n' > vp && printf 'top secret\\n' > deploy.key && ansible-vault encrypt --vault-id ops@vp deploy.key >/dev/null 2>&1", [:])
            let result = try cli.run(["import", "--format", "ansible-vault", cli.path("deploy.key"), "--source-password-file", cli.path("vp")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try get(cli, "deploy") == "top secret\n")
        }

        // MARK: - sops

        @Test(.enabled(if: hasAge, "age is absent: sops import tests skipped"))
        func test_importSops_decryptsWithTheAgeKeyFile() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let keys = Self.fixtures.appendingPathComponent("sops/keys.txt").path
            for file in ["secrets.yaml", "secrets.json"] {
                let path = Self.fixtures.appendingPathComponent("sops/" + file).path
                let result = try cli.run(["import", "--format", "sops", path, "--overwrite"] + cli.unlock(), extra: ["SOPS_AGE_KEY_FILE": keys])
                #expect(result.status == 0, "\(file): \(result.stderr)")
                #expect(try get(cli, "secrets/db/password") == "hunter2: with a colon")
                #expect(try get(cli, "secrets/ports/1") == "8443")
            }
            let missing = try cli.run(["import", "--format", "sops", Self.fixtures.appendingPathComponent("sops/secrets.yaml").path, "--overwrite"] + cli.unlock(),
                                      extra: ["SOPS_AGE_KEY_FILE": cli.path("none.txt")])
            #expect(missing.status != 0 && missing.stderr.contains("SOPS_AGE_KEY_FILE"), "\(missing.stderr)")
            // An identity file that holds another key: said for the sops file, with no command to run on a file that does not exist.
            try cli.write("other.txt", Array("AGE-SECRET-KEY-1HPG9VNGG406XW7D2NDSL6NGEPWWLF0CEC60TGX0LKT6GKSZRCJSQNGJ37H\n".utf8))
            let wrong = try cli.run(["import", "--format", "sops", Self.fixtures.appendingPathComponent("sops/secrets.yaml").path, "--overwrite"] + cli.unlock(),
                                    extra: ["SOPS_AGE_KEY_FILE": cli.path("other.txt")])
            #expect(wrong.status == 3, "\(wrong.stderr)")
            #expect(wrong.stderr.contains("the data key of ") && wrong.stderr.contains("does not open with the age identities in \(cli.path("other.txt"))"), "\(wrong.stderr)")
            #expect(!wrong.stderr.contains("(its sops data key)'"), "\(wrong.stderr)")
        }
    }
}
