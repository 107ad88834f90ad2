import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The exports to the peers in the library: keepass-xml, bitwarden-json and the files of a pass
/// store, each read back by vaultfile's own reader of that format (the inverse it was written
/// against), and what each could not carry counted (`ExportLoss`), never dropped silently.
@Suite struct PeerExportTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A vault with history on: `Work/Mail` with every kind of field (an earlier version with
    /// another username), a value-less `Notes/plan`, a card, and `top`.
    static func vault() throws -> Vault {
        var vault = Vault(history: .standard)
        try vault.put(Entry(value: Array("old".utf8), fields: ["username": Array("bob".utf8)], created: 1_000_000, modified: 1_000_000),
                      as: "Work/Mail", now: 1_000_000)
        try vault.put(Entry(value: Array("new <&> \"secret\"".utf8), fields: [
            "username": Array("alice".utf8), "url": Array("https://a.example".utf8), "url2": Array("https://b.example".utf8),
            "notes": Array("line 1\nline 2".utf8), "totp": Array("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP".utf8),
            "attachment.key.bin": [0, 1, 2, 255], "PIN": Array("1234".utf8), "tags": Array("a,b".utf8), "raw": [0xFF, 0x00],
        ], created: 1_000_000, modified: 1_700_000_000_000), as: "Work/Mail", now: 1_700_000_000_000)
        try vault.put(Entry(value: [], fields: ["notes": Array("only notes".utf8)], created: 5_000, modified: 5_000), as: "Notes/plan", now: 5_000)
        try vault.put(Entry(value: Array("4111111111111111".utf8), fields: ["cardholderName": Array("A B".utf8), "code": Array("123".utf8)],
                            created: 5_000, modified: 5_000), as: "Cards/Visa", now: 5_000)
        try vault.put(Entry(value: Array("v".utf8), created: 5_000, modified: 5_000), as: "top", now: 5_000)
        return vault
    }

    // MARK: - keepass-xml

    @Test func test_keepassXML_readBackByTheKeePassXMLReader() throws {
        var written = try KeePassXMLExport.write(try Self.vault(), prefix: "", now: 0)
        defer { wipe(&written.bytes) }
        #expect(written.entries == 4 && written.versions == 1)
        let xml = Self.text(written.bytes)
        #expect(xml.contains("<Value ProtectInMemory=\"True\">new &lt;&amp;&gt; \"secret\"</Value>"), "protected values in the clear, marked")
        #expect(xml.contains("<LastModificationTime>2023-11-14T22:13:20Z</LastModificationTime>"), "ISO 8601 times, as KeePass writes XML")
        #expect(xml.contains("<Binaries><Binary ID=\"0\" Compressed=\"False\">"), "attachments in Meta/Binaries")
        let read = try KeePassXMLReader.read(written.bytes, now: 0)
        let mail = try #require(read.items.first { $0.title == "Mail" })
        #expect(mail.folders == ["Work"] && Self.text(mail.value) == "new <&> \"secret\"")
        #expect(mail.username == "alice" && mail.urls == ["https://a.example", "https://b.example"] && mail.notes == "line 1\nline 2")
        #expect(mail.totp == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(mail.attachments.first { $0.name == "key.bin" }?.bytes == [0, 1, 2, 255])
        #expect(mail.attachments.first { $0.name == "raw" }?.bytes == [0xFF, 0x00])
        #expect(mail.fields.contains { $0.label == "PIN" && Self.text($0.value) == "1234" && $0.protected })
        #expect(mail.extras.contains { $0.label == "tags" && $0.value == "a,b" })
        #expect(mail.created == 1_000_000 && mail.modified == 1_700_000_000_000)
        #expect(mail.history.map { Self.text($0.value) } == ["old"] && mail.history.first?.username == "bob")
        #expect(read.items.contains { $0.title == "plan" && $0.notes == "only notes" && $0.value.isEmpty })
    }

    /// A binary field of an entry with two earlier versions is one loss, not three (the review's count).
    @Test func test_keepassXML_countsALossOncePerEntryNotPerVersion() throws {
        var vault = Vault(history: .standard)
        for (index, value) in ["a", "b", "c"].enumerated() {
            try vault.put(Entry(value: Array(value.utf8), fields: ["raw": [0xFF], "tags": [0xFE]], created: 0, modified: Int64(index)), as: "x", now: Int64(index))
        }
        let written = try KeePassXMLExport.write(vault, prefix: "", now: 0)
        #expect(written.versions == 2)
        let loss = try #require(written.losses.first { $0.kind == "binary_as_attachment" })
        #expect(loss.count == 2 && loss.description.contains("2 values or fields are not text") && loss.description.contains("tags as 'tags'"))
    }

    // MARK: - bitwarden-json

    @Test func test_bitwardenJSON_followsBitwardensExportShape() throws {
        var written = try BitwardenJSONExport.write(try Self.vault(), prefix: "")
        defer { wipe(&written.bytes) }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(written.bytes)) as? [String: Any])
        #expect(document["encrypted"] as? Bool == false)
        let folders = try #require(document["folders"] as? [[String: Any]])
        #expect(Set(folders.compactMap { $0["name"] as? String }) == ["Cards", "Notes", "Work"])
        let items = try #require(document["items"] as? [[String: Any]])
        #expect(items.count == 4)
        for item in items {
            for key in ["id", "folderId", "type", "name", "notes", "favorite", "fields", "reprompt", "creationDate", "revisionDate"] {
                #expect(item.keys.contains(key), "item key \(key)")
            }
        }
        func item(_ name: String) throws -> [String: Any] { try #require(items.first { $0["name"] as? String == name }) }
        let mail = try item("Mail")
        #expect(mail["type"] as? Int == 1)
        let login = try #require(mail["login"] as? [String: Any])
        #expect(login["username"] as? String == "alice" && login["password"] as? String == "new <&> \"secret\"")
        #expect((login["uris"] as? [[String: Any]])?.compactMap { $0["uri"] as? String } == ["https://a.example", "https://b.example"])
        let fields = try #require(mail["fields"] as? [[String: Any]])
        #expect(fields.contains { $0["name"] as? String == "PIN" && $0["type"] as? Int == 1 && $0["value"] as? String == "1234" })
        #expect(fields.contains { $0["name"] as? String == "tags" && $0["type"] as? Int == 0 })
        #expect((mail["passwordHistory"] as? [[String: Any]])?.first?["password"] as? String == "old")
        #expect(try item("plan")["type"] as? Int == 2 && item("plan")["secureNote"] != nil)
        #expect(try item("Visa")["type"] as? Int == 3 && (item("Visa")["card"] as? [String: Any])?["number"] as? String == "4111111111111111")
        #expect(written.losses.map(\.kind).sorted() == ["attachments", "binary_fields", "version_fields"])
    }

    @Test func test_bitwardenJSON_readBackByTheBitwardenReader() throws {
        var written = try BitwardenJSONExport.write(try Self.vault(), prefix: "")
        defer { wipe(&written.bytes) }
        let read = try BitwardenJSON.read(written.bytes, now: 0)
        let mail = try #require(read.items.first { $0.title == "Mail" })
        #expect(mail.folders == ["Work"] && Self.text(mail.value) == "new <&> \"secret\"" && mail.username == "alice")
        #expect(mail.urls == ["https://a.example", "https://b.example"] && mail.notes == "line 1\nline 2")
        #expect(mail.totp == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(mail.fields.map(\.label).sorted() == ["PIN", "tags"])
        #expect(mail.created == 1_000_000 && mail.modified == 1_700_000_000_000 && mail.history.map { Self.text($0.value) } == ["old"])
        let card = try #require(read.items.first { $0.title == "Visa" })
        #expect(Self.text(card.value) == "4111111111111111" && Set(card.fields.map(\.label)) == ["cardholderName", "code"])
        // A secure note's text comes back as its notes, the value empty: the entry as it was (issue 45).
        #expect(read.items.contains { $0.title == "plan" && $0.value.isEmpty && $0.notes == "only notes" })
    }

    // MARK: - pass

    @Test func test_passStore_filesReadBackByThePassReader() throws {
        var export = PassStoreExport(try Self.vault(), prefix: "")
        #expect(export.names == ["Cards/Visa", "Notes/plan", "Work/Mail", "top"])
        let made = export.contents(of: "Work/Mail")
        var mail = try #require(made)
        defer { wipe(&mail) }
        #expect(Self.text(mail).hasPrefix("new <&> \"secret\"\nlogin: alice\nurl: https://a.example\nurl: https://b.example\notpauth://"))
        #expect(Self.text(mail).hasSuffix("notes: line 1\nline 2\n"))
        let item = try PassReader.item(ForeignStoreFile(path: ["Work", "Mail"], bytes: mail))
        #expect(Self.text(item.value) == "new <&> \"secret\"" && item.username == "alice" && item.notes == "line 1\nline 2")
        #expect(item.urls == ["https://a.example", "https://b.example"] && item.totp == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(item.fields.map(\.label) == ["PIN"] && item.extras.map(\.label) == ["tags"], "tags read back as the fact they are")
        #expect(PassStoreExport.path(of: "Work/Mail") == ["Work", "Mail.gpg"])
        let kinds = Set(export.losses.map(\.kind))
        #expect(kinds.isSuperset(of: ["attachments", "binary_fields", "history", "times"]) && !kinds.contains("reads_differently"))
    }

    @Test func test_passStore_countsAValueThatDoesNotReadBack() throws {
        var vault = Vault()
        try vault.put(Entry(value: Array("two\nlines".utf8), created: 0, modified: 0), as: "multi")
        try vault.put(Entry(value: Array("url: looks like a field".utf8), created: 0, modified: 0), as: "tricky")
        try vault.put(Entry(value: Array("plain".utf8), fields: ["totp": Array("JBSWY3DPEHPK3PXP".utf8)], created: 0, modified: 0), as: "otp")
        var export = PassStoreExport(vault, prefix: "")
        for name in export.names { _ = export.contents(of: name) }
        #expect(export.losses.first { $0.kind == "reads_differently" }?.count == 2)
        let otpMade = export.contents(of: "otp")
        let otp = try #require(otpMade)
        #expect(Self.text(otp) == "plain\notpauth://totp/otp?secret=JBSWY3DPEHPK3PXP\n", "a bare secret made an otpauth URI")
    }
}
