import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// recheck60 R0: an item without a usable title is named after its site, else its username, else
/// `untitled` — each only when cleaning leaves it something. A site or username of only blank or
/// invisible characters (`https://<U+200B>/`) is passed over, so that the item never takes its
/// folder's or the prefix's own name; the plain naming, the plan of a streamed build and the
/// one-read groups agree, and the renaming says what the name was made of (Firefox's too).
@Suite struct ForeignNamingSiteTests {
    private func item(_ title: String = "", folders: [String] = [], user: String? = nil, url: String? = nil, value: String = "pw") -> ForeignItem {
        ForeignBuildText.item(title, folders: folders, user: user, url: url, value: value)
    }

    private static let zw = "\u{200B}"
    /// Hosts that cleaning leaves empty: format characters, bidi marks, a BOM, spaces around them.
    private static let blankHosts = [zw, "\u{200F}\u{200B}", "\u{FEFF}", " \u{200B} ", "\u{2060}\u{202E}"]

    // MARK: - The source of a derived name

    @Test func test_source_passesOverASiteOrUsernameThatCleansToNothing() {
        #expect(ForeignNaming.source(site: "a.example", user: "u") == .site("a.example"))
        #expect(ForeignNaming.source(site: Self.zw, user: "u") == .username("u"))
        #expect(ForeignNaming.source(site: Self.zw, user: "\u{200B}\u{FEFF}") == .nothing)
        #expect(ForeignNaming.source(site: nil, user: " ") == .nothing)
        #expect(ForeignNaming.source(site: nil, user: "") == .nothing)
        #expect(ForeignNaming.source(site: nil, user: nil) == .nothing)
        // A site that cleans to something other than nothing still names the item (`_.`, `-login`).
        #expect(ForeignNaming.source(site: ".", user: "u") == .site("."))
        #expect(ForeignNaming.source(site: Self.zw + "/login", user: "u") == .site(Self.zw + "/login"))
    }

    /// `namesSomething`'s shortcut (a printable ASCII character other than a space) agrees with
    /// the cleaning it stands for, on parts made of the characters at the edges of both.
    @Test func test_namesSomething_agreesWithTheCleaning() {
        let pieces = ["", " ", "\t", "\u{7F}", "\n", "a", "/", ".", "..", "\u{200B}", "\u{FEFF}", "\u{85}", "\u{2028}", "é", "e\u{301}", " \u{301}", "名", "\u{202E}"]
        for first in pieces {
            for second in pieces {
                for third in ["", " ", "\u{200B}", "x"] {
                    let part = first + second + third
                    #expect(ForeignNaming.namesSomething(part) == !ImportedNameCleaner.entryName(fromParts: [part]).isEmpty, "\(part.debugDescription)")
                }
            }
        }
    }

    // MARK: - The plain naming

    @Test func test_names_siteOfOnlyFormatCharactersNeverTakesThePrefixsName() {
        for host in Self.blankHosts {
            let items = [item(url: "https://\(host)/", value: "CH1"), item(user: "bob", url: "https://user@\(host)/", value: "CH2"),
                         item(folders: ["sub"], url: "https://\(host)/", value: "CH3"), item(user: Self.zw, url: "https://\(host)/", value: "CH4")]
            let named = ForeignNaming.names(of: items, prefix: ["imp"])
            #expect(named.named.map(\.name) == ["imp/untitled", "imp/bob", "imp/sub/untitled", "imp/untitled (2)"], "\(host.debugDescription)")
            #expect(named.named.allSatisfy { $0.title == nil }, "an empty title is no title to keep")
            // Every one is listed, with what its name was made of (its site is the host without spaces at its ends).
            let site = host.replacingOccurrences(of: " ", with: "")  // the spaces are at its ends only
            #expect(named.renamings.map(\.madeOf) == [
                "nothing: its site \(site) is only blank or invisible characters, and it has no username",
                "its username bob (its site \(site) is only blank or invisible characters)",
                "nothing: its site \(site) is only blank or invisible characters, and it has no username",
                "nothing: its site \(site) and its username \(Self.zw) are only blank or invisible characters",
            ], "\(host.debugDescription)")
        }
        // Outside a prefix and folders the same: `untitled`, never an empty name.
        #expect(ForeignNaming.names(of: [item(url: "https://\(Self.zw)/")], prefix: []).named.map(\.name) == ["untitled"])
    }

    /// A source without titles (Firefox's) lists an item named after anything but its site.
    @Test func test_names_sourceWithoutTitlesListsAnItemNotNamedAfterItsSite() {
        var items = [item(user: "u", url: "https://f.example/", value: "a"), item(url: "https://\(Self.zw)/", value: "b"), item(user: "v", url: "https://\(Self.zw)/", value: "c")]
        for index in items.indices { items[index].sourceHasNoTitles = true }
        let named = ForeignNaming.names(of: items, prefix: ["imp"])
        #expect(named.named.map(\.name) == ["imp/f.example", "imp/untitled", "imp/v"])
        #expect(named.renamings.map(\.name) == ["imp/untitled", "imp/v"], "the item named after its site is not listed")
    }

    /// Whatever a derived name is made of, it lies strictly under the prefix and its folders.
    @Test func test_names_everyDerivedNameLiesUnderThePrefix() {
        let parts = ["", " ", Self.zw, "\u{FEFF}\u{200F}", ".", "..", "a", "\u{7F}"]
        var items: [ForeignItem] = []
        for host in parts {
            for user in parts {
                for folder in parts { items.append(item(folders: [folder], user: user, url: "https://\(host)/", value: host + user + folder)) }
            }
        }
        for name in ForeignNaming.names(of: items, prefix: ["imp"]).named.map(\.name) {
            #expect(name.hasPrefix("imp/") && name.count > 4 && EntryName.isValid(name), "\(name.debugDescription)")
        }
    }

    // MARK: - Every build path agrees

    /// The streamed build (with and without a plan) and the one-read groups name and list such
    /// items as the plain naming does.
    @Test func test_buildPaths_agreeOnASiteOfOnlyFormatCharacters() throws {
        let items = [item(url: "https://\(Self.zw)/", value: "a"), item(url: "https://\(Self.zw)/", value: "b"),
                     item(user: "bob", url: "https://\(Self.zw)/", value: "c"), item(user: "bob", url: "https://\u{FEFF}/", value: "d")]
        let reference = ForeignBuildText.described { () throws(VaultError) in try plain(items) }
        #expect(reference.contains("untitled (2)") && reference.contains("bob (2)"), "\(reference)")
        for holding in [false, true] {
            let streamed = ForeignBuildText.described { () throws(VaultError) in
                try ForeignBuilder.build(streaming: { sink throws(VaultError) in
                    var source = ForeignImport(format: "test")
                    for var item in items { source.add(&item, to: sink) }
                    return source
                }, capacity: 16, now: 5, options: ForeignBuildOptions(prefix: ["imp"]), holding: holding)
            }
            #expect(streamed == reference, "holding \(holding)")
        }
        let sorted = items.sorted { ForeignNaming.base(of: $0, prefix: ["imp"]).named.name < ForeignNaming.base(of: $1, prefix: ["imp"]).named.name }
        guard case .built(let grouped) = try ForeignBuildText.grouped(sorted, prefix: ["imp"]), let grouped else {
            Issue.record("not built in one read")
            return
        }
        let reference2 = try plain(sorted)
        #expect(ForeignBuildText.described { grouped } == ForeignBuildText.described { reference2 })
        #expect(grouped.renamings.map(\.madeOf) == reference2.renamings.map(\.madeOf))
        #expect(grouped.renamings.count == 4 && grouped.entries.allSatisfy { $0.name.hasPrefix("imp/") })
    }

    /// The build of `items` under `imp/` from every item read first (the plain reference).
    private func plain(_ items: [ForeignItem]) throws(VaultError) -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        return try ForeignBuilder.build(asEntries: source, now: 5, options: ForeignBuildOptions(prefix: ["imp"]))
    }
}
