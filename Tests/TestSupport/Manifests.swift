import Foundation

// MARK: - The damaged corpus

/// `Fixtures/damaged/`: one small, wrong vault file per case, and `manifest.json` saying how
/// the CLI must end on each (exit status, a piece of the message). The library and the CLI
/// tests read the same manifest through these types.
public enum DamagedCorpus {
    /// One damaged (or, for status 0, intact) vault file and what opening it must give.
    public struct Case: Codable, Sendable {
        /// The file's name in `Fixtures/damaged/`.
        public var file: String
        /// What is wrong with it, for people.
        public var description: String
        /// The CLI's exit status: 0 (opens), 3 (wrong password), 4 (damaged), 6 (over a limit).
        public var expectStatus: Int32
        /// Text the error message must contain (empty for status 0).
        public var expectMessage: String
        /// `get`'s exit status where it differs from `verify`'s (`expectStatus`): `get` never reads
        /// the history section of a format 1.2 vault (docs/FORMAT.md §7.1), so damage there fails
        /// `verify` and every write, while `get` still reads the entries. Absent: the same status.
        public var expectStatusGet: Int32?

        /// A case as the corpus writer records it.
        public init(file: String, description: String, expectStatus: Int32, expectMessage: String, expectStatusGet: Int32? = nil) {
            self.file = file
            self.description = description
            self.expectStatus = expectStatus
            self.expectMessage = expectMessage
            self.expectStatusGet = expectStatusGet
        }

        /// The exit status of `get`, which reads the entries only.
        public var statusOfGet: Int32 { expectStatusGet ?? expectStatus }
    }

    /// `manifest.json`: the password of every case, the canary entry the intact ones hold, the cases.
    public struct Manifest: Codable, Sendable {
        /// The password every case was sealed with.
        public var password: String
        /// The entry every intact case holds.
        public var canaryName: String
        /// Its value, which no failure may ever print.
        public var canaryValue: String
        /// Every case, in the order they were written.
        public var cases: [Case]

        /// A manifest as the corpus writer records it.
        public init(password: String, canaryName: String, canaryValue: String, cases: [Case]) {
            self.password = password
            self.canaryName = canaryName
            self.canaryValue = canaryValue
            self.cases = cases
        }
    }

    /// `Fixtures/damaged/`.
    public static let folder: URL = ProjectPaths.fixtures.appendingPathComponent("damaged")

    /// The committed manifest, or nil when it is missing or unreadable (the tests then fail on the count).
    public static let manifest: Manifest? = try? JSONDecoder().decode(
        Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))

    /// The bytes of a case's file.
    public static func bytes(of item: Case) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(item.file)))
    }
}

// MARK: - The format fixtures

/// `Fixtures/<version>/manifest.json`: the golden vaults of one released format version and
/// the exact contents each must open to (docs/FORMAT.md §10).
public struct FixtureManifest: Codable, Sendable {
    /// One golden vault file: its password, its KDF as `KDFParameters.description` prints it, its entries.
    public struct Fixture: Codable, Sendable {
        public var file: String
        public var password: String
        public var kdf: String
        public var entries: [FixtureEntry]

        /// A fixture as the fixture writer records it.
        public init(file: String, password: String, kdf: String, entries: [FixtureEntry]) {
            self.file = file
            self.password = password
            self.kdf = kdf
            self.entries = entries
        }
    }

    /// One entry of a fixture, values and fields in hex.
    public struct FixtureEntry: Codable, Equatable, Sendable {
        public var name: String
        /// The value in hex, for values up to 1 KiB.
        public var valueHex: String?
        /// Larger values: their length and the SplitMix64 seed that generates them (see `SplitMix`).
        public var valueLength: Int?
        public var valueSplitMixSeed: UInt64?
        public var fields: [String: String]
        public var created: Int64
        public var modified: Int64

        /// An entry as the fixture writer records it.
        public init(name: String, valueHex: String?, valueLength: Int?, valueSplitMixSeed: UInt64?,
                    fields: [String: String], created: Int64, modified: Int64) {
            self.name = name
            self.valueHex = valueHex
            self.valueLength = valueLength
            self.valueSplitMixSeed = valueSplitMixSeed
            self.fields = fields
            self.created = created
            self.modified = modified
        }
    }

    /// The format version, e.g. "1.0".
    public var formatVersion: String
    /// Every golden vault of the version.
    public var fixtures: [Fixture]

    /// A manifest as the fixture writer records it.
    public init(formatVersion: String, fixtures: [Fixture]) {
        self.formatVersion = formatVersion
        self.fixtures = fixtures
    }

    /// `Fixtures/<version>/`.
    public static func folder(_ version: String) -> URL { ProjectPaths.fixtures.appendingPathComponent(version) }

    /// Reads `Fixtures/<version>/manifest.json`.
    public static func load(_ version: String) throws -> FixtureManifest {
        try JSONDecoder().decode(FixtureManifest.self, from: Data(contentsOf: folder(version).appendingPathComponent("manifest.json")))
    }
}

// MARK: - Reproducible bytes

/// SplitMix64: a tiny seeded generator, so fixture contents and test data are reproducible
/// (the large fixture values are `SplitMix(seed: 42)`, docs/FORMAT.md §10).
public struct SplitMix {
    /// The generator's state.
    public var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next byte: the low byte of the next SplitMix64 output.
    public mutating func nextByte() -> UInt8 {
        UInt8(truncatingIfNeeded: next())
    }
}

extension SplitMix: RandomNumberGenerator {
    /// The next SplitMix64 output, for `randomElement(using:)` and the like in tests that must replay.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`: the next output modulo `bound`.
    public mutating func next(upTo bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
