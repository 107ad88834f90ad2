import Foundation
import TestSupport
import Testing

/// `vaultfile audit --hibp` against its peer, `keepassxc-cli analyze --hibp`, on a KeePass database
/// holding the same passwords and one sorted file of a few thousand real-format lines: both report
/// the same breached entries and counts, and the range-folder form answers as the file does.
@Suite struct AuditPeerCLITests {
    static let keepassxc = FileManager.default.isExecutableFile(atPath: "/usr/bin/keepassxc-cli")

    /// Names and passwords: some planted in the list (one reused, one beyond ASCII, one long), some not.
    static let entries: [(name: String, password: String, count: Int?)] = [
        ("alpha", "password1", 2_418_984), ("bravo", "password1", 2_418_984), ("charlie", "Summer2024!", 1_234),
        ("delta", "pässwörd-ünïcode", 7), ("echo", String(repeating: "long-passphrase-", count: 8), 1),
        ("foxtrot", "quilt-ranger-OYSTER-pamphlet-gravy", nil), ("golf", "Xk8#pQ2$mZ7!vR4w", nil), ("hotel", "hunter2", 17_043),
        ("india", "not-listed-at-all-91", nil),
    ]

    /// The KeePass XML of `entries`, each in the root group titled by its name.
    static var keepassXML: String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        let body = entries.enumerated().map { index, entry in
            let uuid = Data((0..<16).map { UInt8($0 == 15 ? index + 1 : 0) }).base64EncodedString()
            return "<Entry><UUID>\(uuid)</UUID><String><Key>Title</Key><Value>\(escaped(entry.name))</Value></String>"
                + "<String><Key>Password</Key><Value>\(escaped(entry.password))</Value></String></Entry>"
        }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <KeePassFile><Meta><Generator>vaultfile tests</Generator></Meta><Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID><Name>Root</Name>
            \(body)
            </Group></Root></KeePassFile>
            """
    }

    @Test(.enabled(if: keepassxc, "keepassxc-cli is absent (apt-get install keepassxc): the comparison with KeePassXC is skipped"))
    func test_audit_reportsTheBreachesKeepassxcAnalyzeReports() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.setEntries(Dictionary(uniqueKeysWithValues: Self.entries.map { ($0.name, $0.password) }))
        let planted = Self.entries.compactMap { entry in entry.count.map { (AuditCLITests.sha1(entry.password), $0) } }
        let lines = PwnedPasswordsFixture.randomLines(4_000) + Dictionary(planted, uniquingKeysWith: { a, _ in a }).map { ($0.key, $0.value) }
        try cli.write("hibp.txt", Array(PwnedPasswordsFixture.sortedFile(lines)))

        // The peer: a KeePass database of the same passwords, analysed against the same file.
        try cli.write("kp.xml", Array(Self.keepassXML.utf8))
        let imported = try cli.run(["import", "-q", "-p", cli.path("kp.xml"), cli.path("kp.kdbx")], stdin: Array("kpw\nkpw\n".utf8),
                                   executable: "/usr/bin/keepassxc-cli")
        try #require(imported.status == 0, "keepassxc-cli import: \(imported.stderr)")
        let analysed = try cli.run(["analyze", "-q", "--hibp", cli.path("hibp.txt"), cli.path("kp.kdbx")], stdin: Array("kpw\n".utf8),
                                   executable: "/usr/bin/keepassxc-cli")
        try #require(analysed.status == 0, "keepassxc-cli analyze: \(analysed.stderr)")
        // "Password for 'alpha' has been leaked 2418984 times!" (or "time!")
        var theirs: [String: Int] = [:]
        for line in analysed.text.split(separator: "\n") where line.hasPrefix("Password for '") {
            let name = line.dropFirst("Password for '".count).prefix { $0 != "'" }
            let count = line.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) }
            theirs[String(name)] = count
        }

        // vaultfile on the same file, and on the range folder of the same lines.
        let prefixes = Set(Self.entries.map { String(AuditCLITests.sha1($0.password).prefix(5)) } + ["00000"])
        try PwnedPasswordsFixture.writeRangeFolder(lines, to: URL(fileURLWithPath: cli.path("ranges")), prefixes: prefixes)
        for list in ["hibp.txt", "ranges"] {
            let result = try cli.run(["audit", "--json", "--only", "breached", "--hibp", cli.path(list)] + cli.unlock())
            #expect(result.status == 8, "\(result.stderr)")
            let objects = try #require(JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]])
            var ours: [String: Int] = [:]
            for object in objects { ours[object["name"] as! String] = (object["breached"] as? [String: Int])?["count"] }
            #expect(ours == theirs, "\(list): vaultfile \(ours), keepassxc-cli \(theirs)")
        }
        let expected = Dictionary(uniqueKeysWithValues: Self.entries.compactMap { entry in entry.count.map { (entry.name, $0) } })
        #expect(theirs == expected, "the peer found what was planted")
    }
}
