import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// Bitwarden's SSH key items (type 5) both ways, and entries with notes only (issue 45): an ssh
/// key entry is written as `sshKey: {privateKey, publicKey, keyFingerprint}` and read back as the
/// same entry; a secure note's text reads back as notes, as Bitwarden's CSV export reads.
@Suite struct BitwardenSSHKeyTests {
    static func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The export's items, parsed by Foundation's JSON reader.
    static func items(_ vault: Vault) throws -> (items: [[String: Any]], losses: [ExportLoss]) {
        var written = try BitwardenJSONExport.write(vault, prefix: "")
        defer { wipe(&written.bytes) }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(written.bytes)) as? [String: Any])
        return (try #require(document["items"] as? [[String: Any]]), written.losses)
    }

    /// `vault` exported to Bitwarden JSON and imported again by the Bitwarden reader and the builder.
    static func roundTrip(_ vault: Vault) throws -> ImportedEntries {
        var written = try BitwardenJSONExport.write(vault, prefix: "")
        defer { wipe(&written.bytes) }
        return try Interchange.read(written.bytes, format: .bitwardenJSON, now: 1_700_000_000_000)
    }

    static func found(_ imported: ImportedEntries, _ name: String) -> Entry? { imported.entries.first { $0.name == name }?.entry }

    /// A Bitwarden export of one item of type 5, members as given (JSON texts).
    static func bitwarden(privateKey: String?, publicKey: String, fingerprint: String, fields: String = "[]") -> [UInt8] {
        func json(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\n", with: "\\n") + "\"" }
        let key = privateKey.map(json) ?? "null"
        return Array(#"{"encrypted":false,"folders":[],"items":[{"id":"1","type":5,"name":"deploy","notes":null,"favorite":false,"fields":\#(fields),"#
            .utf8) + Array(#""sshKey":{"privateKey":\#(key),"publicKey":\#(json(publicKey)),"keyFingerprint":\#(json(fingerprint))},"#.utf8)
            + Array(#""creationDate":"2025-01-02T03:04:05.000Z","revisionDate":"2025-01-02T03:04:05.000Z"}]}"#.utf8)
    }

    static func openSSH(_ key: SSHPrivateKey) throws -> String {
        let text = try key.openSSHText()
        return text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: - Success

    @Test func test_bitwardenExport_writesAnSSHKeyEntryAsAnSSHKeyItem() throws {
        var vault = Vault()
        let key = try SSHPrivateKey.generate(.ed25519, comment: "deploy@ci")
        try SSHKeyEntry.store(key, as: "ssh/deploy", in: &vault, now: 1_000)
        try vault.setField("notes", value: Array("for the CI".utf8), for: "ssh/deploy", now: 2_000)
        let (items, losses) = try Self.items(vault)
        let item = try #require(items.first)
        #expect(item["type"] as? Int == 5 && item["name"] as? String == "deploy" && item["login"] == nil)
        let sshKey = try #require(item["sshKey"] as? [String: Any])
        #expect(sshKey["privateKey"] as? String == Self.text(vault.entry("ssh/deploy")?.value))
        #expect(sshKey["publicKey"] as? String == key.authorizedKeysLine && sshKey["keyFingerprint"] as? String == key.publicKey.fingerprint)
        #expect(item["notes"] as? String == "for the CI")
        #expect((item["fields"] as? [[String: Any]])?.isEmpty == true, "the key's own fields are the sshKey object")
        #expect(losses.isEmpty, "\(losses)")
    }

    @Test func test_bitwardenRoundTrip_givesBackTheSameSSHKeyEntryOfEveryType() throws {
        var vault = Vault()
        for (index, type) in [SSHKeyType.ed25519, .ecdsaP256, .rsa].enumerated() {
            try SSHKeyEntry.store(try SSHPrivateKey.generate(type, comment: index == 1 ? "" : "key\(index)@test"), as: "ssh/k\(index)", in: &vault, now: 1_000)
        }
        // A comment changed after the key was stored (what the agent lists) travels as a custom field.
        try vault.setField("comment", value: Array("work laptop".utf8), for: "ssh/k2", now: 2_000)
        let imported = try Self.roundTrip(vault)
        #expect(imported.warnings.isEmpty, "\(imported.warnings)")
        for name in ["ssh/k0", "ssh/k1", "ssh/k2"] {
            let original = try #require(vault.entry(name)), back = try #require(Self.found(imported, name))
            #expect(back.value == original.value, "\(name): the private key as it was")
            #expect(back.fields == original.fields, "\(name): \(back.fields.keys.sorted()) against \(original.fields.keys.sorted())")
            let key = try SSHPrivateKey.parse(back.value, source: name)
            #expect(Self.text(back.fields["public"])?.hasPrefix(key.publicKey.description) == true)
        }
        #expect(Self.text(Self.found(imported, "ssh/k2")?.fields["comment"]) == "work laptop")
    }

    @Test func test_bitwardenRead_readsAnSSHKeyItemAsBitwardenWritesIt() throws {
        // Bitwarden's generator writes keys without a comment and a public line without one.
        let key = try SSHPrivateKey.generate(.ed25519, comment: "")
        let read = try Interchange.read(Self.bitwarden(privateKey: try Self.openSSH(key), publicKey: key.authorizedKeysLine + "\n",
                                                      fingerprint: key.publicKey.fingerprint), format: .bitwardenJSON, now: 0)
        let entry = try #require(Self.found(read, "deploy"))
        #expect(SSHKeyEntry.isSSHKey(entry) && Self.text(entry.fields["ssh-key"]) == "ssh-ed25519")
        #expect(Self.text(entry.fields["public"]) == key.authorizedKeysLine, "the newline ending the line is not kept")
        #expect(Self.text(entry.fields["fingerprint"]) == key.publicKey.fingerprint && entry.fields["comment"] == nil)
        #expect(try SSHPrivateKey.parse(entry.value, source: "t").publicKey == key.publicKey)
        #expect(entry.created == 1_735_787_045_000 && read.warnings.isEmpty)
    }

    @Test func test_bitwardenRoundTrip_keepsANotesOnlyEntryAsNotes() throws {
        var vault = Vault()
        try vault.put(Entry(value: [], fields: ["notes": Array("door code 4711\nsecond line".utf8)], created: 5_000, modified: 6_000), as: "home/door", now: 6_000)
        try vault.put(Entry(value: [], created: 5_000, modified: 6_000), as: "empty", now: 6_000)
        #expect(try Self.items(vault).items.allSatisfy { $0["type"] as? Int == 2 })
        let imported = try Self.roundTrip(vault)
        for name in ["home/door", "empty"] {
            let back = try #require(Self.found(imported, name))
            #expect(back == vault.entry(name), "\(name): \(back)")
        }
    }

    @Test func test_bitwardenRead_aSecureNotesTextIsItsNotesAsInBitwardensCSV() throws {
        let fixture = Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json")))
        let wifi = try #require(Self.found(try Interchange.read(fixture, format: .bitwardenJSON, now: 0), "Wifi"))
        #expect(wifi.value.isEmpty && Self.text(wifi.fields["notes"]) == "network: home\npassword: hunter2")
        #expect(Self.text(wifi.fields["favorite"]) == "yes")
        let csv = try BitwardenCSVReader.read(try KeePassXMLReaderTests.fixture("bitwarden.csv"), now: 0)
        let note = try #require(csv.items.first { $0.title == "Wifi" })
        #expect(note.value.isEmpty && note.notes != nil, "the CSV reader's rule, which the JSON reader now follows")
    }

    // MARK: - Failure

    @Test func test_bitwardenRead_refusesAnSSHKeyItemWithoutAPrivateKey() throws {
        let key = try SSHPrivateKey.generate(.ed25519, comment: "")
        for missing in [nil, ""] {
            let document = Self.bitwarden(privateKey: missing, publicKey: key.authorizedKeysLine, fingerprint: key.publicKey.fingerprint)
            #expect {
                _ = try Interchange.read(document, format: .bitwardenJSON, now: 0)
            } throws: { error in
                "\(error)".contains("item 1 ('deploy') is an SSH key (type 5) without 'sshKey.privateKey'")
            }
        }
    }

    // MARK: - Edge cases

    @Test func test_bitwardenRead_keepsAPassphraseProtectedKeyAsAnOrdinaryEntryAndSaysSo() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("protected-identities")
        let sealed = try String(contentsOf: folder.appendingPathComponent("ssh-ed25519-ctr.key"), encoding: .utf8)
        let line = try String(contentsOf: folder.appendingPathComponent("ssh-ed25519-ctr.key.pub"), encoding: .utf8)
        let read = try Interchange.read(Self.bitwarden(privateKey: sealed, publicKey: line, fingerprint: "SHA256:as-bitwarden-has-it"),
                                        format: .bitwardenJSON, now: 0)
        let entry = try #require(Self.found(read, "deploy"))
        #expect(Self.text(entry.value) == sealed && !SSHKeyEntry.isSSHKey(entry), "kept as it is, not served")
        #expect(Self.text(entry.fields["public"]) == line.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(Self.text(entry.fields["fingerprint"]) == "SHA256:as-bitwarden-has-it")
        let warning = try #require(read.warnings.first { $0.kind == "ssh_key_not_served" })
        #expect(warning.description.contains("item 'deploy'") && warning.description.contains("protected by a passphrase")
                && warning.description.contains("vaultfile set NAME --ssh-key"), "\(warning)")
    }

    @Test func test_bitwardenRead_keepsAKeyOfAnotherFormatAsAnOrdinaryEntry() throws {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----\n"
        let read = try Interchange.read(Self.bitwarden(privateKey: pem, publicKey: "", fingerprint: ""), format: .bitwardenJSON, now: 0)
        let entry = try #require(Self.found(read, "deploy"))
        #expect(Self.text(entry.value) == pem && entry.fields.isEmpty)
        let warning = try #require(read.warnings.first { $0.kind == "ssh_key_not_served" })
        #expect(warning.description.contains("could not be read") && warning.description.contains("BEGIN RSA PRIVATE KEY")
                && !warning.description.contains("MIIB"), "names the armor, never a byte of the key: \(warning)")
    }

    @Test func test_bitwardenRead_replacesAPublicKeyThatIsNotThePrivateKeysAndSaysSo() throws {
        let key = try SSHPrivateKey.generate(.ed25519, comment: "me")
        let other = try SSHPrivateKey.generate(.ed25519, comment: "someone else")
        let read = try Interchange.read(Self.bitwarden(privateKey: try Self.openSSH(key), publicKey: other.authorizedKeysLine, fingerprint: "MD5:00:11",
                                                      fields: #"[{"name":"comment","value":"from the field","type":0}]"#),
                                        format: .bitwardenJSON, now: 0)
        let entry = try #require(Self.found(read, "deploy"))
        #expect(Self.text(entry.fields["public"]) == key.authorizedKeysLine && Self.text(entry.fields["fingerprint"]) == key.publicKey.fingerprint)
        #expect(Self.text(entry.fields["comment"]) == "from the field" && entry.fields["comment_2"] == nil, "the custom field is the comment")
        #expect(read.warnings.contains { $0.kind == "not_kept" && $0.description.contains("public keys or fingerprints that are not the private key's") })
    }

    @Test func test_bitwardenExport_aDamagedKeyEntryIsALoginAndAStalePublicLineIsReplaced() throws {
        var vault = Vault()
        try SSHKeyEntry.store(try SSHPrivateKey.generate(.ed25519, comment: "c"), as: "ssh/stale", in: &vault, now: 1_000)
        try vault.setField("public", value: Array(try SSHPrivateKey.generate(.ed25519, comment: "c").authorizedKeysLine.utf8), for: "ssh/stale", now: 2_000)
        try vault.put(Entry(value: Array("-----BEGIN OPENSSH PRIVATE KEY-----\nU0VDUkVU\n-----END OPENSSH PRIVATE KEY-----\n".utf8),
                            fields: ["ssh-key": Array("ssh-ed25519".utf8)], created: 0, modified: 0), as: "ssh/damaged", now: 0)
        let (items, losses) = try Self.items(vault)
        let stale = try #require(items.first { $0["name"] as? String == "stale" })
        let key = try SSHPrivateKey.parse(try #require(vault.entry("ssh/stale")).value, source: "t")
        #expect((stale["sshKey"] as? [String: Any])?["publicKey"] as? String == key.authorizedKeysLine, "the key's own line, not the stale field")
        #expect(losses.contains { $0.kind == "ssh_public_replaced" && $0.count == 1 })
        #expect(items.first { $0["name"] as? String == "damaged" }?["type"] as? Int == 1, "a key that does not read is written as before")
    }
}
