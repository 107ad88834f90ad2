import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

// MARK: - The bulk put against put one by one

extension VaultModelTests {
    /// `put(contentsOf:)` (sorted names merged with the stored records into one new buffer) against
    /// `putOneByOne`: into vaults built in memory and decrypted ones, with and without history, with
    /// pending edits and removals, names that exist already, repeated names, two spellings of "é",
    /// invalid names and fields, binary and empty values, extreme times. Same error, same vault,
    /// same encoded contents.
    @Test func test_putContentsOf_matchesPutOneByOne() throws {
        var generator = SplitMix(seed: 41)
        func byte() -> UInt8 { generator.nextByte() }
        let pool = ["a", "b", "app/x", "app/y", "z/last", "é", "e\u{301}", "名前/1", "m", "svc/01", "svc/10", "svc/2",
                    "bad//name", "./x", "", "tab\tname", "\u{202E}x"]
        let fieldNames = ["user", "url", "b-c", "x.y", "bad name", "", String(repeating: "f", count: 65)]
        let times: [Int64] = [.min, -1, 0, 1, 1_700_000_000_000, .max]
        func entry() -> Entry {
            let value = (0..<Int(byte() % 9)).map { _ in byte() }
            var fields: [String: [UInt8]] = [:]
            for _ in 0..<Int(byte() % 4) { fields[fieldNames[Int(byte()) % (byte() % 8 == 0 ? fieldNames.count : 4)]] = [byte(), 0xFF] }
            if byte() == 0 { for index in 0...VaultLimits.maxFieldsPerEntry { fields["f\(index)"] = [] } }
            return Entry(value: value, fields: fields, created: times[Int(byte()) % times.count], modified: times[Int(byte()) % times.count])
        }
        func name() -> String { byte() % 6 == 0 ? pool[Int(byte()) % pool.count] : "r/\(byte() % 40)" }
        var fastPaths = 0
        for round in 0..<400 {
            let history = round % 3 == 0 ? HistoryPolicy(versions: 3, byteBudget: 1 << 16, trashLimit: 2) : nil
            var base = Vault(history: history)
            for _ in 0..<Int(byte() % 12) { try? base.put(entry(), as: name(), now: 1) }
            if round % 2 == 0 {
                base = try EntryCodec.decode(EntryCodec.encode(base), history: history != nil)
                try base.checkHistory()
            }
            if byte() % 3 == 0 { try? base.setValue([byte()], for: name(), now: 2) }
            if byte() % 3 == 0 { _ = try? base.remove(name(), now: 2) }
            var entries: [(name: String, entry: Entry)] = []
            for _ in 0..<Int(byte() % 14) { entries.append((name(), entry())) }
            if byte() % 4 == 0 { entries = entries.filter { EntryName.isValid($0.name) } }
            var fast = base, plain = base
            var fastError: String?, plainError: String?
            do { try fast.put(contentsOf: entries, now: 7) } catch { fastError = error.description }
            do { try plain.putOneByOne(entries, now: 7) } catch { plainError = error.description }
            #expect(fastError == plainError, "round \(round)")
            #expect(fast == plain, "round \(round)")
            #expect(fast.count == plain.count && fast.names == plain.names, "round \(round)")
            if fastError == nil {
                #expect(try fast.encodedContent() == plain.encodedContent(), "round \(round)")
                // The import's checked names give the same result again.
                if let imported = try? ImportedEntries(entries, renamings: []), imported.entries.map({ Array($0.name.utf8) }) == entries.map({ Array($0.name.utf8) }) {
                    var again = base
                    try again.put(contentsOf: imported, now: 7)
                    #expect(again == plain, "round \(round)")
                    fastPaths += 1
                }
            }
        }
        #expect(fastPaths > 100)
    }

    /// The importers' fast check of an entry against `Vault.validate`, the checks of `put`.
    @Test func test_isValidPut_agreesWithValidate() {
        var generator = SplitMix(seed: 43)
        let names = ["a", "a/b", "", "/a", "a/", "a//b", ".", "a/..", "é", "e\u{301}", "a\u{85}b", "x\u{7F}", String(repeating: "n", count: 1025)]
        let fields = ["user", "", "a b", "é", "x.y-z_1", String(repeating: "f", count: 64), String(repeating: "f", count: 65)]
        for round in 0..<2_000 {
            let name = names[Int(generator.nextByte()) % names.count]
            var entryFields: [String: [UInt8]] = [:]
            for _ in 0..<Int(generator.nextByte() % 3) { entryFields[fields[Int(generator.nextByte()) % fields.count]] = [1] }
            if round % 97 == 0 { for index in 0...VaultLimits.maxFieldsPerEntry { entryFields["f\(index)"] = [] } }
            let entry = Entry(value: [], fields: entryFields, created: 0, modified: 0)
            let fast = Array(name.utf8).withUnsafeBytes { Vault.isValidPut(entry, name: $0) }
            #expect(fast == ((try? Vault.validate(entry, as: name)) != nil), "\(name) \(entryFields.keys.sorted())")
        }
    }
}

// MARK: - Import checks and parsers against their references

extension InterchangeTests {
    /// `ImportedEntries`' sorted check against the scratch vault of `init(checkingOneByOne:)`:
    /// repeated names (the first repeat in file order), NFC and NFD spellings, invalid names and
    /// fields before and after a repeat, dangerous variables; same entries, renamings, warnings, errors.
    @Test func test_importedEntries_matchTheOneByOneCheck() {
        var generator = SplitMix(seed: 47)
        func byte() -> UInt8 { generator.nextByte() }
        let pool = ["a", "b", "é", "e\u{301}", "café", "cafe\u{301}", "ld/preload", "path", "bash-env", "9lives",
                    "bad//x", "", "svc/1", "svc/2", "z", "名前", "vaultfile-password"]
        var succeeded = 0
        for round in 0..<1_500 {
            var parsed: [(String, Entry)] = []
            for _ in 0..<Int(byte() % 9) {
                let name = byte() % 2 == 0 ? pool[Int(byte()) % pool.count] : "n\(byte() % 30)"
                let fields: [String: [UInt8]] = byte() % 9 == 0 ? ["bad field": [1]] : (byte() % 2 == 0 ? ["user": [byte()]] : [:])
                parsed.append((name, Entry(value: [byte()], fields: fields, created: Int64(round), modified: 0)))
            }
            let renamings = round % 5 == 0 ? [ImportRenaming(original: "x/y", name: "é", reasons: [.cleaned])] : []
            var fastError: String?, plainError: String?
            var fast: ImportedEntries?, plain: ImportedEntries?
            do { fast = try ImportedEntries(parsed, renamings: renamings) } catch { fastError = error.description }
            do { plain = try ImportedEntries(checkingOneByOne: parsed, renamings: renamings) } catch { plainError = error.description }
            #expect(fastError == plainError, "round \(round)")
            guard let fast, let plain else { continue }
            succeeded += 1
            #expect(fast.entries.map { Array($0.name.utf8) } == plain.entries.map { Array($0.name.utf8) })
            #expect(fast.entries.map(\.entry) == plain.entries.map(\.entry))
            #expect(fast.renamings.map { [$0.original, $0.name] + $0.reasons.map(\.name) } == plain.renamings.map { [$0.original, $0.name] + $0.reasons.map(\.name) })
            #expect(fast.warnings == plain.warnings)
        }
        #expect(succeeded > 200)
    }

    /// The variable written on the stack and compared by bytes against building it and looking it up;
    /// and `variable(for:)` against the byte-by-byte mapping it had.
    @Test func test_isDangerous_agreesWithContains() {
        var names = DangerousEnvironmentNames.names.flatMap { [$0, $0.lowercased(), $0.lowercased().replacingOccurrences(of: "_", with: "-"), $0 + "X", "a/" + $0] }
        names += ["ld/preload", "ld-x", "LD_", "ld", "9lives", "vaultfile/password", "git-config-x", "lua.init.5.4", "ünï", "", "é/path", "path/é", "p\u{301}ath", "_java_options"]
        var generator = SplitMix(seed: 53)
        let alphabet = Array("ldpathLDPATH_-/.9é ".unicodeScalars)
        for _ in 0..<3_000 {
            var name = String.UnicodeScalarView()
            for _ in 0..<Int(generator.nextByte() % 10) { name.append(alphabet[Int(generator.nextByte()) % alphabet.count]) }
            names.append(String(name))
        }
        for name in names {
            #expect(DangerousEnvironmentNames.isDangerous(entryName: name) == DangerousEnvironmentNames.contains(EnvironmentNames.variable(for: name)), "\(name)")
            var reference: [UInt8] = []
            for byte in name.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): reference.append(byte - 32)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): reference.append(byte)
                case 0x80...0xBF: continue
                default: reference.append(UInt8(ascii: "_"))
                }
            }
            if let first = reference.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) { reference.insert(UInt8(ascii: "_"), at: 0) }
            #expect(Array(EnvironmentNames.variable(for: name).utf8) == reference, "\(name)")
        }
    }

    /// Trimming ASCII by bytes against trimming by characters, on spaces, tabs, CR LF, combining
    /// marks and a prepended mark beside them.
    @Test func test_trimmed_agreesWithTheCharacterReference() {
        var generator = SplitMix(seed: 59)
        let alphabet = [" ", "\t", "a", "\u{301}", "\u{600}", "é", "\r", "\n", "\r\n", "x", "."]
        for _ in 0..<5_000 {
            let text = (0..<Int(generator.nextByte() % 7)).map { _ in alphabet[Int(generator.nextByte()) % alphabet.count] }.joined()
            #expect(Array(text.trimmed.utf8) == Array(text.trimmedByCharacters.utf8), "\(Array(text.unicodeScalars))")
            #expect(Array(text[...].trimmed.utf8) == Array(text.trimmedByCharacters.utf8))
        }
    }

    /// Names and field labels of other tools cleaned by bytes when ASCII against the walk over scalars.
    @Test func test_entryName_asciiPartsMatchTheScalarWalk() {
        var generator = SplitMix(seed: 61)
        let alphabet = ["a", "/", "\u{1}", "\u{7F}", " ", ".", "é", "\u{85}", "\t", "-", "Z", "_"]
        func text(_ length: Int) -> String { (0..<length).map { _ in alphabet[Int(generator.nextByte()) % alphabet.count] }.joined() }
        for _ in 0..<5_000 {
            let parts = (0..<Int(generator.nextByte() % 4)).map { _ in text(Int(generator.nextByte() % 5)) }
            let reference = parts.map(ImportedNameCleaner.cleanedByScalars).filter { !$0.isEmpty }.joined(separator: "/")
            #expect(Array(ImportedNameCleaner.entryName(fromParts: parts).utf8) == Array(reference.utf8), "\(parts)")
            let label = text(Int(generator.nextByte() % 6)) + (generator.nextByte() % 9 == 0 ? String(repeating: "x", count: 64) : "")
            #expect(ImportedNameCleaner.fieldName(fromLabel: label) == ImportedNameCleaner.fieldNameByScalars(fromLabel: label), "\(label)")
        }
    }

    /// CSV records with runs copied whole against the byte-by-byte walk: quotes, doubled quotes,
    /// quotes inside unquoted fields, CR, LF, CRLF, multi-byte characters, a byte-order mark.
    @Test func test_csvRecords_runsMatchTheByteWalk() {
        var generator = SplitMix(seed: 67)
        let alphabet = [",", "\"", "\r", "\n", "ab", "c", "é", " ", "\"\""]
        for round in 0..<5_000 {
            var text = (0..<Int(generator.nextByte() % 16)).map { _ in alphabet[Int(generator.nextByte()) % alphabet.count] }.joined()
            if round % 10 == 0 { text = "\u{FEFF}" + text }
            let bytes = Array(text.utf8)
            func outcome(_ runs: Bool) -> String {
                do {
                    var records: [String] = []
                    try bytes.withUnsafeBufferPointer { (buffer) throws(VaultError) in
                        try CSV.scan(buffer, runs: runs) { records.append("\($0.line):\($0.strings)") }
                    }
                    return records.joined(separator: "|")
                } catch {
                    return "error: \(error.description)"
                }
            }
            #expect(outcome(true) == outcome(false), "\(text.debugDescription)")
        }
    }

    /// The word-at-a-time scan of JSON strings against the byte-by-byte scan: quotes, backslashes,
    /// control characters, non-ASCII and invalid bytes at every offset of a run.
    @Test func test_jsonString_wordScanMatchesTheByteScan() {
        var generator = SplitMix(seed: 71)
        let pieces: [[UInt8]] = [Array("abcdefg".utf8), [0x22], [0x5C, 0x6E], [0x5C, 0x75, 0x30, 0x30, 0x65, 0x39], [0x01], [0x1F], [0x7F],
                                 Array("é".utf8), [0xFF], [0xC3], Array("😀".utf8), [0x20], [0x5C]]
        for _ in 0..<6_000 {
            var bytes: [UInt8] = [0x22]
            for _ in 0..<Int(generator.nextByte() % 8) { bytes += pieces[Int(generator.nextByte()) % pieces.count] }
            if generator.nextByte() % 4 != 0 { bytes.append(0x22) }
            var wordPosition = 0, bytePosition = 0
            let word = JSONString.read(bytes, at: &wordPosition, wordAtATime: true)
            let plain = JSONString.read(bytes, at: &bytePosition, wordAtATime: false)
            #expect(word.map { Array($0.utf8) } == plain.map { Array($0.utf8) }, "\(bytes)")
            if word != nil { #expect(wordPosition == bytePosition) }
        }
    }

    /// Bitwarden exports read directly against the duplicate-key scan and `JSONDecoder`: whenever
    /// the reader takes a document, the decoder reads the same export from it. Members out of the
    /// schema (nested, null, numbers, booleans), nulls for optionals, repeated keys, a fractional
    /// or negative-zero type, missing required members, escapes, whitespace.
    @Test func test_bitwardenReader_readsWhatTheDecoderReadsOrDeclines() throws {
        var generator = SplitMix(seed: 73)
        func byte() -> UInt8 { generator.nextByte() }
        func pick<T>(_ options: [T]) -> T { options[Int(byte()) % options.count] }
        let strings = [#""x""#, #""caf\u00e9 \"q\" \\ \/""#, #""line\nnext""#, "null", #""""#, #""2023-11-14T22:13:20.000Z""#, "1", "true"]
        let unknown = ["0", "-3", "1.5", "1e2", "true", "false", "null", #""s""#, "{}", "[]", #"{"a":[1,{"b":null}]}"#, #"[1,"x",[true]]"#,
                       #"{"a":1,"a":2}"#, "-0", "01"]
        func member(_ key: String, _ value: String) -> String { "\"\(key)\"" + pick([":", " : ", ":\n "]) + value }
        func object(_ members: [String]) -> String { "{" + members.shuffledBy(&generator).joined(separator: pick([",", ", ", ",\n"])) + "}" }
        var taken = 0, documents = 0
        for _ in 0..<1_500 {
            var items: [String] = []
            for _ in 0..<Int(byte() % 4) {
                var members: [String] = []
                if byte() % 8 != 0 { members.append(member("type", pick(["1", "1", "2", "3", "4", "9", "1.0", "-0", "\"1\"", "null"]))) }
                for key in ["name", "folderId", "notes", "revisionDate", "creationDate"] where byte() % 2 == 0 { members.append(member(key, pick(strings))) }
                if byte() % 2 == 0 {
                    var login: [String] = []
                    for key in ["username", "password", "totp"] where byte() % 2 == 0 { login.append(member(key, pick(strings))) }
                    if byte() % 3 == 0 { login.append(member("uris", pick(["null", "[]", "[" + object([member("uri", pick(strings)), member("match", "null")]) + "]"]))) }
                    if byte() % 5 == 0 { login.append(member("passwordRevisionDate", pick(unknown))) }
                    members.append(member("login", byte() % 6 == 0 ? "null" : object(login)))
                }
                if byte() % 4 == 0 { members.append(member(pick(["card", "identity"]), pick(["null", "{}", object([member("number", pick(strings)), member("brand", pick(strings))])]))) }
                if byte() % 5 == 0 { members.append(member("sshKey", pick(["null", "{}", object(["privateKey", "publicKey", "keyFingerprint"].map { member($0, pick(strings)) })]))) }
                if byte() % 4 == 0 { members.append(member("fields", "[" + object([member("name", pick(strings)), member("value", pick(strings)), member("type", "0")]) + "]")) }
                for _ in 0..<Int(byte() % 3) { members.append(member(pick(["id", "favorite", "reprompt", "collectionIds", "name"]), pick(unknown))) }
                items.append(object(members))
            }
            var top: [String] = []
            if byte() % 2 == 0 { top.append(member("encrypted", pick(["false", "true", "null", "0"]))) }
            if byte() % 2 == 0 {
                let folder = object([member("id", pick([#""f1""#, "null", "2"])), member("name", pick([#""Work/Sub""#, #""""#]))])
                top.append(member("folders", pick(["[]", "null", "[" + folder + "]"])))
            }
            top.append(member("items", "[" + items.joined(separator: ",") + "]"))
            if byte() % 4 == 0 { top.append(member("collections", pick(unknown))) }
            let bytes = Array((pick(["", " ", "\n"]) + object(top) + pick(["", "\n", " x"])).utf8)
            documents += 1
            var decoded = try? JSONDocument.decode(BitwardenJSON.Export.self, from: bytes, what: "a test")
            // The keys the decoder skips, found by the scan of their own (`BitwardenJSON.unknownKeys(of:)`).
            if let scanned = BitwardenJSON.unknownKeys(of: bytes), let count = decoded?.items?.count, scanned.count == count {
                for index in 0..<count { decoded!.items![index].unknownKeys = scanned[index].isEmpty ? nil : scanned[index] }
            }
            if let read = BitwardenJSONReader.export(bytes) {
                taken += 1
                #expect(read == decoded, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(taken > documents / 10, "\(taken) of \(documents) taken")
        let fixture = try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json"))
        // A real export (ids, nulls, nested members the schema skips) is read directly.
        let read = try #require(BitwardenJSONReader.export(Array(fixture)))
        #expect(read == (try JSONDocument.decode(BitwardenJSON.Export.self, from: Array(fixture), what: "a test")))
    }
}

private extension Array {
    /// The elements in an order drawn from `generator`.
    func shuffledBy(_ generator: inout SplitMix) -> [Element] {
        var copy = self
        for index in copy.indices.dropLast() {
            let other = index + Int(generator.nextByte()) % (copy.count - index)
            copy.swapAt(index, other)
        }
        return copy
    }
}

// MARK: - CSV importers row by row against every record first

/// What vaultfile's CSV made of a file: names and entries, or the error. (At file scope: a type
/// declared in the test's loop made the compiler call the local function's `catch` unreachable.)
private struct NativeCSVOutcome: Equatable {
    var names: [[UInt8]] = [], entries: [Entry] = [], error: String?
}

extension InterchangeTests {
    /// vaultfile CSV read row by row (`CSV.forEachRecord`, cells as bytes) against
    /// the same rules over every record read first as strings: headers with and without the needed
    /// columns, rows too narrow or too wide, invalid names, repeated and cleaned titles, times that
    /// parse and that do not, quoted cells with commas, quotes and line ends, and problems of the
    /// CSV itself after a bad row (which must still win). Same entries, renamings and errors.
    @Test func test_csvParsers_rowByRowMatchTheRecordsFirst() {
        var generator = SplitMix(seed: 79)
        func byte() -> UInt8 { generator.nextByte() }
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        let cells = ["a", "", "x,y", "\"q\"\"uote\"", "\"multi\nline\"", "é", "e\u{301}", "a//b", "Root", "Root/Email", "Passwords/x",
                     "2023-11-14T22:13:20Z", "not a time", "svc/1", ".", "t/1", " spaced ", "\"\""]
        let nativeHeaders = ["name,value,username", "Name , VALUE,user,url", "value,name", "name,x", ""]
        var parsedSome = 0
        // KeePassXC's CSV had a row-by-row path too; since issue 44 it goes through the one builder.
        for _ in 0..<1_200 {
            let header = pick(nativeHeaders)
            let width = header.isEmpty ? 2 : header.split(separator: ",").count
            var lines = [header]
            for _ in 0..<Int(byte() % 7) {
                let columns = byte() % 10 == 0 ? width + 1 : width
                lines.append((0..<columns).map { _ in pick(cells) }.joined(separator: ","))
                if byte() % 12 == 0 { lines.append("") }
            }
            if byte() % 15 == 0 { lines.append(pick(["a\"b,c", "\"open"])) }
            let bytes = Array(lines.joined(separator: byte() % 2 == 0 ? "\n" : "\r\n").utf8)
            // vaultfile's CSV renames nothing (its names are checked as given): names and entries.
            func outcome(_ rowByRow: Bool) -> NativeCSVOutcome {
                do {
                    let entries = rowByRow ? try NativeCSV.parse(bytes, now: 5) : try NativeCSV.parseReference(bytes, now: 5)
                    return NativeCSVOutcome(names: entries.map { Array($0.0.utf8) }, entries: entries.map(\.1))
                } catch {
                    return NativeCSVOutcome(error: error.description)
                }
            }
            let reference = outcome(false)
            if reference.error == nil { parsedSome += 1 }
            #expect(outcome(true) == reference, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
        #expect(parsedSome > 100)
    }
}

// MARK: - JSON items read as entries against the document path

extension InterchangeTests {
    /// `NativeJSONReader.items` (an item with a text value and text fields taken as its entry) and
    /// `NativeJSON.parse(version:items:)` against the document through the scan and `JSONDecoder`
    /// and `NativeJSON.parse(_:)`: text and base64 values and fields, a missing value, both kinds of
    /// value, a field given in both maps, missing and partial times, escapes, versions 1 and 3.
    @Test func test_nativeJSONItems_matchTheDocumentPath() throws {
        var generator = SplitMix(seed: 83)
        func byte() -> UInt8 { generator.nextByte() }
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        var compared = 0
        for _ in 0..<1_500 {
            var items: [String] = []
            for index in 0..<Int(byte() % 5) {
                var members = [#""name":"# + pick([#""a/\#(index)""#, #""caf\u00e9/\#(index)""#, #""e\u0301""#])]
                switch byte() % 6 {
                case 0: break
                case 1: members.append(#""value_base64":"# + pick([#""AAEC""#, #""!!""#]))
                case 2: members += [#""value":"x""#, #""value_base64":"AA==""#]
                default: members.append(#""value":"# + pick([#""v""#, #""""#, #""line\nnext \"q\" é""#, #""\ud83d\ude00""#]))
                }
                if byte() % 2 == 0 { members.append(#""fields":"# + pick(["{}", #"{"user":"u","url":"h\/t"}"#])) }
                if byte() % 4 == 0 { members.append(#""fields_base64":"# + pick(["{}", #"{"bin":"/w=="}"#, #"{"user":"AA=="}"#])) }
                if byte() % 2 == 0 { members.append(#""created":"# + pick(["0", "-5", "1700000000000"])) }
                if byte() % 2 == 0 { members.append(#""modified":"# + pick(["7", "9223372036854775807"])) }
                items.append("{" + members.joined(separator: ",") + "}")
            }
            let version = pick(["1", "1", "1", "3"])
            let bytes = Array((#"{"vaultfile_export":"# + version + #","entries":["# + items.joined(separator: ",") + "]}").utf8)
            let (readVersion, read) = try #require(NativeJSONReader.items(bytes))
            func outcome(_ body: () throws(VaultError) -> [(String, Entry)]) -> String {
                do {
                    let entries = try body()
                    return "\(entries.map { Array($0.0.utf8) })|\(entries.map(\.1.value))|\(entries.map { $0.1.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } })|\(entries.map { [$0.1.created, $0.1.modified] })"
                } catch {
                    return "error: \(error.description)"
                }
            }
            let direct = outcome { () throws(VaultError) in try NativeJSON.parse(version: readVersion, items: read) }
            let plain = outcome { () throws(VaultError) in try NativeJSON.parse(try JSONDocument.decode(NativeJSON.Document.self, from: bytes, what: "a vaultfile JSON export")) }
            #expect(direct == plain, "\(String(decoding: bytes, as: UTF8.self))")
            compared += 1
        }
        #expect(compared == 1_500)
    }
}
