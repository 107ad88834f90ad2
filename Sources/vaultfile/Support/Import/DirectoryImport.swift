import VaultInterchange
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Stores that are folders (import --format pass DIR)

/// A reader of a folder given to `import` (pass and passage stores): it finds the store's files,
/// decrypts each with the user's own tool (gpg, age: the spawning lives here, in the CLI), and
/// hands the decrypted files to its library parser, which returns the items. The one builder
/// (`ForeignImport.entries`) names and fills the entries, as for every other source.
///
/// A reader joins by adding its type to `DirectoryImportReaders.all`.
protocol DirectoryImportReader {
    /// The `--format` names it reads ("pass", "passage").
    static var formats: [String] { get }
    /// The format of the store at `directory` when it is one this reader reads (a `.gpg-id` file
    /// for pass, `.age-recipients` for passage): `import --format auto DIR`.
    static func recognize(directory: String) -> String?
    /// The items of the store at `directory`, read as `format`.
    static func read(directory: String, format: String) throws -> ForeignImport
}

/// Every reader of folders.
enum DirectoryImportReaders {
    /// The readers; issue 44's pass/passage reader adds itself here.
    static var all: [any DirectoryImportReader.Type] { [CryptImport.StoreReader.self] }

    /// The reader of `format`, if any reads folders.
    static func reader(for format: String) -> (any DirectoryImportReader.Type)? {
        all.first { $0.formats.contains(format) }
    }

    /// The format of the store at `directory`, when a reader recognizes it.
    static func recognize(directory: String) -> String? {
        for reader in all { if let format = reader.recognize(directory: directory) { return format } }
        return nil
    }

    /// Whether `path` names a directory (following links, as opening it would). Calls `stat(2)`.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
