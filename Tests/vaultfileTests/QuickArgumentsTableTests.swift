import ArgumentParser
import Foundation
import TestSupport
import Testing
@testable import vaultfile

/// The option tables (`OptionTable`) against swift-argument-parser's own account of each verb
/// (`--experimental-dump-help`): every long option and flag the parser knows is in the verb's
/// tables, of the same kind and repeatability, and the tables hold nothing the parser does not
/// know; and batch lines, read by their verbs' tables, read as ArgumentParser reads them.
@Suite struct QuickArgumentsTableTests {
    // MARK: - Helpers

    /// What ArgumentParser's JSON account of a command says it takes.
    private struct Account: Equatable {
        /// Its long options and flags (ArgumentParser's own --help and --version aside), by name without the dashes.
        var options: [String: OptionKind] = [:]
        /// The options that have only a short name (`-z`), which the quick reading never reads.
        var shortOnly: [String] = []
        /// Its positional arguments: how many are needed, and how many optional ones follow.
        var positionals = 0
        var optionalPositionals = 0
    }

    /// The account in `json` (ArgumentParser's ToolInfoV0: `command.arguments`, each with a kind,
    /// names, isOptional and isRepeating).
    private static func account(fromJSON json: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> Account {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any], sourceLocation: sourceLocation)
        let command = try #require(root["command"] as? [String: Any], sourceLocation: sourceLocation)
        var account = Account()
        for argument in command["arguments"] as? [[String: Any]] ?? [] {
            let names = (argument["names"] as? [[String: Any]] ?? []).map { ($0["kind"] as? String ?? "", $0["name"] as? String ?? "") }
            let repeating = argument["isRepeating"] as? Bool ?? false
            switch argument["kind"] as? String {
            case "positional":
                if argument["isOptional"] as? Bool ?? false { account.optionalPositionals += 1 } else { account.positionals += 1 }
            case let kind:
                guard let long = names.first(where: { $0.0 == "long" })?.1 else {
                    account.shortOnly += names.map(\.1)
                    continue
                }
                guard long != "help", long != "version" else { continue }
                account.options[long] = kind == "flag" ? .flag : repeating ? .repeatable : .option
            }
        }
        return account
    }

    /// The account `grammar` gives of a verb.
    private static func account(of grammar: QuickArguments.Grammar, shortOnly: [String] = []) -> Account {
        Account(options: grammar.options, shortOnly: shortOnly, positionals: grammar.positionals,
                optionalPositionals: grammar.optionalPositionals)
    }

    // MARK: - The verbs' tables

    /// Each hot verb's quick grammar (its tables and its groups' tables) and `batch`'s tables give
    /// the options, kinds and positional arguments that `vaultfile VERB --experimental-dump-help`
    /// lists, run as a user runs it.
    @Test func test_optionTables_matchEachVerbsDumpHelp() throws {
        let cli = try CLI()
        let verbs: [(verb: String, grammar: QuickArguments.Grammar, shortOnly: [String])] = [
            ("get", VaultfileCommand.Get.quickGrammar, []), ("show", VaultfileCommand.Get.quickGrammar, []),
            ("set", VaultfileCommand.Set.quickGrammar, []), ("list", VaultfileCommand.List.quickGrammar, []),
            ("ls", VaultfileCommand.Ls.quickGrammar, []), ("init", VaultfileCommand.Init.quickGrammar, []),
            ("rm", VaultfileCommand.Rm.quickGrammar, []), ("verify", VaultfileCommand.Verify.quickGrammar, []),
            ("import", VaultfileCommand.Import.quickGrammar, []),
            ("batch", VaultfileCommand.Batch.Table.grammar.adding(UnlockOptions.quickGrammar), ["z"]),
        ]
        for (verb, grammar, shortOnly) in verbs {
            let result = try cli.run([verb, "--experimental-dump-help"])
            #expect(result.status == 0, "\(verb): \(result.stderr)")
            let dumped = try Self.account(fromJSON: result.stdout)
            let tables = Self.account(of: grammar, shortOnly: shortOnly)
            let differing = dumped.options.filter { tables.options[$0.key] != $0.value }.map { "parser: --\($0.key) \($0.value)" }
                + tables.options.filter { dumped.options[$0.key] != $0.value }.map { "tables: --\($0.key) \($0.value)" }
            #expect(dumped == tables, "\(verb): \(differing.sorted()), positionals \(dumped.positionals)+\(dumped.optionalPositionals) against \(tables.positionals)+\(tables.optionalPositionals)")
            #expect(dumped.options.count > 10, "\(verb): the account lists the unlock options")
        }
    }

    /// The batch lines' verbs take the options of their grammars (made of the verbs' own tables),
    /// as ArgumentParser's account of each (`_dumpHelp()`, the JSON of `--experimental-dump-help`) lists them.
    @Test func test_optionTables_matchEachBatchLineVerbsDumpHelp() throws {
        let verbs: [(verb: any ParsableCommand.Type, grammar: QuickArguments.Grammar)] = [
            (BatchSet.self, BatchSet.quickGrammar), (BatchGet.self, BatchGet.quickGrammar), (BatchRm.self, BatchRm.quickGrammar),
            (BatchMv.self, BatchMv.quickGrammar), (BatchCp.self, BatchCp.quickGrammar), (BatchList.self, BatchList.quickGrammar),
        ]
        for (verb, grammar) in verbs {
            let dumped = try Self.account(fromJSON: Array(verb._dumpHelp().utf8))
            #expect(dumped == Self.account(of: grammar), "\(verb): ArgumentParser \(dumped) against the tables")
        }
        #expect(BatchScript.verbs == ["set", "get", "rm", "mv", "cp", "list"], "a batch verb without its row above")
    }

    /// The generator's defaults pass its checks, which its quick reading therefore runs only when
    /// an option they read is given (`GeneratorOptions.quick`).
    @Test func test_generatorQuick_defaultsPassValidate() {
        #expect(throws: Never.self) { try GeneratorOptions.parse([]) }
    }

    /// A table's `long` name is its raw value, which the grammar keys by.
    @Test func test_long_isTheTablesName() {
        #expect(VaultfileCommand.Set.Table.valueFile.rawValue == "value-file")
        #expect(VaultfileCommand.Set.quickGrammar.options["value-file"] == .option)
        #expect(KeySourceOptions.Table.identity.kind == .repeatable && VaultfileCommand.Get.quickGrammar.options["identity"] == .repeatable)
    }

    // MARK: - Batch lines

    /// The type ArgumentParser reads a line as, for a line the quick reading read as `command`.
    private static func parserType(of command: any BatchVerb) -> any BatchVerb.Type {
        command is BatchQuickSet ? BatchSet.self : type(of: command)
    }

    /// Whether the quick reading's `command` means what ArgumentParser's `parsed` does: wrapper by
    /// wrapper, or for a `BatchQuickSet` field by field against its `BatchSet` (no --value-file, no
    /// --generate, the generator's defaults).
    private static func sameReading(_ command: any BatchVerb, _ parsed: any ParsableCommand) -> Bool {
        guard let quick = command as? BatchQuickSet else { return QuickReading.values(of: command) == QuickReading.values(of: parsed) }
        guard let set = parsed as? BatchSet, let defaults = try? GeneratorOptions.parse([]) else { return false }
        return set.name == quick.name && set.field == quick.field && set.value == quick.value && set.valueFile == nil && !set.generate
            && set.formatCharacters.allowFormatCharacters == quick.allowFormatCharacters
            && QuickReading.values(of: set.generator) == QuickReading.values(of: defaults)
    }

    /// Plain batch lines are read by their verb's grammar (`BatchScript.quick`), each as
    /// ArgumentParser reads it (`BatchLine.parseAsRoot`), wrapper by wrapper.
    @Test func test_quick_readsPlainBatchLinesAsArgumentParserDoes() throws {
        let lines = [
            "set a --value x", "set a --value=x", "set a --field f --value x", "set a --value x --allow-format-characters",
            "set a --generate", "set a --generate --length 12 --charset hex", "set a --generate --words 4 --separator .",
            "set a --value-file f", "set 'a b' --value ''", "get a", "get a --field f", "get a --field=f", "rm a", "rm a --field f",
            "list", "list prod", "mv a b", "mv a b --force", "mv a b --allow-format-characters --force",
            "cp a b", "cp prod/ qa/ --force", "cp a b --allow-format-characters",
        ]
        var readAs: Swift.Set<String> = []
        for line in lines {
            let tokens = try BatchScript.tokenize(Substring(line))
            let quick = try #require(BatchScript.quick(tokens), "the quick reading declined \(line)")
            let parsed = try #require(try? BatchLine.parseAsRoot(tokens), "ArgumentParser refused \(line)")
            #expect(ObjectIdentifier(Self.parserType(of: quick)) == ObjectIdentifier(type(of: parsed)), "\(line)")
            #expect(Self.sameReading(quick, parsed), "\(line)")
            readAs.insert("\(type(of: quick))")
        }
        #expect(readAs == ["BatchQuickSet", "BatchSet", "BatchGet", "BatchRm", "BatchMv", "BatchCp", "BatchList"], "\(readAs)")
    }

    /// Random batch lines from the options of every batch verb, good and bad values, repeats and
    /// stray words: whatever the quick reading takes, ArgumentParser reads the same way.
    @Test func test_quick_randomBatchLinesAgreeWithArgumentParser() throws {
        let pieces = QuickReading.Pieces(
            pairs: [["--value", "x"], ["--value", ""], ["--value=y"], ["--value", "-v"], ["--field", "f"], ["--field", ""], ["--field="],
                    ["--value-file", "vf"], ["--length", "12"], ["--length", "0"], ["--length", "+3"], ["--charset", "hex"], ["--charset", "nope"],
                    ["--words", "4"], ["--words", "65"], ["--separator", "."], ["--generate"], ["--allow-format-characters"], ["--force"]],
            singles: ["help", "-", "--", "-x", "-h", "--help", "--generate=1", "--dry-run", "--vault", "--json", "--value"],
            names: ["a", "db/password", "help", "", " ", "é/ü"], nameCounts: [0, 1, 1, 1, 2, 2, 3])
        var generator = SplitMix(seed: 0xBA7C)
        var taken = 0
        for _ in 0..<400 {
            let line = pieces.line(BatchScript.verbs.randomElement(using: &generator)!, using: &generator)
            guard let quick = BatchScript.quick(line) else { continue }
            taken += 1
            // By the verb's own type, as QuickReading's random lines: a debug ArgumentParser checks the
            // whole tree on every parse from the root; the root's choice of verb is the test above.
            guard let parsed = try? Self.parserType(of: quick).parse(Array(line.dropFirst())) else {
                Issue.record("the quick reading took \(line), which ArgumentParser refuses")
                continue
            }
            #expect(ObjectIdentifier(Self.parserType(of: quick)) == ObjectIdentifier(type(of: parsed)), "\(line)")
            #expect(Self.sameReading(quick, parsed), "\(line)")
        }
        #expect(taken > 20, "the random lines exercised the quick reading (\(taken) taken)")
    }
}
