import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

// MARK: - Other tools' exports: fast paths against their references

extension InterchangeTests {
    /// `Timestamps.Cache` against `Timestamps.parse(utf8:)` on runs of times that repeat, change by
    /// one byte, grow past 32 bytes, or are no time at all.
    @Test func test_timestampCache_agreesWithParse() {
        var generator = SplitMix(seed: 89)
        let texts = ["2023-11-14T22:13:20Z", "2023-11-14T22:13:20.000Z", "2023-11-14T22:13:21Z", "2023-11-14 22:13:20+02:00",
                     "2023-11-14T22:13:20.123456789012345678Z", "", "x", "2023-11-14T22:13:20", "1970-01-01T00:00:00z",
                     "2023-11-14T22:13:20Z ", "9999-12-31T23:59:60.999-2359", "2023-02-30T00:00:00Z"]
        var cache = Timestamps.Cache()
        for _ in 0..<5_000 {
            let text = texts[Int(generator.nextByte()) % texts.count]
            #expect(cache.parse(text) == Timestamps.parse(text), "\(text)")
            var copy = text
            let reference = copy.withUTF8 { Timestamps.parse(utf8: $0) }
            #expect(copy.withUTF8 { cache.parse(utf8: $0) } == reference, "\(text)")
        }
    }

    /// `Names.name(fromParts:)` against `nameByEverySteps(fromParts:)`, one `Names` each fed the
    /// same parts: titles kept as they are, repeated (numbered), with spaces, controls, '/', '.',
    /// '..', non-ASCII in both forms, empty, in folders. Same names, same renamings.
    @Test func test_names_keptTitlesMatchEveryStep() {
        var generator = SplitMix(seed: 97)
        let titles = ["db01", "db01", "db01 (2)", "a", " a", "a ", "\ta", "a/b", "\u{1}x", "x\u{7F}", ".", "..", "...", "", "é", "e\u{301}",
                      "untitled", "Root", "名前", "a\u{85}", "~", "x.y"]
        var fast = ImportedNameCleaner.Names(), steps = ImportedNameCleaner.Names()
        for _ in 0..<5_000 {
            var parts = [titles[Int(generator.nextByte()) % titles.count]]
            if generator.nextByte() % 4 == 0 { parts.insert(titles[Int(generator.nextByte()) % titles.count], at: 0) }
            #expect(Array(fast.name(fromParts: parts).utf8) == Array(steps.nameByEverySteps(fromParts: parts).utf8), "\(parts)")
        }
        func described(_ names: ImportedNameCleaner.Names) -> [[[UInt8]]] {
            names.renamings.map { [Array($0.original.utf8), Array($0.name.utf8), Array($0.reasons.map(\.name).joined(separator: ",").utf8)] }
        }
        #expect(described(fast) == described(steps))
    }

    /// Bitwarden exports read in one pass into entries (`BitwardenJSONReader.entries`) against the
    /// reference (`BitwardenJSON.parseReference`: an `Export` read directly or decoded, then item by
    /// item): logins and notes, other types, folders before and after items, names with escapes,
    /// non-ASCII in both forms, '/', repeats and invalid ones, times repeated, escaped, invalid or
    /// null, URIs, custom fields with odd labels, card and identity, unknown members, repeated and
    /// escaped keys, encrypted exports, syntax errors. Same entries, renamings and errors.
    @Test func test_bitwardenEntries_matchTheReferenceParse() throws {
        var generator = SplitMix(seed: 101)
        func byte() -> UInt8 { generator.nextByte() }
        func pick(_ options: [String]) -> String { options[Int(byte()) % options.count] }
        let names = [#""db01""#, #""db01""#, #""a\/b""#, #""caf\u00e9""#, #""cafe\u0301""#, "\"e\u{301}\"", #"" x ""#, #""..""#, "null", #""""#,
                     #""line\nnext""#, #""名前""#, #""svc-1""#]
        let texts = [#""x""#, #""""#, "null", #""p\"q\\""#, "\"é\"", #""\ud83d\ude00""#, #""value-000001-abc""#]
        let times = [#""2023-11-14T22:13:20.000Z""#, #""2023-11-14T22:13:20.000Z""#, #""2024-01-02T03:04:05Z""#, #""not a time""#, "null",
                     #""2023-11-14T22:13:20\u002e000Z""#, "5"]
        let unknown = ["0", "true", "null", #""s""#, "{}", "[]", #"{"a":[1,{"b":null}]}"#, "1.5", #"{"a":1,"a":2}"#]
        func member(_ key: String, _ value: String) -> String { "\"\(key)\"" + pick([":", " : "]) + value }
        var taken = 0, parsed = 0
        for round in 0..<1_500 {
            var items: [String] = []
            for _ in 0..<Int(byte() % 6) {
                var members: [String] = []
                if byte() % 16 != 0 { members.append(member("type", pick(["1", "1", "1", "2", "2", "3", "4", "9", "1.0", "\"1\""]))) }
                if byte() % 8 != 0 { members.append(member("name", pick(names))) }
                if byte() % 3 == 0 { members.append(member("folderId", pick([#""f1""#, #""f2""#, #""nope""#, "null"]))) }
                if byte() % 3 == 0 { members.append(member("notes", pick(texts))) }
                if byte() % 4 != 0 { members.append(member("revisionDate", pick(times))) }
                if byte() % 4 != 0 { members.append(member("creationDate", pick(times))) }
                if byte() % 4 != 0 {
                    var login: [String] = []
                    for key in ["username", "password", "totp"] where byte() % 3 != 0 { login.append(member(key, pick(texts))) }
                    if byte() % 3 == 0 {
                        let uri = "{" + member("uri", pick(texts)) + (byte() % 2 == 0 ? "," + member("match", "null") : "") + "}"
                        login.append(member("uris", pick(["null", "[]", "[" + uri + "]", "[" + uri + "," + uri + "]", "[{}," + uri + "]"])))
                    }
                    if byte() % 6 == 0 { login.append(member("passwordRevisionDate", pick(unknown))) }
                    members.append(member("login", byte() % 8 == 0 ? "null" : "{" + login.joined(separator: ",") + "}"))
                }
                if byte() % 8 == 0 { members.append(member(pick(["card", "identity"]), pick(["null", "{}", #"{"number":"4111","brand":null}"#]))) }
                if byte() % 4 == 0 {
                    let field = "{" + [member("name", pick([#""PIN code""#, #""pin""#, "null", #""é""#, #""""#])), member("value", pick(texts)), member("type", "0")]
                        .joined(separator: ",") + "}"
                    members.append(member("fields", pick(["null", "[]", "[" + field + "]", "[" + field + "," + field + "]"])))
                }
                for _ in 0..<Int(byte() % 3) { members.append(member(pick(["id", "favorite", "reprompt", "collectionIds", "name", "t\\u0079pe"]), pick(unknown))) }
                items.append("{" + members.joined(separator: pick([",", ", "])) + "}")
            }
            var top: [String] = []
            let folders = member("folders", pick(["[]", "null", #"[{"id":"f1","name":"Work/Sub"},{"id":"f2","name":" Root "},{"id":"f1","name":"x"}]"#]))
            if byte() % 3 != 0 { top.append(folders) }
            if byte() % 3 == 0 { top.append(member("encrypted", pick(["false", "true", "null", "0"]))) }
            top.append(member("items", byte() % 20 == 0 ? "null" : "[" + items.joined(separator: ",") + "]"))
            if byte() % 5 == 0 { top.append(folders) }  // after the items, or twice
            if byte() % 4 == 0 { top.append(member("collections", pick(unknown))) }
            let bytes = Array(("{" + top.joined(separator: ",") + "}" + (round % 25 == 0 ? " x" : "")).utf8)
            func outcome(_ body: (inout ImportedNameCleaner.Names) throws(VaultError) -> [(String, Entry)]) -> String {
                var names = ImportedNameCleaner.Names()
                do {
                    let entries = try body(&names)
                    let renamings = names.renamings.map { "\(Array($0.original.utf8))>\(Array($0.name.utf8)):\($0.reasons.map(\.name))" }
                    return "\(entries.map { Array($0.0.utf8) })|\(entries.map(\.1.value))|\(entries.map { $0.1.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } })|\(entries.map { [$0.1.created, $0.1.modified] })|\(renamings)"
                } catch {
                    return "error: \(error.description)"
                }
            }
            let reference = outcome { (names) throws(VaultError) in try BitwardenJSON.parseReference(bytes, now: 42, names: &names) }
            if !reference.hasPrefix("error") { parsed += 1 }
            if BitwardenJSONReader.entries(bytes, now: 42, names: ImportedNameCleaner.Names()) != nil { taken += 1 }
            #expect(outcome { (names) throws(VaultError) in try BitwardenJSON.parse(bytes, now: 42, names: &names) } == reference,
                    "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(taken > 150, "\(taken) taken, \(parsed) parsed")
        // A real export (ids, nulls, nested members the schema skips, a card and an identity) gives the same entries.
        let fixture = Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("interchange/bitwarden.json")))
        var fast = ImportedNameCleaner.Names(), plain = ImportedNameCleaner.Names()
        let read = try BitwardenJSON.parse(fixture, now: 1, names: &fast), reference = try BitwardenJSON.parseReference(fixture, now: 1, names: &plain)
        #expect(read.map { Array($0.0.utf8) } == reference.map { Array($0.0.utf8) })
        #expect(read.map(\.1) == reference.map(\.1))
    }
}

extension InterchangeTests {
    /// An entry's ASCII keys matched by their bytes (`NativeJSONReader.member(ascii:)`) against the
    /// keys compared as strings: the seven, their prefixes and near misses, random keys of their letters.
    @Test func test_nativeJSONMember_bytesMatchTheText() {
        var generator = SplitMix(seed: 103)
        let known = ["name", "value", "value_base64", "created", "modified", "fields", "fields_base64"]
        var keys = known + known.flatMap { key in (0..<key.count).map { String(key.prefix($0)) } } + ["Name", "names", "valuE", "fields_base65", "created ", ""]
        let letters = Array("namevlu_bas64crtdofi")
        for _ in 0..<3_000 { keys.append(String((0..<Int(generator.nextByte() % 14)).map { _ in letters[Int(generator.nextByte()) % letters.count] })) }
        for key in keys {
            var text = key
            #expect(text.withUTF8 { NativeJSONReader.member(ascii: $0) } == NativeJSONReader.memberByText(key), "\(key)")
        }
    }
}
