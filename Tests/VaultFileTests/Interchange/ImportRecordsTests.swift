import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

// MARK: - Imports written as records against imports read as entries

extension InterchangeTests {
    /// What an import gives a user: the names and entries, the renamings, the warnings, or the error.
    private static func described(_ read: () throws(VaultError) -> ImportedEntries) -> (String, ImportedEntries?) {
        do {
            let onDisk = try read()
            // Records in runs (`spilled`, below) are read in memory; put into vaults as they are.
            let imported = try onDisk.inMemory()
            let entries = imported.entries
            let text = "\(entries.map { Array($0.name.utf8) })|\(entries.map(\.entry.value))"
                + "|\(entries.map { $0.entry.fields.sorted { $0.key < $1.key }.map { "\(Array($0.key.utf8))=\($0.value)" } })"
                + "|\(entries.map { [$0.entry.created, $0.entry.modified] })"
                + "|\(imported.renamings.map { "\(Array($0.original.utf8))>\(Array($0.name.utf8)):\($0.reasons.map(\.name))" })"
                + "|\(imported.warnings.map(\.description))|\(imported.count)|\(imported.names.map { Array($0.utf8) })|\(imported.hasNonASCIIName)"
            return (text, onDisk)
        } catch {
            return ("error: \(error.description)", nil)
        }
    }

    /// `read` with its records written as runs on disk, one run per record (`ImportRuns` with a
    /// buffer of 1 byte: every merge of runs meets overlapping runs), in a fresh folder.
    private static func spilled(_ read: () throws(VaultError) -> ImportedEntries) throws(VaultError) -> ImportedEntries {
        guard let folder = try? TemporaryDirectory() else { throw .malformedInput("no temporary folder") }
        defer { folder.remove() }
        return try ImportRuns.$current.withValue(ImportRuns(directory: folder.url.path, bufferLimit: 1)) {
            Result { () throws(VaultError) in try read() }
        }.get()
    }

    /// Reads `bytes` as records written in runs (`spilled`) and checks them against the plain path's
    /// `plain` description and its vaults: the same entries, warnings and errors, and the same vault
    /// once put into each base. Whether the records were in runs.
    private static func checkSpilled(_ bytes: [UInt8], _ format: InterchangeFormat, against plain: String, _ plainImport: ImportedEntries?,
                                     bases: [Vault]) -> Bool {
        let (spilled, spilledImport) = described { () throws(VaultError) in
            try Self.spilled { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 42, asRecords: true) }
        }
        #expect(spilled == plain, "runs: \(format) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        guard let spilledImport, let plainImport else { return false }
        for (index, base) in bases.enumerated() {
            #expect(putInto(base, spilledImport) == putInto(base, plainImport), "runs: \(format) base \(index) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            // With the names the vault holds counted first (`import`'s plan): merged by the seal where it can be.
            var merged = base
            let outcome = Result { () throws(VaultError) -> String in
                try merged.put(contentsOf: spilledImport, clashes: try spilledImport.clashes(in: base), now: 9)
                return "\(try merged.encodedContent())|\(merged.count)"
            }
            let text: String
            switch outcome {
            case .success(let written): text = written
            case .failure(let error): text = "error: \(error.description)"
            }
            #expect(text == putInto(base, plainImport), "runs, merged: \(format) base \(index) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
        return spilledImport.isOnDisk
    }

    /// Puts `imported` into a copy of `base`: the vault's encoded contents, or the error.
    private static func putInto(_ base: Vault, _ imported: ImportedEntries) -> String {
        var vault = base
        do {
            try vault.put(contentsOf: imported, now: 9)
            return "\(try vault.encodedContent())|\(vault.count)"
        } catch {
            return "error: \(error.description)"
        }
    }

    /// The vaults an import goes into: empty, built in memory, decrypted, keeping history, with
    /// entries whose names the documents also use.
    private static func baseVaults() throws -> [Vault] {
        var memory = Vault()
        try memory.put(Entry(value: [1], created: 1, modified: 1), as: "db01", now: 1)
        try memory.put(Entry(value: [2], fields: ["url": [3]], created: 1, modified: 1), as: "a/0", now: 1)
        try memory.put(Entry(value: [], created: 1, modified: 1), as: "zz", now: 1)
        let decoded = try EntryCodec.decode(EntryCodec.encode(memory), history: false)
        var history = Vault(history: HistoryPolicy(versions: 3, byteBudget: 1 << 16, trashLimit: 2))
        try history.put(Entry(value: [4], created: 1, modified: 1), as: "m", now: 1)
        let emptyDecoded = try EntryCodec.decode(EntryCodec.encode(Vault()), history: false)
        // Empty and keeping history (what `init` makes): records in runs go in as they are.
        let emptyHistory = Vault(history: HistoryPolicy(versions: 3, byteBudget: 1 << 16, trashLimit: 2))
        return [Vault(), emptyDecoded, memory, decoded, history, emptyHistory]
    }

    /// A random vaultfile JSON export: ASCII, non-ASCII (both forms), escaped, repeated, dangerous and
    /// invalid names; text, escaped, non-ASCII, empty and base64 values; fields with odd, escaped,
    /// repeated, invalid or too many keys; missing and extreme times; other versions and junk.
    private static func randomNativeJSON(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        var items: [String] = []
        for index in 0..<Int(byte() % 7) {
            var members: [String] = []
            if byte() % 20 != 0 {
                members.append(#""name":"# + pick([#""a/\#(index)""#, #""a/\#(index)""#, #""db01""#, #""db01""#, #""caf\u00e9""#, "\"e\u{301}\"",
                                                   #""a\/b""#, #""path""#, #""ld-preload""#, #""a//b""#, #""""#, #"".""#, #""x\u0041""#, #""名前""#, #""zz""#]))
            }
            switch byte() % 10 {
            case 0: break
            case 1: members.append(#""value_base64":"# + pick([#""AAEC""#, #""!!""#]))
            default: members.append(#""value":"# + pick([#""v""#, #""""#, #""line\nnext \"q\" é""#, #""\ud83d\ude00""#, #""\u0000\u0001""#, #""value-000001-abc""#]))
            }
            switch byte() % 8 {
            case 0, 1: members.append(#""fields":"# + pick(["{}", #"{"username":"u"}"#, #"{"user":"u","url":"h\/t"}"#, #"{"url":"1","b-c":"","a":"é"}"#,
                                                             #"{"bad name":"x"}"#, #"{"user\u006eame":"x"}"#, #"{"é":"x"}"#, #"{"u":"1","u":"2"}"#,
                                                             "{" + (0...VaultLimits.maxFieldsPerEntry).map { "\"f\($0)\":\"\"" }.joined(separator: ",") + "}"]))
            case 2: members.append(#""fields_base64":{"bin":"/w=="}"#)
            default: break
            }
            if byte() % 2 == 0 { members.append(#""created":"# + pick(["0", "-5", "1700000000000", "-9223372036854775808", "9223372036854775807"])) }
            if byte() % 2 == 0 { members.append(#""modified":"# + pick(["7", "9223372036854775807", "-1"])) }
            if byte() % 40 == 0 { members.append(#""name":"again""#) }
            if byte() % 2 == 0 { members.reverse() }
            items.append("{" + members.joined(separator: pick([",", ", "])) + "}")
        }
        let version = pick(["1", "1", "1", "1", "2", "3"])
        var document = #"{"vaultfile_export":"# + version + #","entries":["# + items.joined(separator: ",") + "]}"
        if byte() % 8 == 0 { document = #"{"entries":["# + items.joined(separator: ",") + #"],"vaultfile_export":1}"# }
        if byte() % 30 == 0 { document += " x" }
        return Array(document.utf8)
    }

    /// A random KeePassXC CSV export: the full and the short header, the root group alone and with
    /// subgroups, repeated, cleaned, non-ASCII (both forms), dangerous and empty titles, empty and
    /// quoted cells, times that parse and that do not, rows too wide, and broken CSV.
    private static func randomKeePassXCCSV(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        let full = byte() % 3 != 0
        var lines = [full ? #""Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created""# : "Group,Title,Username,Password,URL,Notes"]
        for _ in 0..<Int(byte() % 8) {
            var cells = [pick(["Root", "Root", "Passwords", "Root/Email", "Work/Sub", "", "é", "Root/e\u{301}"]),
                         pick(["db01", "db01", "db01 (2)", "a/b", " spaced ", "PATH", "café", "e\u{301}", "", ".", "svc-1", "x\u{1}"]),
                         pick(["", "user", "\"q\"\"uote\"", "é"]), pick(["", "p", "\"multi\nline\"", "x,y", "secret-0001"]),
                         pick(["", "https://h"]), pick(["", "note"])]
            if full {
                cells += [pick(["", "otpauth://x"]), "0", pick(["", "2023-11-14T22:13:20Z", "not a time"]), pick(["", "2023-11-14T22:13:20Z", "2024-01-02T03:04:05Z"])]
            }
            if byte() % 20 == 0 { cells.append("extra") }
            lines.append(cells.joined(separator: ","))
        }
        if byte() % 20 == 0 { lines.append("\"open") }
        return Array(lines.joined(separator: byte() % 2 == 0 ? "\n" : "\r\n").utf8)
    }

    /// A random Bitwarden export: logins and notes, other types, folders, titles repeated, escaped,
    /// non-ASCII in both forms, dangerous or invalid, values and custom fields (labels that repeat
    /// or replace a login's field, odd labels, too many), times repeated, invalid or null, URIs,
    /// encrypted exports and junk.
    private static func randomBitwardenJSON(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        let texts = [#""x""#, #""""#, "null", #""p\"q\\""#, "\"é\"", #""\ud83d\ude00""#, #""value-000001-abc""#]
        var items: [String] = []
        for _ in 0..<Int(byte() % 7) {
            var members = [#""type":"# + pick(["1", "1", "1", "2", "3"])]
            if byte() % 8 != 0 {
                members.append(#""name":"# + pick([#""db01""#, #""db01""#, #""a\/b""#, #""caf\u00e9""#, "\"e\u{301}\"", #""PATH""#, #"" x ""#, #""..""#,
                                                   "null", #""""#, #""名前""#, #""svc-1""#]))
            }
            if byte() % 3 == 0 { members.append(#""folderId":"# + pick([#""f1""#, #""f2""#, "null"])) }
            if byte() % 3 == 0 { members.append(#""notes":"# + pick(texts)) }
            if byte() % 4 != 0 { members.append(#""revisionDate":"# + pick([#""2023-11-14T22:13:20.000Z""#, #""2024-01-02T03:04:05Z""#, #""bad""#, "null"])) }
            if byte() % 4 != 0 { members.append(#""creationDate":"# + pick([#""2023-11-14T22:13:20.000Z""#, "null"])) }
            if byte() % 5 != 0 {
                var login: [String] = []
                for key in ["username", "password", "totp"] where byte() % 4 != 0 { login.append("\"\(key)\":" + pick(texts)) }
                if byte() % 3 == 0 { login.append(#""uris":[{"uri":"# + pick(texts) + #"},{"uri":"second"}]"#) }
                members.append(#""login":{"# + login.joined(separator: ",") + "}")
            }
            if byte() % 3 == 0 {
                let count = byte() % 25 == 0 ? VaultLimits.maxFieldsPerEntry + 1 : Int(byte() % 4)
                let fields = (0..<count).map { index in
                    #"{"name":"# + (count > 4 ? "\"f\(index)\"" : pick([#""username""#, #""PIN code""#, #""pin""#, #""pin""#, "null", #""é""#, #""url""#]))
                        + #","value":"# + pick(texts) + "}"
                }
                members.append(#""fields":["# + fields.joined(separator: ",") + "]")
            }
            items.append("{" + members.joined(separator: ",") + "}")
        }
        var top = [#""folders":[{"id":"f1","name":"Work/Sub"},{"id":"f2","name":"é"}]"#, #""items":["# + items.joined(separator: ",") + "]"]
        if byte() % 10 == 0 { top.insert(#""encrypted":true"#, at: 0) }
        return Array(("{" + top.joined(separator: ",") + "}" + (byte() % 30 == 0 ? "]" : "")).utf8)
    }

    /// `Interchange.read` of vaultfile JSON, KeePassXC CSV and Bitwarden JSON, whose entries are
    /// written straight as records where they can be (`ImportRecordWriter`), against the same
    /// reading with every entry an `Entry` (`asRecords: false`), on random documents (above): the
    /// same names, entries, renamings, warnings and errors; and put into empty, built, decrypted and
    /// history-keeping vaults (`Vault.put(contentsOf:)`: the records kept, merged or put one by
    /// one), the same encoded vault or error.
    @Test func test_importRecords_matchTheEntryPath() throws {
        var generator = SplitMix(seed: 131)
        func byte() -> UInt8 { generator.nextByte() }
        let bases = try Self.baseVaults()
        var taken: [InterchangeFormat: Int] = [:], onDisk: [InterchangeFormat: Int] = [:], failed = 0
        for round in 0..<1_800 {
            let format: InterchangeFormat = [.json, .keepassxcCSV, .bitwardenJSON][round % 3]
            let bytes: [UInt8]
            switch format {
            case .json: bytes = Self.randomNativeJSON(byte)
            case .keepassxcCSV: bytes = Self.randomKeePassXCCSV(byte)
            default: bytes = Self.randomBitwardenJSON(byte)
            }
            let (fast, fastImport) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 42, asRecords: true) }
            let (plain, plainImport) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 42, asRecords: false) }
            #expect(fast == plain, "\(format) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            if Self.checkSpilled(bytes, format, against: plain, plainImport, bases: bases) { onDisk[format, default: 0] += 1 }
            guard let fastImport, let plainImport else { failed += 1; continue }
            if fastImport.records != nil { taken[format, default: 0] += 1 }
            // The one builder (keepassxc-csv, bitwarden-json since issue 44) writes records whichever path is asked.
            if format == .json { #expect(plainImport.records == nil) }
            for (index, base) in bases.enumerated() {
                #expect(Self.putInto(base, fastImport) == Self.putInto(base, plainImport), "\(format) base \(index) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        // Since issue 44 keepassxc-csv and bitwarden-json go through the one builder, which writes records.
        #expect(taken[.json, default: 0] > 60 && taken[.keepassxcCSV, default: 0] > 60 && taken[.bitwardenJSON, default: 0] > 60, "\(taken)")
        #expect(onDisk[.json, default: 0] > 3 && onDisk[.keepassxcCSV, default: 0] > 10 && onDisk[.bitwardenJSON, default: 0] > 10, "\(onDisk)")
        #expect(failed > 50, "\(failed) failed")
    }

    /// A random vaultfile CSV file: headers with the columns in any order, field columns valid,
    /// invalid, non-ASCII, repeated or missing; names ASCII, non-ASCII (both forms), repeated,
    /// dangerous or invalid; quoted cells with commas, quotes and line breaks, empty cells, rows too
    /// wide or short, a byte order mark, LF or CR LF, and broken or non-UTF-8 CSV.
    private static func randomNativeCSV(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        let header = pick(["name,value", "name,value,username", "value,name,url,notes", "name,value,username,url",
                           "name,value, username ", "name,value,bad name", "name,value,é", "name,value,username,username",
                           "value,username", "name,value,Username", "\"name\",\"value\",\"totp\""])
        let width = header.split(separator: ",", omittingEmptySubsequences: false).count
        var lines = [header]
        for _ in 0..<Int(byte() % 9) {
            var cells = (0..<width).map { _ in pick(["", "v", "secret-0001", "\"x,y\"", "\"q\"\"uote\"", "\"multi\nline\"", "é", " spaced "]) }
            if let nameIndex = header.split(separator: ",", omittingEmptySubsequences: false).firstIndex(where: { $0.contains("name") && !$0.contains(" ") && !$0.contains("user") }) {
                cells[nameIndex] = pick(["db01", "db01", "a/0", "zz", "m", "PATH", "LD_PRELOAD", "café", "e\u{301}", "", ".", "a//b", "x\u{1}",
                                         "svc-\(byte())", "svc-\(byte())", "\"a,b\"", "名前"])
            }
            if byte() % 25 == 0 { cells.append("extra") }
            if byte() % 25 == 0, !cells.isEmpty { cells.removeLast() }
            lines.append(cells.joined(separator: ","))
        }
        if byte() % 20 == 0 { lines.append("\"open") }
        var bytes = Array(lines.joined(separator: byte() % 2 == 0 ? "\n" : "\r\n").utf8)
        if byte() % 15 == 0 { bytes = [0xEF, 0xBB, 0xBF] + bytes }
        if byte() % 30 == 0 { bytes.append(0xFF) }
        return bytes
    }

    /// vaultfile CSV read as records and as entries, on random files (above): the same names,
    /// entries, warnings and errors, and the same vault or error once put into each kind of vault.
    @Test func test_importRecords_csvMatchesTheEntryPath() throws {
        try Self.expectRecordsMatchTheEntryPath(.csv, seed: 137, random: Self.randomNativeCSV, atLeast: (taken: 60, onDisk: 10, failed: 50))
    }

    /// `format` read as records and as entries, on 600 random files of `random`: the same names,
    /// entries, warnings and errors, and the same vault or error once put into each kind of vault;
    /// more than `atLeast` of them taken as records, written as runs, and failed.
    private static func expectRecordsMatchTheEntryPath(_ format: InterchangeFormat, seed: UInt64, random: (() -> UInt8) -> [UInt8],
                                                       atLeast: (taken: Int, onDisk: Int, failed: Int)) throws {
        var generator = SplitMix(seed: seed)
        func byte() -> UInt8 { generator.nextByte() }
        let bases = try Self.baseVaults()
        var taken = 0, onDisk = 0, failed = 0
        for _ in 0..<600 {
            let bytes = random(byte)
            let (fast, fastImport) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 42, asRecords: true) }
            let (plain, plainImport) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 42, asRecords: false) }
            #expect(fast == plain, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            if Self.checkSpilled(bytes, format, against: plain, plainImport, bases: bases) { onDisk += 1 }
            guard let fastImport, let plainImport else { failed += 1; continue }
            if fastImport.records != nil { taken += 1 }
            #expect(plainImport.records == nil)
            for (index, base) in bases.enumerated() {
                #expect(Self.putInto(base, fastImport) == Self.putInto(base, plainImport), "base \(index) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        #expect(taken > atLeast.taken, "\(taken) taken as records")
        #expect(onDisk > atLeast.onDisk, "\(onDisk) written as runs")
        #expect(failed > atLeast.failed, "\(failed) failed")
    }

    /// A random dotenv file: plain, exported, quoted (both kinds, escapes, several lines), commented
    /// and blank lines; repeated, dangerous, non-ASCII and invalid variables; junk and bad UTF-8.
    private static func randomDotEnv(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        var lines: [String] = []
        for _ in 0..<Int(byte() % 9) {
            let key = byte() % 4 != 0 ? "SVC_\(byte())" : pick(["DB01", "DB01", "zz", "PATH", "LD_PRELOAD", "café", "e\u{301}", ".", "..",
                                                                "a-b", "x.y", "名前", "bad key", ""])
            let value = byte() % 3 != 0 ? pick(["", "v", "secret-0001", "\"a\\tb\""]) : pick(["", "v", "secret-0001", "'single # x'", "\"dq \\n \\\" \\$x\"", "\"multi\nline\"", "é", " spaced  # c",
                              "'open", "\"open", "\"x\" trailing", "a#b"])
            lines.append(pick(["", "export ", "  "]) + key + pick(["=", " = "]) + value)
            if byte() % 6 == 0 { lines.append(pick(["# comment", "", "   ", "# junk", "junk"])) }
        }
        var bytes = Array(lines.joined(separator: byte() % 2 == 0 ? "\n" : "\r\n").utf8)
        if byte() % 15 == 0 { bytes = [0xEF, 0xBB, 0xBF] + bytes }
        if byte() % 30 == 0 { bytes.append(0xFF) }
        return bytes
    }

    /// dotenv read as records and as entries, on random files (above): the same names, entries,
    /// warnings and errors, and the same vault or error once put into each kind of vault.
    @Test func test_importRecords_dotenvMatchesTheEntryPath() throws {
        try Self.expectRecordsMatchTheEntryPath(.dotenv, seed: 4417, random: Self.randomDotEnv, atLeast: (taken: 60, onDisk: 40, failed: 30))
    }

    /// The fixtures of the two foreign formats read as records and as entries: the same entries.
    @Test func test_importRecords_fixturesMatchTheEntryPath() throws {
        for (file, format) in [("interchange/bitwarden.json", InterchangeFormat.bitwardenJSON), ("interchange/keepassxc.csv", .keepassxcCSV)] {
            let url = ProjectPaths.fixtures.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            let bytes = Array(try Data(contentsOf: url))
            let (fast, _) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 1, asRecords: true) }
            let (plain, _) = Self.described { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 1, asRecords: false) }
            #expect(fast == plain, "\(file)")
        }
    }

    /// The writer's buffer grows (the old one wiped) past its first size: every record written is
    /// decoded back to its entry, fields in name order, binary and empty values, extreme times.
    @Test func test_importRecordWriter_growsAndKeepsEveryRecord() throws {
        var generator = SplitMix(seed: 137)
        var writer = try #require(ImportRecordWriter(capacity: 1))
        var expected: [(String, Entry)] = []
        let times: [Int64] = [.min, -1, 0, 1_700_000_000_000, .max]
        var fields: [ImportField] = []
        for index in 0..<600 {
            let name = "n/\(index)"
            let value = (0..<Int(generator.nextByte())).map { _ in generator.nextByte() }
            let fieldNames: [StaticString] = ["url", "username", "b", "totp"]
            fields = fieldNames.prefix(Int(generator.nextByte() % 5)).map { ImportField(name: .literal($0), value: .owned([generator.nextByte(), 0xFF])) }
            let entryFields = Dictionary(uniqueKeysWithValues: fields.map { field in
                (field.name.string(in: UnsafeRawBufferPointer(start: nil, count: 0)), field.value.array(in: UnsafeRawBufferPointer(start: nil, count: 0)))
            })
            let created = times[index % times.count], modified = times[(index / 5) % times.count]
            let added = [UInt8]().withUnsafeBytes { input in
                writer.add(name: .string(name), created: created, modified: modified, value: .owned(value), fields: &fields, in: input)
            }
            #expect(added)
            expected.append((name, Entry(value: value, fields: entryFields, created: created, modified: modified)))
        }
        // Declined: a non-ASCII name, an invalid one, a field twice, an invalid field name.
        for (name, fieldNames) in [("é", [StaticString]()), ("a//b", []), ("x", ["u", "u"]), ("y", ["bad name"])] {
            fields = fieldNames.map { ImportField(name: .literal($0), value: .owned([1])) }
            #expect(![UInt8]().withUnsafeBytes { writer.add(name: .string(name), created: 0, modified: 0, value: .owned([]), fields: &fields, in: $0) }, "\(name)")
        }
        let records = try #require(try writer.records().inMemory)
        #expect(records.count == expected.count)
        for (index, (name, entry)) in expected.enumerated() {
            #expect(String(decoding: records.name(at: index), as: UTF8.self) == name)
            #expect(records.entry(at: index) == entry, "\(index)")
        }
        // The records are what the encoder writes for the same entries.
        var vault = Vault()
        try vault.putOneByOne(expected.map { (name: $0.0, entry: $0.1) }, now: 0)
        let encoded = try vault.encodedContent()
        let imported = try ImportedEntries(records: records, renamings: [])
        var fromRecords = Vault()
        try fromRecords.put(contentsOf: imported, now: 0)
        #expect(try fromRecords.encodedContent() == encoded)
    }
}
