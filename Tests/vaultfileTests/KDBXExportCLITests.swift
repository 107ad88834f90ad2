import Foundation
import TestSupport
import Testing

/// `vaultfile export --format kdbx`: the written KDBX 4 opened by keepassxc-cli (ls, show, show
/// --totp, attachment-export) and by pykeepass as a second reader; the file's mode and the
/// refusal to replace one; a keepassxc-cli database → import → export → keepassxc-cli round trip.
/// Tiny Argon2 settings keep each run fast; every outside tool runs under `timeout`.
extension ExternalTools {
    @Suite struct KDBXExportCLITests {
        static let tiny = ["--kdf-memory", "1M", "--kdf-iterations", "1", "--kdf-parallelism", "1", "--allow-weak-kdf"]
        static let skipped = KDBXImportCLITests.skipped

        /// A Python 3 that imports pykeepass (Debian's python3-pykeepass), or nil.
        static let pykeepassPython: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { python in
            guard FileManager.default.isExecutableFile(atPath: python) else { return false }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = ["20", python, "-c", "import pykeepass"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }

        /// A vault with an entry of every kind of field, and the database written from it (db.kdbx, password `kp-pw`).
        static func exported(_ cli: CLI) throws -> CLI.Result {
            try cli.write("kpw", Array("kp-pw\n".utf8))
            try cli.write("att", [0x00, 0x01, 0xFF, 0x0A])
            #expect(try cli.run(["set", "Work/Mail"] + cli.unlock(), stdin: Array("s3cret <&>".utf8)).status == 0)
            for (field, value) in [("username", "alice"), ("url", "https://mail.example"), ("notes", "one\ntwo"), ("PIN", "8642")] {
                #expect(try cli.run(["set", "Work/Mail", "--field", field] + cli.unlock(), stdin: Array(value.utf8)).status == 0)
            }
            #expect(try cli.run(["set", "Work/Mail", "--field", "attachment.key.bin", "--value-file", cli.path("att")] + cli.unlock()).status == 0)
            #expect(try cli.run(["set", "Work/Mail", "--totp"] + cli.unlock(), stdin: Array("otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP".utf8)).status == 0)
            #expect(try cli.run(["set", "top"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
            return try cli.run(["export", "--format", "kdbx", "--out", cli.path("db.kdbx"), "--new-password-file", cli.path("kpw")] + Self.tiny + cli.unlock())
        }

        // MARK: - Success

        @Test func test_export_kdbxOpensInKeePassXCWithEveryField() throws {
            guard let tool = KDBXImportCLITests.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let written = try Self.exported(cli)
            #expect(written.status == 0 && written.stderr.contains("exported 2 entries"), "\(written.stderr)")
            let mode = try FileManager.default.attributesOfItem(atPath: cli.path("db.kdbx"))[.posixPermissions] as? Int
            #expect(mode == 0o600)
            func kp(_ command: String) throws -> String {
                let result = try KDBXImportCLITests.keepass(cli, tool, "echo kp-pw | $KP \(command)")
                #expect(result.status == 0, "\(command): \(result.stderr)")
                return result.text
            }
            #expect(try kp("ls -q -R -f db.kdbx").split(separator: "\n").map(String.init).sorted() == ["Work/", "Work/Mail", "top"])
            #expect(try kp("show -q -s -a Password db.kdbx Work/Mail") == "s3cret <&>\n")
            #expect(try kp("show -q -a UserName -a URL -a Notes -a PIN db.kdbx Work/Mail") == "alice\nhttps://mail.example\none\ntwo\n8642\n")
            // The same code as vaultfile's, read twice in case a 30-second step passed between them.
            var same = false
            for _ in 0..<2 where !same {
                let theirs = try kp("show -q --totp db.kdbx Work/Mail").trimmingCharacters(in: .whitespacesAndNewlines)
                let ours = try cli.run(["totp", "Work/Mail"] + cli.unlock()).text.trimmingCharacters(in: .whitespacesAndNewlines)
                same = theirs.count == 6 && theirs == ours
            }
            #expect(same, "keepassxc-cli show --totp and vaultfile totp agree")
            _ = try kp("attachment-export -q db.kdbx Work/Mail key.bin out.bin")
            #expect(try cli.read("out.bin") == [0x00, 0x01, 0xFF, 0x0A])
        }

        @Test func test_export_kdbxIsReadByPykeepass() throws {
            guard let python = Self.pykeepassPython else { print("skipped: needs pykeepass (apt-get install python3-pykeepass)"); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            #expect(try Self.exported(cli).status == 0)
            let script = """
                from pykeepass import PyKeePass
                kp = PyKeePass('db.kdbx', password='kp-pw')
                e = kp.find_entries(title='Mail', first=True)
                print(e.group.name, e.password, e.username, e.url, e.notes.replace('\\n', '|'), e.otp, e.custom_properties.get('PIN'),
                      [(a.filename, a.data) for a in e.attachments], kp.kdbx.header.value.major_version,
                      kp.kdbx.header.value.dynamic_header.cipher_id.data, sep=';')
                """
            try cli.write("read.py", Array(script.utf8))
            let read = try cli.shell("cd \"\(cli.directory.url.path)\" && timeout 30 \(python) read.py")
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.text == "Work;s3cret <&>;alice;https://mail.example;one|two;otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP;8642;"
                    + "[('key.bin', b'\\x00\\x01\\xff\\n')];4;chacha20\n", "\(read.text)")
        }

        @Test func test_export_kdbxRoundTripThroughKeePassXCShowsTheSame() throws {
            guard let tool = KDBXImportCLITests.keepassxc else { print(Self.skipped); return }
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            #expect(try KDBXImportCLITests.makeDatabase(cli, tool).status == 0)
            #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
            try cli.write("kpw", Array("pw".utf8))
            #expect(try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock()).status == 0)
            let out = try cli.run(["export", "--format", "kdbx", "--out", cli.path("back.kdbx"), "--new-password-file", cli.path("kpw")] + Self.tiny + cli.unlock())
            #expect(out.status == 0, "\(out.stderr)")
            // The label the vault stored as Recovery_PIN (kept in its field 'labels') goes back as it was.
            func show(_ database: String, _ entry: String) throws -> String {
                let custom = entry == "Web" ? "" : " -a 'Recovery PIN'"
                let result = try KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP show -q -s -a Title -a UserName -a Password -a URL -a Notes\(custom) \(database) \(entry)")
                #expect(result.status == 0, "\(database) \(entry): \(result.stderr)")
                return result.text
            }
            for entry in ["Email/Mail", "Web"] { #expect(try show("kp.kdbx", entry) == show("back.kdbx", entry), "\(entry)") }
            let attachment = try KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP attachment-export -q --stdout back.kdbx Email/Mail a.txt")
            #expect(attachment.text == "hello attachment\n", "\(attachment.stderr)")
            let totp = try KDBXImportCLITests.keepass(cli, tool, "echo pw | $KP show -q --totp kp.kdbx Email/Mail; echo pw | $KP show -q --totp back.kdbx Email/Mail")
            let codes = totp.text.split(separator: "\n")
            #expect(codes.count == 2 && codes[0].count == 6, "\(totp.text) \(totp.stderr)")
            // Read back by vaultfile, the history version is there too.
            let again = try CLI.withEntriesSet([]); defer { again.directory.remove() }
            #expect(try again.run(["history", "--enable"] + again.unlock()).status == 0)
            #expect(try again.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("back.kdbx")] + again.unlock()).status == 0)
            #expect(try again.run(["get", "Email/Mail", "--revision", "1"] + again.unlock()).text == "first <pw>")
        }

        // MARK: - Failure

        @Test func test_export_kdbxRefusesAnExistingFileWithoutOverwrite() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            try cli.write("kpw", Array("kp-pw".utf8))
            try cli.write("db.kdbx", Array("keep me".utf8), mode: 0o644)
            let arguments = ["export", "--format", "kdbx", "--out", cli.path("db.kdbx"), "--new-password-file", cli.path("kpw")] + Self.tiny + cli.unlock()
            let refused = try cli.run(arguments)
            #expect(refused.status != 0 && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
            #expect(try cli.read("db.kdbx") == Array("keep me".utf8))
            #expect(try cli.run(arguments + ["--overwrite"]).status == 0)
            #expect(try cli.read("db.kdbx").starts(with: [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]))
        }

        @Test func test_export_kdbxOptionsAndHelp() throws {
            let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
            try cli.write("kpw", Array("kp-pw".utf8))
            let json = try cli.run(["export", "--format", "json", "--new-password-file", cli.path("kpw")] + cli.unlock())
            #expect(json.status == 64 && json.stderr.contains("go with --format kdbx"), "\(json.stderr)")
            let noOut = try cli.run(["export", "--format", "kdbx", "--new-password-file", cli.path("kpw")] + cli.unlock())
            #expect(noOut.status == 64 && noOut.stderr.contains("give --out FILE"), "\(noOut.stderr)")
            let pbkdf2 = try cli.run(["export", "--format", "kdbx", "--out", cli.path("x.kdbx"), "--new-password-file", cli.path("kpw"), "--kdf", "pbkdf2"] + cli.unlock())
            #expect(pbkdf2.status == 64 && !FileManager.default.fileExists(atPath: cli.path("x.kdbx")), "\(pbkdf2.stderr)")
            let help = try cli.run(["export", "--help"]).text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            // Issue 45 added keepass-xml, bitwarden-json and pass to what export writes; import-only formats stay out.
            #expect(help.contains("json, dotenv, csv, kdbx, keepass-xml, bitwarden-json or pass") && !help.contains("keepassxc-csv")
                    && !help.contains("bitwarden-csv"), "\(help)")
        }
    }
}
