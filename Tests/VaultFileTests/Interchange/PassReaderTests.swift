import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The content rules of a pass/passage file (issue 44): `PassReader.item`.
@Suite struct PassReaderTests {
    private func item(_ text: String, path: [String] = ["web", "example.com"]) throws(VaultError) -> ForeignItem {
        try PassReader.item(ForeignStoreFile(path: path, bytes: Array(text.utf8)))
    }

    // MARK: - Success

    @Test func test_item_firstLineIsTheValueAndKeyLinesAreFields() throws {
        let read = try item("hunter2\nlogin: alice\nurl: https://example.com/login\nPIN: 1234\notpauth://totp/x?secret=JBSWY3DPEHPK3PXP\n")
        #expect(read.folders == ["web"])
        #expect(read.title == "example.com")
        #expect(read.value == Array("hunter2".utf8))
        #expect(read.username == "alice")
        #expect(read.urls == ["https://example.com/login"])
        #expect(read.totp == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(read.fields.map(\.label) == ["PIN"])
        #expect(read.fields.map { String(decoding: $0.value, as: UTF8.self) } == ["1234"])
        #expect(read.notes == nil)
    }

    @Test func test_item_usernameSpellingsAndCase() throws {
        #expect(try item("pw\nuser: bob").username == "bob")
        #expect(try item("pw\nUsername: carol").username == "carol")
        #expect(try item("pw\nLogin:dave").username == nil)  // no space after ':' is not a KEY: value line
        #expect(try item("pw\nLogin:dave").notes == "Login:dave")
    }

    @Test func test_item_firstLineNamingAFieldMeansNoValue() throws {
        for key in ["login", "user", "username", "url", "comments", "notes", "Login"] {
            let read = try item("\(key): something\nsecond: line")
            #expect(read.value.isEmpty, "\(key)")
            #expect(read.fields.map(\.label) == ["second"], "\(key)")
        }
        // Any other key on line 1 is the value, as it is.
        #expect(try item("password: x\n").value == Array("password: x".utf8))
    }

    @Test func test_item_notesContinueAfterCommentsAndOtherLinesAreKept() throws {
        let read = try item("pw\ncomments: first\nsecond line\n  third, indented\nurl: https://a.example\nstray text\n")
        #expect(read.notes == "first\nsecond line\n  third, indented\nstray text")
        #expect(read.urls == ["https://a.example"])
        let notesOnly = try item("notes:\nonly notes here\n")
        #expect(notesOnly.value.isEmpty)
        #expect(notesOnly.notes == "only notes here")
    }

    @Test func test_item_repeatedKeysAreAllKept() throws {
        let read = try item("pw\nurl: https://one.example\nurl: https://two.example\nusername: a\nusername: b\nLogin: c\notpauth://totp/a?secret=AAAA\notpauth://totp/b?secret=BBBB")
        #expect(read.urls == ["https://one.example", "https://two.example"])
        #expect(read.username == "a")
        // A second username under another of its keys is a second username too: numbered and reported by
        // the builder, stored beside `username` (`fieldNames`), its key as written its label (recheck58 N5).
        #expect(read.fields.map(\.label) == ["username", "Login", "otpauth"])
        #expect(read.fieldNames == [0: "username", 1: "username"])
        #expect(read.fields.prefix(2).map { String(decoding: $0.value, as: UTF8.self) } == ["b", "c"])
        #expect(read.totp == "otpauth://totp/a?secret=AAAA")
    }

    @Test func test_read_keepsEmptyFilesAndCountsSkipped() throws {
        let files = [ForeignStoreFile(path: ["empty"], bytes: []), ForeignStoreFile(path: ["a", "b"], bytes: Array("v\n".utf8))]
        let result = try PassReader.read(files, format: "pass", skipped: [".gpg-id files": (2, .statedInText), "nothing": (0, .noPlace)])
        #expect(result.format == "pass")
        #expect(result.items.count == 2)
        #expect(result.items[0].value.isEmpty && result.items[0].notes == nil && result.items[0].title == "empty")
        #expect(result.notKept == [".gpg-id files": 2])
    }

    // MARK: - Failure

    @Test func test_item_refusesNULAndInvalidUTF8OutsideTheValue() throws {
        var content = Array("pw\nnote".utf8)
        content.append(0)
        #expect(throws: VaultError.self) { try PassReader.item(ForeignStoreFile(path: ["x"], bytes: content)) }
        var invalid = Array("pw\n".utf8)
        invalid += [0xFF, 0xFE]
        do {
            _ = try PassReader.item(ForeignStoreFile(path: ["dir", "x"], bytes: invalid))
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.description.contains("dir/x: line 2"))
        }
    }

    // MARK: - Edge cases

    @Test func test_item_binaryValueAndCRLFLines() throws {
        var content: [UInt8] = [0x00, 0xFF, 0x41]
        content += Array("\r\nlogin: eve\r\nurl: https://crlf.example\r\n".utf8)
        let read = try PassReader.item(ForeignStoreFile(path: ["bin"], bytes: content))
        #expect(read.value == [0x00, 0xFF, 0x41, 0x0D])  // the value is line 1 byte for byte
        #expect(read.username == "eve")
        #expect(read.urls == ["https://crlf.example"])
    }

    @Test func test_item_urlWithoutKeyIsNotesAndLongKeyIsNotes() throws {
        let long = String(repeating: "k", count: 65)
        let read = try item("pw\nhttps://example.com\n\(long): v\n")
        #expect(read.notes == "https://example.com\n\(long): v")
        #expect(read.fields.isEmpty)
    }
}
