import Foundation

// MARK: - Paths

/// Where the project and its neighbours are, found from this file's own path.
public enum ProjectPaths {
    /// The package root (the folder holding Package.swift).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Fixtures/` in the package.
    public static let fixtures: URL = root.appendingPathComponent("Fixtures")

    /// `../shared/vectors/` beside the project, present in a full checkout and in CI.
    public static let sharedVectors: URL = root.deletingLastPathComponent()
        .appendingPathComponent("shared/vectors")
}

// MARK: - External test vectors

/// Loads the Wycheproof files from `../shared/vectors/wycheproof/`.
public enum Wycheproof {
    /// Whether the shared vectors are present; tests that need them are skipped, with a message, when not.
    public static var available: Bool {
        FileManager.default.fileExists(atPath: ProjectPaths.sharedVectors.appendingPathComponent("wycheproof").path)
    }

    /// One vector file: its declared count and its tests, each flattened with its group's fields.
    public struct File {
        /// `numberOfTests` as the file declares it.
        public let numberOfTests: Int
        /// Every test, with its group's keys (such as `ivSize`) merged in.
        public let tests: [[String: Any]]
    }

    /// Reads `name` (e.g. `"pbkdf2_hmacsha256_test.json"`).
    public static func load(_ name: String) throws -> File {
        let url = ProjectPaths.sharedVectors.appendingPathComponent("wycheproof").appendingPathComponent(name)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let root = object as? [String: Any], let count = root["numberOfTests"] as? Int,
              let groups = root["testGroups"] as? [[String: Any]] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var tests: [[String: Any]] = []
        for group in groups {
            for case var test as [String: Any] in (group["tests"] as? [Any] ?? []) {
                for (key, value) in group where key != "tests" { test[key] = value }
                tests.append(test)
            }
        }
        return File(numberOfTests: count, tests: tests)
    }
}

// MARK: - Hex

/// Hexadecimal helpers for vectors and fixtures.
public enum Hex {
    /// Decodes a hex string; traps on malformed input (test data is trusted).
    public static func decode(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        precondition(digits.count % 2 == 0, "odd hex length")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// Encodes bytes as lowercase hex.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

// MARK: - Temporary directories

/// A fresh directory under the system's temporary folder, removed on `remove()`.
public struct TemporaryDirectory {
    /// The directory's URL.
    public let url: URL

    /// Creates a new, empty, private (0700) directory.
    public init() throws {
        let base = FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("vaultfile-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Deletes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: url) }
}
