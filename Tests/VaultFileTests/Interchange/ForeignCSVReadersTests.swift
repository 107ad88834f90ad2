import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The CSV readers of issue 44: bitwarden-csv, 1password-csv, lastpass-csv, chrome-csv, firefox-csv,
/// dashlane-csv (both forms), read from Fixtures/import and from hostile text.
@Suite struct ForeignCSVReadersTests {
    static func fixture(_ name: String) throws -> [UInt8] { try KeePassXMLReaderTests.fixture(name) }
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    static func field(_ item: ForeignItem, _ label: String) -> String? { item.fields.first { $0.label == label }.map { text($0.value) } }
    static func extra(_ item: ForeignItem, _ label: String) -> String? { item.extras.first { $0.label == label }?.value }

    // MARK: - Success

    @Test func test_bitwardenCSV_readsFieldsURIsFoldersAndNotes() throws {
        let read = try BitwardenCSVReader.read(try Self.fixture("bitwarden.csv"), now: 0)
        #expect(read.items.map(\.title) == ["Twitter", "Wifi", "db01"])
        let twitter = read.items[0]
        #expect(twitter.folders == ["Social"] && twitter.username == "alice" && Self.text(twitter.value) == "tw-secret")
        #expect(twitter.urls == ["https://twitter.com", "https://x.com"])
        #expect(twitter.totp == "JBSWY3DPEHPK3PXP")
        #expect(twitter.fields.map { "\($0.label)=\(Self.text($0.value))" } == ["Recovery=12345", "PIN=9876"])
        #expect(Self.extra(twitter, "favorite") == "yes")
        #expect(read.items[1].value.isEmpty && read.items[1].notes == "SSID home\nsecond line")
        let db = read.items[2]
        #expect(db.folders == ["Work", "Servers"] && Self.text(db.value) == "pa,ss\"word" && db.username == "admin")
        #expect(Self.field(db, "username") == "not-the-login", "a custom 'username' stays a field; the builder keeps the login")
        #expect(read.notKept["Bitwarden's master-password re-prompt"] == 1)
        let org = try BitwardenCSVReader.read(try Self.fixture("bitwarden-org.csv"), now: 0)
        #expect(org.items.map(\.folders) == [["Engineering"]])
        #expect(org.notKept["Bitwarden's second and further collections of an item"] == 1)
    }

    @Test func test_onePasswordCSV_keepsOTPAuthTagsFavoriteAndArchived() throws {
        let read = try OnePasswordCSVReader.read(try Self.fixture("1password.csv"), now: 0)
        #expect(read.items.map(\.title) == ["GitHub", "Old forum", "Shopping list"])
        let github = read.items[0]
        #expect(github.totp == "otpauth://totp/GitHub:octocat?secret=JBSWY3DPEHPK3PXP&issuer=GitHub")
        #expect(github.urls == ["https://github.com"] && github.username == "octocat" && github.notes == "Recovery codes in the safe")
        #expect(Self.extra(github, "tags") == "dev,work" && Self.extra(github, "favorite") == "yes" && Self.extra(github, "archived") == nil)
        #expect(Self.extra(read.items[1], "archived") == "yes" && read.items[1].totp == nil)
        #expect(read.items[2].notes == "eggs\nmilk" && read.items[2].value.isEmpty)
        #expect(read.notKept.isEmpty)
    }

    @Test func test_lastPassCSV_splitsGroupingAtBackslashes() throws {
        let read = try LastPassCSVReader.read(try Self.fixture("lastpass.csv"), now: 0)
        #expect(read.items.map(\.folders) == [["Work", "Clients", "Acme"], ["Servers"], []])
        #expect(read.items[0].totp == "JBSWY3DPEHPK3PXP" && read.items[0].notes == "Security question: blue")
        #expect(Self.extra(read.items[0], "favorite") == "yes")
        #expect(read.items[1].urls.isEmpty, "http://sn marks a secure note, not a site")
        #expect(read.items[1].notes == "NoteType:Server\nHostname:db.internal")
        #expect(read.items[2].title.isEmpty && read.items[2].urls == ["https://mail.example.net"], "the builder takes the site")
    }

    @Test func test_chromeCSV_padsRaggedRowsAndLeavesTheTitleToTheSite() throws {
        let read = try ChromeCSVReader.read(try Self.fixture("chrome.csv"), now: 0)
        #expect(read.items.map(\.title) == ["accounts.google.com", "example.org", ""])
        #expect(read.items[0].notes == "backup codes printed" && read.items[1].notes == nil)
        #expect(read.items[2].urls == ["https://news.ycombinator.com/login"] && Self.text(read.items[2].value) == "hn-pw")
        let old = try ChromeCSVReader.read(Array("name,url,username,password\nx,https://x.org,u,p\n".utf8), now: 0)
        #expect(old.items.count == 1 && old.items[0].username == "u")
    }

    @Test func test_firefoxCSV_keepsTimesAndNamesGuids() throws {
        let read = try FirefoxCSVReader.read(try Self.fixture("firefox.csv"), now: 0)
        #expect(read.items.map(\.title) == ["", ""])
        #expect(read.items[0].created == 1_700_000_000_000 && read.items[0].modified == 1_705_000_000_000)
        #expect(read.items[0].urls == ["https://accounts.firefox.com"] && read.items[0].username == "erin@example.com")
        #expect(Self.extra(read.items[1], "http_realm") == "Intranet realm")
        #expect(read.notKept["Firefox's guid column"] == 2 && read.notKept["Firefox's timeLastUsed column"] == 2)
        #expect(read.notKept["Firefox's formActionOrigin column"] == 1)
    }

    @Test func test_dashlaneCSV_readsTheHeaderFormAndTheHeaderlessForm() throws {
        let headed = try DashlaneCSVReader.read(try Self.fixture("dashlane.csv"), now: 0)
        #expect(headed.items.map(\.title) == ["Example Mail", "Bank"])
        #expect(headed.items[0].folders == ["Email"] && headed.items[0].totp == "JBSWY3DPEHPK3PXP")
        #expect(Self.field(headed.items[0], "username2") == "frank" && headed.items[0].username == "frank@example.com")
        #expect(headed.items[1].notes == "Joint account")
        let bare = try DashlaneCSVReader.read(try Self.fixture("dashlane-headerless.csv"), now: 0)
        #expect(bare.items.map(\.title) == ["Example Mail", "Bank", "Wifi"])
        #expect(bare.items[0].username == "frank@example.com" && bare.items[0].notes == "a note" && bare.items[0].urls == ["https://mail.example.com"])
        #expect(bare.items[1].notes == nil && Self.text(bare.items[1].value) == "bank-pw", "a short row is padded")
        #expect(Self.field(bare.items[2], "column6") == "extra one", "a long row keeps its extra cells")
    }

    // MARK: - Failure

    @Test func test_readers_refuseTheWrongHeaderNamingTheFormat() {
        let csv = Array("a,b,c\n1,2,3\n".utf8)
        let readers: [(String, ([UInt8]) throws(VaultError) -> ForeignImport)] = [
            ("Bitwarden CSV", { (b) throws(VaultError) in try BitwardenCSVReader.read(b, now: 0) }),
            ("1Password CSV", { (b) throws(VaultError) in try OnePasswordCSVReader.read(b, now: 0) }),
            ("LastPass CSV", { (b) throws(VaultError) in try LastPassCSVReader.read(b, now: 0) }),
            ("Chrome CSV", { (b) throws(VaultError) in try ChromeCSVReader.read(b, now: 0) }),
            ("Firefox CSV", { (b) throws(VaultError) in try FirefoxCSVReader.read(b, now: 0) }),
        ]
        for (format, read) in readers {
            do { _ = try read(csv); Issue.record("\(format) accepted") } catch {
                #expect(error.description.contains("not a \(format) export"), "\(error)")
            }
            do { _ = try read([]); Issue.record("\(format) accepted nothing") } catch { #expect(error.description.contains("empty"), "\(error)") }
            #expect(throws: VaultError.self) { try read([0x61, 0xFF, 0x0A]) }
            #expect(throws: VaultError.self) { try read(Array("\"unterminated\n".utf8)) }
        }
        do {
            _ = try BitwardenCSVReader.read(Array("type,name,login_password\nlogin,a,b,extra\n".utf8), now: 0)
            Issue.record("a wide row accepted")
        } catch { #expect(error.description.contains("line 2: 4 columns"), "\(error)") }
        #expect(throws: VaultError.self) { try DashlaneCSVReader.read([], now: 0) }
        #expect(throws: VaultError.self) { try DashlaneCSVReader.read(Array("username,title,password\na,b,c,d\n".utf8), now: 0) }
    }

    // MARK: - Edge cases

    @Test func test_readers_keepNULAndUnknownColumnsAndNeverCrashOnDamage() throws {
        let chrome = try ChromeCSVReader.read(Array("name,url,username,password,note,extra\nn\u{0}x,u,v,p\u{0}q,,more\n".utf8), now: 0)
        #expect(chrome.items[0].title == "n\u{0}x" && chrome.items[0].value == [0x70, 0, 0x71], "the builder judges names; values are bytes")
        #expect(Self.field(chrome.items[0], "extra") == "more", "an unknown column is a field, not dropped")
        #expect(BitwardenCSVReader.customFields("a: 1\n\nb: x: y\ncontinued") .map { "\($0.label)=\(Self.text($0.value))" } == ["a=1\n", "b=x: y\ncontinued"])
        var generator = SplitMix(seed: 4401)
        for name in ["bitwarden.csv", "1password.csv", "lastpass.csv", "chrome.csv", "firefox.csv", "dashlane.csv", "dashlane-headerless.csv"] {
            let original = try Self.fixture(name)
            for _ in 0..<200 {
                var bytes = Array(original.prefix(Int(generator.nextByte()) * original.count / 255 + 1))
                let at = Int(generator.nextByte()) % bytes.count
                bytes[at] = [0x22, 0x2C, 0x0A, 0x00, 0xFF, 0x5C][Int(generator.nextByte()) % 6]
                for format in [InterchangeFormat.bitwardenCSV, .onePasswordCSV, .lastPassCSV, .chromeCSV, .firefoxCSV, .dashlaneCSV] {
                    _ = try? Interchange.readForeign(bytes, format: format, now: 0)
                }
            }
        }
    }
}
