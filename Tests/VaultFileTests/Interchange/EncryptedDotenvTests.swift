import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// KEY=value lines holding ciphertext (cold60 H1): sops's dotenv form (`KEY=ENC[AES256_GCM,…]`,
/// `sops_…` metadata lines) and Ansible Vault values are recognised by the sniffer and refused by
/// the dotenv reader, in one buffer and in windows, so that no ciphertext is imported as a secret.
@Suite struct EncryptedDotenvTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// sops's dotenv form as `sops -e app.env` writes it (values first, then the flattened metadata).
    static let sopsDotenv = """
        DB_PASSWORD=ENC[AES256_GCM,data:dGVzdA==,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]
        sops_age__list_0__map_enc=-----BEGIN AGE ENCRYPTED FILE-----\\nYWdl\\n-----END AGE ENCRYPTED FILE-----\\n
        sops_age__list_0__map_recipient=age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
        sops_lastmodified=2026-11-28T14:00:00Z
        sops_mac=ENC[AES256_GCM,data:AAAA,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]
        sops_unencrypted_suffix=_unencrypted
        sops_version=3.8.1

        """

    // MARK: - FormatSniffer.encryptedLines

    @Test func test_encryptedLines_recognisesSopsDotenvByValueOrMetadata() {
        let samples: [(text: String, kind: FormatSniffer.EncryptedLines?)] = [
            (Self.sopsDotenv, .sops),
            ("A=ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\n", .sops),
            ("export A=\"ENC[AES256_GCM,data:x]\"\n", .sops),
            ("A='ENC[AES256_GCM,data:x]'\r\n", .sops),
            // sops's metadata is refused by its `sops_mac=ENC[…]` value; a plain key called so is no sops file (recheck62 N7).
            ("PLAIN=x\nsops_mac=ENC[AES256_GCM,data:x]\nsops_version=3.9.0\n", .sops),
            ("PLAIN=x\nsops_version=3.9.0\n", nil),
            ("PLAIN=x\nsops_mac=whatever\n", nil),
            ("A=$ANSIBLE_VAULT;1.1;AES256\n", .ansibleVault),
            ("A=$ANSIBLE_VAULT;1.1;AES256\nB=ENC[AES256_GCM,data:x]\n", .sops),
            ("A=plain\nB='quoted'\n# ENC[AES256_GCM, in a comment\n", nil),
            ("A=text then ENC[AES256_GCM,data:x]\n", nil),
            ("MY_sops_version=1\n", nil),
            ("not KEY=value lines\nENC[AES256_GCM,data:x]\n", nil),
        ]
        for sample in samples {
            #expect(FormatSniffer.encryptedLines(bytes(sample.text)) == sample.kind, "\(sample.text)")
        }
        // The sniffer still names the shape (KEY=value lines): the refusal is import's.
        #expect(FormatSniffer.sniff(bytes(Self.sopsDotenv))?.format == "dotenv")
    }

    // MARK: - The dotenv reader

    @Test func test_dotenvRead_refusesSopsCiphertextAnywhereInTheFile() throws {
        // Past the sniffer's 200 lines: the reader itself refuses, in one buffer and in windows.
        let plain = (0..<300).map { "PLAIN_\($0)=value\($0)\n" }.joined()
        for tail in ["SECRET=ENC[AES256_GCM,data:dGVzdA==,iv:AA==,tag:AA==,type:str]\n", "sops_mac=ENC[AES256_GCM,data:x]\n",
                     "SECRET=\"ENC[AES256_GCM,data:x]\"\n"] {
            let input = bytes(plain + tail)
            #expect(FormatSniffer.encryptedLines(input) == nil, "beyond the sniffer's lines")
            do {
                _ = try Interchange.read(input, format: .dotenv, now: 1, options: ForeignBuildOptions())
                Issue.record("imported \(tail)")
            } catch {
                #expect(error.description.contains("line 301: this is a sops-encrypted dotenv file"), "\(error.description)")
                // Said as the sniffer says it; the command adds the hint naming the file.
                #expect(error.description.contains(FormatSniffer.EncryptedLines.sops.refusal), "\(error.description)")
                #expect(FormatSniffer.EncryptedLines.named(in: error.description) == .sops)
            }
            for length in [1, 7, 1 << 16] {
                #expect(throws: VaultError.self, "windows of \(length)") {
                    try Interchange.read(windows: ImportWindows.over(input, windowLength: length), format: .dotenv, now: 1,
                                         options: ForeignBuildOptions())
                }
            }
        }
    }

    @Test func test_dotenvRead_refusesAnsibleVaultValue() {
        do {
            _ = try Interchange.parse(bytes("A=1\nB='$ANSIBLE_VAULT;1.1;AES256'\n"), format: .dotenv, now: 1)
            Issue.record("imported an Ansible Vault value")
        } catch {
            #expect(error.description.contains("line 2: this is Ansible Vault ciphertext in KEY=value lines"), "\(error.description)")
            #expect(FormatSniffer.EncryptedLines.named(in: error.description) == .ansibleVault)
        }
    }

    @Test func test_dotenvRead_keepsPlainValuesThatOnlyMentionTheMarkers() throws {
        let read = try Interchange.parse(bytes("A=see ENC[AES256_GCM,x]\nsops_versions=1\nB=ANSIBLE_VAULT\nsops_version=3.8.1\nsops_mac=x\n"),
                                         format: .dotenv, now: 1)
        #expect(read.map(\.name) == ["A", "sops_versions", "B", "sops_version", "sops_mac"])
    }
}
