import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The readers' working copies of secrets (the CSV scan's row, the JSON strings' escape buffers)
/// leave nothing in freed memory, the one JSON object walk, and the decoder's words for a type
/// (issue 47, "Memory hygiene and code").
@Suite struct InterchangeMemoryTests {
    // MARK: - Freed memory

    /// A CSV of a secret in a quoted cell, then a long cell on the same row (the row buffer grows
    /// while it holds the secret), then a short row (the longer row's bytes lie past its end): once
    /// the scan is over and the test wiped its input, this process's memory holds no copy of it.
    @Test(arguments: [true, false])
    func test_csvScan_leavesNoCopyOfACellInFreedMemory(runs: Bool) throws {
        let secret = ScannedSecret()
        let filler = 40_000
        var input: [UInt8] = []
        input.reserveCapacity(filler + secret.count + 64)
        input += Array("name,value,notes\na,\"".utf8)
        secret.append(to: &input)
        input += Array("\"\"q\",".utf8)
        input += [UInt8](repeating: UInt8(ascii: "y"), count: filler)
        input += Array("\nb,short,c\n".utf8)
        #expect(secret.copiesInMemory() >= 1, "the scan finds the secret while the input holds it")
        var seen = 0
        if runs {
            try CSV.forEachRecord(input) { (record) throws(VaultError) in seen += record.cell(1).count }
        } else {
            try input.withUnsafeBufferPointer { (bytes) throws(VaultError) in
                try CSV.scan(bytes, runs: false) { (record) throws(VaultError) in seen += record.cell(1).count }
            }
        }
        wipe(&input)
        #expect(seen == "value".count + secret.count + 2 + "short".count)
        #expect(secret.copiesInMemory() == 0, "a copy of a cell is left in memory")
    }

    /// The control of the two tests above: a plain array that grows while it holds a secret frees
    /// its first block without a wipe, and the scan finds the secret there (what the CSV scan's row
    /// did before it was a `WipedBuffer`).
    @Test func test_memoryScan_findsASecretLeftInFreedMemory() {
        let secret = ScannedSecret()
        var leaky: [UInt8] = []
        leaky.reserveCapacity(secret.count + 64)
        leaky += [UInt8](repeating: UInt8(ascii: "-"), count: 32)
        secret.append(to: &leaky)
        leaky += [UInt8](repeating: UInt8(ascii: "y"), count: 60_000)  // grows: the first block is freed as it is
        wipe(&leaky)  // the array's own (second) block
        #expect(secret.copiesInMemory() >= 1, "the scan sees memory freed without a wipe")
    }

    /// A JSON string whose escapes come after the secret and make it long (the escape buffer would
    /// grow while holding it), read as bytes and as import bytes: once the caller wiped what it was
    /// handed and the input, nothing is left; so for a string refused half-way (no closing quote).
    @Test func test_jsonString_leavesNoCopyOfAnEscapedValueInFreedMemory() throws {
        let secret = ScannedSecret()
        for reading in 0..<3 {
            var input: [UInt8] = []
            input.reserveCapacity(secret.count + 40_000)
            input.append(UInt8(ascii: "\""))
            secret.append(to: &input)
            for _ in 0..<4_000 { input += Array("\\n\\u00e9a".utf8) }
            if reading < 2 { input.append(UInt8(ascii: "\"")) }
            var position = 0
            switch reading {
            case 0:
                var read = JSONString.readBytes(input, at: &position)
                #expect(read?.count == secret.count + 4_000 * 4)
                if var bytes = read { read = nil; wipe(&bytes) }
            case 1:
                var read = JSONString.readImportBytes(input, at: &position)
                guard case .owned(var bytes)? = read else { Issue.record("an escaped string is handed over as owned bytes"); return }
                #expect(bytes.count == secret.count + 4_000 * 4)
                read = nil
                wipe(&bytes)
            default:
                #expect(JSONString.readBytes(input, at: &position) == nil, "no closing quote")
            }
            wipe(&input)
            #expect(secret.copiesInMemory() == 0, "reading \(reading): a copy of the value is left in memory")
        }
    }

    /// A KeePass XML export whose entry keeps an earlier version with a protected password and a
    /// protected custom attribute, built as read with and without history kept, and with its title
    /// repeated (the plan's two reads before the build): once the caller wiped the history it was
    /// given (`wipeHistory`, what `import` does last), let the entries go and wiped its input, this
    /// process's memory holds no copy of either (the items' wipe left the versions' fields, and
    /// the versions handed over were freed as they were).
    @Test(arguments: [false, true], [false, true])
    func test_keepassHistory_leavesNoCopyOfAnEarlierSecretInFreedMemory(keepsHistory: Bool, repeated: Bool) throws {
        let password = ScannedSecret(), pin = ScannedSecret()
        let pieces = [#"<KeePassFile><Root><Group><Name>R</Name><Entry><String><Key>Title</Key><Value>mail</Value></String>"#
                          + #"<String><Key>Password</Key><Value ProtectInMemory="True">now-1</Value></String><History><Entry>"#
                          + #"<String><Key>Title</Key><Value>mail</Value></String><String><Key>Password</Key><Value ProtectInMemory="True">"#,
                      #"</Value></String><String><Key>PIN</Key><Value ProtectInMemory="True">"#,
                      #"</Value></String><Times><LastModificationTime>2020-01-01T00:00:00Z</LastModificationTime></Times></Entry></History></Entry>"#
                          + (repeated ? #"<Entry><String><Key>Title</Key><Value>mail</Value></String><String><Key>UserName</Key><Value>bob</Value></String></Entry>"# : "")
                          + "</Group></Root></KeePassFile>"]
        var input: [UInt8] = []
        input.reserveCapacity(pieces.reduce(0) { $0 + $1.utf8.count } + password.count + pin.count)
        input += Array(pieces[0].utf8)
        password.append(to: &input)
        input += Array(pieces[1].utf8)
        pin.append(to: &input)
        input += Array(pieces[2].utf8)
        #expect(password.copiesInMemory() >= 1 && pin.copiesInMemory() >= 1, "the scan finds each while the input holds it")
        do {
            let imported = try #require(try Interchange.streamedEntries(input, format: .keepassXML, now: 1,
                                                                        options: ForeignBuildOptions(keepsHistory: keepsHistory)))
            #expect(imported.records?.count == (repeated ? 2 : 1), "built as read, as records")
            if keepsHistory {
                let version = try #require(imported.history?.first?.versions.first)
                #expect(version.entry.value.count == password.count && version.entry.fields["PIN"]?.count == pin.count, "the version kept whole")
                imported.wipeHistory()
            } else {
                #expect(imported.history == nil)
            }
        }
        wipe(&input)
        #expect(password.copiesInMemory() == 0, "a copy of the earlier password is left in memory")
        #expect(pin.copiesInMemory() == 0, "a copy of the earlier version's protected attribute is left in memory")
    }

    /// The buffer behind the CSV row keeps every byte through its growths and forgets them on
    /// `removeAll` (the memory itself is checked by the scans above).
    @Test func test_wipedBuffer_keepsItsBytesAcrossGrowths() {
        let buffer = WipedBuffer(capacity: 16)
        var expected: [UInt8] = []
        for round in 0..<300 {
            let run = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: round % 7)
            run.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
            buffer.append(UInt8(truncatingIfNeeded: round * 3))
            expected += run + [UInt8(truncatingIfNeeded: round * 3)]
        }
        #expect(buffer.withBytes { Array($0) } == expected)
        buffer.removeAll()
        #expect(buffer.count == 0 && buffer.withBytes { $0.isEmpty })
    }

    /// `wipe` zeroes the buffer's whole block at once (what `ForeignNaming.TieHashes` holds the
    /// values' hashes in), not only when it grows or goes.
    @Test func test_wipedBuffer_wipeZeroesItsWholeBlockAtOnce() {
        let buffer = WipedBuffer(capacity: 64)
        let run = [UInt8](repeating: 0xA5, count: 48)
        run.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
        // The block stays the buffer's (48 bytes fit in 64: no growth), so it can be read after the wipe.
        let base = buffer.withBytes { UnsafeRawPointer($0.baseAddress!) }
        #expect(UnsafeRawBufferPointer(start: base, count: 48).allSatisfy { $0 == 0xA5 })
        buffer.wipe()
        #expect(buffer.count == 0)
        #expect(UnsafeRawBufferPointer(start: base, count: 64).allSatisfy { $0 == 0 }, "a byte left after the wipe")
    }

    // MARK: - The one object walk

    /// A reader of its own with its own key reader walks objects and arrays as the import readers
    /// do: members in order, refusals from the key reader or the member, and bad syntax, refused.
    @Test func test_walkObject_readsMembersThroughTheCallersKeyReader() {
        struct Reader: JSONWalker {
            let bytes: [UInt8]
            var position = 0
            /// `{"key": [integers]...}` with each key once, as text.
            mutating func sums() -> [String: Int]? {
                var keys: [String] = [], sums: [String: Int] = [:]
                let complete = walkObject(key: { $0.readKeyOnce(in: &keys) }) { reader, key in
                    var sum = 0
                    let read = reader.walkArray { reader in
                        guard reader.position < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.position]) else { return false }
                        sum += Int(reader.bytes[reader.position] - 0x30)
                        reader.position += 1
                        return true
                    }
                    sums[key] = sum
                    return read
                }
                return complete ? sums : nil
            }
        }
        func sums(_ text: String) -> [String: Int]? {
            var reader = Reader(bytes: Array(text.utf8))
            return reader.sums()
        }
        #expect(sums(#" { "a" : [1, 2] , "b\u0021":[ ], "c":[9]} "#) == ["a": 3, "b!": 0, "c": 9])
        #expect(sums("{}") == [:])
        #expect(sums(#"{"a": [1], "\u0061": [2]}"#) == nil, "a key twice, as text")
        #expect(sums(#"{"a": [x]}"#) == nil, "the member refuses")
        #expect(sums(#"{"a": [1],}"#) == nil, "a trailing comma")
        #expect(sums(#"{"a" [1]}"#) == nil, "no colon")
        #expect(sums(#"{"a": [1]"#) == nil, "no closing brace")
        var ascii = Reader(bytes: Array(#"{"k": 1}"#.utf8))
        let asciiTaken = ascii.walkObject(key: { $0.readASCIIKey() }, member: { reader, _ in reader.takeLiteral("1") })
        #expect(asciiTaken)
        var escaped = Reader(bytes: Array(#"{"\u006b": 1}"#.utf8))
        let escapedTaken = escaped.walkObject(key: { $0.readASCIIKey() }, member: { reader, _ in reader.takeLiteral("1") })
        #expect(!escapedTaken, "an escaped key is not an ASCII one")
    }

    // MARK: - The decoder's words for a type

    /// `jsonKind(of:)` by the type: integers of every width and sets are numbers and arrays (a list
    /// of names missed them), a struct whose name starts with "Array" is an object.
    @Test func test_jsonKind_decidesByTheTypeNotItsName() {
        struct ArrayOfThings: Decodable {}
        struct String2: Decodable {}
        #expect(JSONDocument.jsonKind(of: String.self) == "a string")
        #expect(JSONDocument.jsonKind(of: Bool.self) == "true or false")
        for type in [Int.self, Int8.self, Int16.self, UInt16.self, Int64.self, Double.self, Float.self] as [Any.Type] {
            #expect(JSONDocument.jsonKind(of: type) == "a number", "\(type)")
        }
        #expect(JSONDocument.jsonKind(of: [String].self) == "an array")
        #expect(JSONDocument.jsonKind(of: Set<Int>.self) == "an array")
        #expect(JSONDocument.jsonKind(of: ArrayOfThings.self) == "an object")
        #expect(JSONDocument.jsonKind(of: String2.self) == "an object")
        #expect(JSONDocument.jsonKind(of: [String: String].self) == "an object")
    }
}
